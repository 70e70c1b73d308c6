import Crypto
import Foundation
import RampartCore

/// The drive's local store of encrypted file blocks, manifests, thumbnails and sealed node names.
///
/// Trust-model rows: **encrypted file blocks (low)**, **database (nodes, revisions, blocks,
/// thumbnails) — critical** and **cleartext files (during preview or upload) — critical**.
///
/// - A file is split into blocks (4 MiB by default) in the drive's one block format,
///   ``DriveBlockFormat`` (the format the client also uploads to the server): each block is
///   sealed with AES-256-GCM under a random per-file content key, with associated data binding
///   user, file id, block index and block count — a block cannot be reordered, dropped or moved
///   to another file.
/// - The SHA-256 of every sealed block is listed in a `DriveManifest` authenticated with
///   HMAC-SHA256 under a MainKey sub-key; the content key is wrapped by another MainKey sub-key
///   and the node name sealed under a third.
/// - Import and export stream block by block (`read`/`write` of one block at a time): memory
///   stays flat whatever the file size.
/// - Export verifies the manifest and every block before the cleartext is released: it writes
///   to a 0600 temporary file, and renames it into place only once the last block verified;
///   on any error the temporary file is removed.
/// - Import writes into a staging folder renamed into place at the end: an interrupted import
///   leaves no half-stored file.
public final class DriveBlockStore: CleartextLeasing, @unchecked Sendable {
    /// Tunables of the block store.
    public struct Configuration: Sendable {
        /// Plaintext bytes per block (default 4 MiB).
        public var blockSize: Int
        /// The largest file accepted (default 16 GiB).
        public var maxFileBytes: Int64

        public init(blockSize: Int = 4 << 20, maxFileBytes: Int64 = 16 << 30) {
            precondition(blockSize > 0 && blockSize <= 64 << 20, "blockSize must be 1 byte ... 64 MiB")
            self.blockSize = blockSize
            self.maxFileBytes = maxFileBytes
        }
    }

    public var userID: UserID { space.userID }
    public let configuration: Configuration
    /// The folder holding one sub-folder per stored file.
    public var folder: URL { space.folder }
    private let space: VaultSpace

    /// Opens (or creates) the store in `folder`, removing interrupted imports.
    /// - Throws: ``FileVaultError``.
    public init(folder: URL, provider: any MainKeyProvider, previews: PreviewArea,
                configuration: Configuration = Configuration(), writeBudget: WriteBudget? = nil) throws {
        space = try VaultSpace(folder: folder, provider: provider, previews: previews, budget: writeBudget)
        self.configuration = configuration
        if let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) {
            for name in names where name.hasPrefix(".staging-") {
                VaultDisk.remove(folder.appendingPathComponent(name))
            }
        }
    }

    // MARK: Layout

    func fileFolder(_ id: DriveFileID) -> URL { folder.appendingPathComponent(id.rawValue) }
    func manifestURL(_ id: DriveFileID) -> URL { fileFolder(id).appendingPathComponent("manifest") }
    func thumbnailURL(_ id: DriveFileID) -> URL { fileFolder(id).appendingPathComponent("thumbnail") }
    func blockURL(_ id: DriveFileID, _ index: Int) -> URL {
        fileFolder(id).appendingPathComponent("blocks").appendingPathComponent(String(index))
    }

    // MARK: Import (upload side)

    /// Encrypts the file at `source` into the store, one block at a time.
    ///
    /// - Parameters:
    ///   - source: the cleartext file (for example inside an upload's ``CleartextLease``).
    ///   - name: the node name; stored sealed.
    ///   - thumbnail: an optional thumbnail; stored sealed with the content key.
    ///   - id: the file id (default: a fresh random one). An existing file with this id is replaced.
    /// - Returns: the file id.
    /// - Throws: ``FileVaultError/fileTooLarge(size:limit:)`` (nothing written),
    ///   ``FileVaultError/diskFull(path:)``, ``FileVaultError/sourceChanged(path:)``,
    ///   ``FileVaultError/locked`` — in every case nothing of the import stays on disk.
    @discardableResult
    public func upload(from source: URL, name: String, thumbnail: Data? = nil,
                           id: DriveFileID = .random()) throws -> DriveFileID {
        let input = try VaultInputFile(reading: source)
        guard input.size <= configuration.maxFileBytes else {
            throw FileVaultError.fileTooLarge(size: input.size, limit: configuration.maxFileBytes)
        }
        let blockSize = configuration.blockSize
        let format = DriveBlockFormat(user: userID.rawValue, fileID: id, blockSize: blockSize, plaintextLength: input.size)
        let blockCount = format.blockCount
        let staging = folder.appendingPathComponent(".staging-\(UUID().uuidString)")
        do {
            try VaultDisk.privateDirectory(staging)
            try VaultDisk.privateDirectory(staging.appendingPathComponent("blocks"))
            let contentKey = SecretBytes(randomCount: 32)
            defer { contentKey.wipe() }
            var hashes: [Data] = []
            hashes.reserveCapacity(blockCount)
            var thumbnailHash: Data?
            try contentKey.withSymmetricKey { key in
                for index in 0..<blockCount {
                    let expected = format.plaintextCount(ofBlock: index)
                    let plain = try input.read(upTo: expected)
                    guard plain.count == expected else { throw FileVaultError.sourceChanged(path: source.path) }
                    let sealed = try format.seal(plain, index: index, key: key)
                    hashes.append(DriveBlockFormat.hash(sealed))
                    let output = try VaultOutputFile(creating: staging.appendingPathComponent("blocks/\(index)"), budget: space.budget)
                    do {
                        try output.write(sealed)
                        try output.finish(sync: false)  // synced below, after the last block
                    } catch {
                        output.abandon()
                        throw error
                    }
                }
                guard try input.read(upTo: 1).isEmpty else { throw FileVaultError.sourceChanged(path: source.path) }
                for index in 0..<blockCount {
                    try VaultDisk.sync(staging.appendingPathComponent("blocks/\(index)"))
                }
                if let thumbnail {
                    let sealed = try SmallSeal.seal(thumbnail, key: key, ad: thumbnailAD(id))
                    thumbnailHash = Data(SHA256.hash(data: sealed))
                    try VaultDisk.writeSmallFile(sealed, to: staging.appendingPathComponent("thumbnail"), budget: space.budget)
                }
            }
            let wrapped = try VaultKeys.with(space.provider, VaultKeys.driveContentKeyWrap(userID)) { wrapKey in
                try contentKey.withUnsafeBytes { bytes in
                    try SmallSeal.seal(bytes, key: wrapKey, ad: contentKeyAD(id))
                }
            }
            let sealedName = try VaultKeys.with(space.provider, VaultKeys.driveNodeName(userID)) { key in
                try SmallSeal.seal(Data(name.utf8), key: key, ad: nameAD(id))
            }
            let manifest = DriveManifest(fileID: id.rawValue, blockSize: blockSize, plaintextLength: input.size,
                                         blockHashes: hashes, wrappedContentKey: wrapped, sealedName: sealedName,
                                         thumbnailHash: thumbnailHash)
            let encoded = try VaultKeys.with(space.provider, VaultKeys.driveManifest(userID)) { key in
                try manifest.encoded(user: userID, fileID: id, key: key)
            }
            try VaultDisk.writeSmallFile(encoded, to: staging.appendingPathComponent("manifest"), budget: space.budget)
            PrivateFiles.syncDirectory(staging.appendingPathComponent("blocks"))
            VaultDisk.remove(fileFolder(id))
            try VaultDisk.rename(staging, to: fileFolder(id))
        } catch {
            VaultDisk.remove(staging)
            throw FileVaultError.wrap(error)
        }
        return id
    }

    // MARK: Export (download / preview side)

    /// Verifies and decrypts a stored file to `destination`.
    ///
    /// The manifest is authenticated first; each block must exist, match its hash in the
    /// manifest and authenticate under its index. The cleartext goes to a 0600 temporary file
    /// beside `destination`, renamed into place only after the last block verified.
    /// - Throws: ``FileVaultError/fileNotFound(file:)``, ``FileVaultError/manifestTampered(file:)``,
    ///   ``FileVaultError/missingBlock(file:index:)``, ``FileVaultError/blockTampered(file:index:)``,
    ///   ``FileVaultError/diskFull(path:)``, ``FileVaultError/locked`` — with no file left at
    ///   `destination` or beside it.
    public func download(_ id: DriveFileID, to destination: URL) throws {
        let manifest = try readManifest(id)
        try VaultOutputFile.publish(to: destination, partialName: ".\(destination.lastPathComponent).\(UUID().uuidString).partial",
                                    budget: space.budget) { output in
            let contentKey = try unwrapContentKey(manifest, id: id)
            defer { contentKey.wipe() }
            try contentKey.withSymmetricKey { key in
                for index in 0..<manifest.blockCount {
                    try output.write(try openBlock(id, index: index, manifest: manifest, key: key))
                }
            }
        }
    }

    /// Verifies every block of a stored file without writing any cleartext.
    /// - Throws: as ``download(_:to:)``.
    public func verify(_ id: DriveFileID) throws {
        let manifest = try readManifest(id)
        let contentKey = try unwrapContentKey(manifest, id: id)
        defer { contentKey.wipe() }
        try contentKey.withSymmetricKey { key in
            for index in 0..<manifest.blockCount {
                _ = try openBlock(id, index: index, manifest: manifest, key: key)
            }
        }
    }

    /// Decrypts the file into a new ``CleartextLease`` (a preview).
    public func lease(_ id: DriveFileID) throws -> CleartextLease {
        let fileName = try name(of: id)
        return try space.previews.lease(fileName: fileName) { url in try download(id, to: url) }
    }

    /// The node name, unsealed.
    /// - Throws: ``FileVaultError/manifestTampered(file:)`` if it fails authentication.
    public func name(of id: DriveFileID) throws -> String {
        let manifest = try readManifest(id)
        let plain = try VaultKeys.with(space.provider, VaultKeys.driveNodeName(userID)) { key in
            SmallSeal.open(manifest.sealedName, key: key, ad: nameAD(id))
        }
        guard let plain, let name = String(data: plain, encoding: .utf8) else {
            throw FileVaultError.manifestTampered(file: id.rawValue)
        }
        return name
    }

    /// The thumbnail, verified against the manifest and unsealed; `nil` if the file has none.
    /// - Throws: ``FileVaultError/thumbnailTampered(file:)``.
    public func thumbnail(of id: DriveFileID) throws -> Data? {
        let manifest = try readManifest(id)
        guard let expected = manifest.thumbnailHash else { return nil }
        guard let sealed = try VaultDisk.readSmallFile(thumbnailURL(id)),
              Data(SHA256.hash(data: sealed)) == expected else {
            throw FileVaultError.thumbnailTampered(file: id.rawValue)
        }
        let contentKey = try unwrapContentKey(manifest, id: id)
        defer { contentKey.wipe() }
        guard let plain = try contentKey.withSymmetricKey({ SmallSeal.open(sealed, key: $0, ad: thumbnailAD(id)) }) else {
            throw FileVaultError.thumbnailTampered(file: id.rawValue)
        }
        return plain
    }

    /// The ids of the stored files.
    public func fileIDs() -> [DriveFileID] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasPrefix(".") && $0 != "CACHEDIR.TAG" }.compactMap { try? DriveFileID($0) }.sorted { $0.rawValue < $1.rawValue }
    }

    /// Removes one stored file.
    public func remove(_ id: DriveFileID) {
        VaultDisk.remove(fileFolder(id))
        PrivateFiles.syncDirectory(folder)
    }

    /// Removes every stored file (logout, wipe).
    public func purgeAll() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for name in names where name != "CACHEDIR.TAG" { VaultDisk.remove(folder.appendingPathComponent(name)) }
        PrivateFiles.syncDirectory(folder)
    }

    // MARK: Internals

    private func readManifest(_ id: DriveFileID) throws -> DriveManifest {
        guard let data = try VaultDisk.readSmallFile(manifestURL(id)) else {
            throw FileVaultError.fileNotFound(file: id.rawValue)
        }
        return try VaultKeys.with(space.provider, VaultKeys.driveManifest(userID)) { key in
            try DriveManifest.decode(data, user: userID, fileID: id, key: key)
        }
    }

    private func unwrapContentKey(_ manifest: DriveManifest, id: DriveFileID) throws -> SecretBytes {
        let opened = try VaultKeys.with(space.provider, VaultKeys.driveContentKeyWrap(userID)) { key in
            SmallSeal.open(manifest.wrappedContentKey, key: key, ad: contentKeyAD(id))
        }
        guard var plain = opened, plain.count == 32 else { throw FileVaultError.manifestTampered(file: id.rawValue) }
        let secret = SecretBytes(copying: plain)
        plain.withUnsafeMutableBytes { SecretBytes.zeroize($0) }
        return secret
    }

    private func openBlock(_ id: DriveFileID, index: Int, manifest: DriveManifest, key: SymmetricKey) throws -> Data {
        let url = blockURL(id, index)
        guard VaultDisk.exists(url) else { throw FileVaultError.missingBlock(file: id.rawValue, index: index) }
        let format = DriveBlockFormat(user: userID.rawValue, fileID: id, blockSize: manifest.blockSize,
                                      plaintextLength: manifest.plaintextLength)
        let expectedSize = format.sealedCount(ofBlock: index)
        let input = try VaultInputFile(reading: url)
        guard input.size == Int64(expectedSize) else { throw FileVaultError.blockTampered(file: id.rawValue, index: index) }
        let sealed = try input.read(upTo: expectedSize)
        guard let plain = format.open(sealed, index: index, expectedHash: manifest.blockHashes[index], key: key)
        else { throw FileVaultError.blockTampered(file: id.rawValue, index: index) }
        return plain
    }

    /// `AD(label, user, file id)`: binds a thumbnail, wrapped key or name to its user and file.
    private func fileAD(_ label: String, _ id: DriveFileID) -> AssociatedData {
        var ad = AssociatedData(label)
        ad.append(userID.rawValue)
        ad.append(id.rawValue)
        return ad
    }

    private func thumbnailAD(_ id: DriveFileID) -> AssociatedData { fileAD("rampart.filevault.drive.thumbnail.v1", id) }
    private func contentKeyAD(_ id: DriveFileID) -> AssociatedData { fileAD("rampart.filevault.drive.contentkey.v1", id) }
    private func nameAD(_ id: DriveFileID) -> AssociatedData { fileAD("rampart.filevault.drive.nodename.v1", id) }
}
