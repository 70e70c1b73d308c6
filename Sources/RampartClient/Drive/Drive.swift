import Crypto
import FileVault
import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
import SealedStore

/// A drive file as listed, its name opened in memory (trust-model row **database (nodes…),
/// critical**: names are never stored or sent in clear).
public struct DriveEntry: Sendable, Equatable {
    public var id: String
    public var name: String
    public var size: Int64
    public var modified: Int64
    public var isFolder: Bool
}

/// What a drive node's `sealedName` holds (node metadata format 3): the file's name and type,
/// the revision's content key and the manifest of its blocks in FileVault's
/// ``DriveBlockFormat`` — file id, block size, cleartext length and the digest of the SHA-256 of
/// every sealed block, in order (``DriveBlockFormat/listDigest(_:)``: the server limits the
/// metadata to 4 KiB, so a list of hashes would cap the file size).
///
/// On the wire: an OpenPGP message to the user's own key (``MailPart``, bound to
/// `drive/<node id>` and part `node`) of `"RDN3" ‖ u32 BE length ‖ JSON ‖ detached signature`.
/// The detached OpenPGP signature is the uploader's address key's over
/// `"rampart.drive.node.v3" ‖ 0 ‖ user id ‖ 0 ‖ node id ‖ 0 ‖ revision id ‖ 0 ‖ JSON`: anyone
/// holding the public key — the server — could encrypt a node of its own, but not sign it, and
/// metadata moved to another node or revision does not verify there.
struct DriveNodeManifest: Codable {
    static let magic = Data("RDN3".utf8)
    static let part = "node"
    var version = 3
    var name: String
    var mimeType: String
    /// base64 of the revision's 32-byte content key (a new random key for every upload).
    var key: String
    /// The ``DriveFileID`` bound into every block's associated data.
    var fileId: String
    var size: Int64
    var blockSize: Int
    /// Lower-case hex of ``DriveBlockFormat/listDigest(_:)`` over the sealed blocks.
    var blocksDigest: String

    /// The block format this manifest describes. - Throws: ``ClientError/tampered(_:)``.
    func format(user: String) throws -> DriveBlockFormat {
        guard let id = try? DriveFileID(fileId), blockSize > 0, blockSize <= 64 << 20, size >= 0,
              DriveClient.bytes(hex: blocksDigest)?.count == SHA256.byteCount
        else { throw ClientError.tampered("The manifest of drive file \(name)") }
        return DriveBlockFormat(user: user, fileID: id, blockSize: blockSize, plaintextLength: size)
    }

    static func signedData(user: String, nodeID: String, revisionID: String, body: Data) -> Data {
        Data("rampart.drive.node.v3\u{0}\(user)\u{0}\(nodeID)\u{0}\(revisionID)\u{0}".utf8) + body
    }

    static func binding(_ nodeID: String) -> String { "drive/\(nodeID)" }

    /// The node's `sealedName`: signed by `key`, encrypted to its public key.
    func sealed(user: String, nodeID: String, revisionID: String, key: PGPPrivateKey) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var body = try encoder.encode(self)
        defer { body.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        let signature = try OpenPGP.detachedSignature(for: Self.signedData(user: user, nodeID: nodeID, revisionID: revisionID, body: body),
                                                      with: key)
        var length = UInt32(body.count).bigEndian
        var plain = Self.magic + withUnsafeBytes(of: &length) { Data($0) } + body + signature
        defer { plain.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        return try MailPart.seal(plain, to: [key.publicKey], signedBy: nil, messageID: Self.binding(nodeID), part: Self.part)
    }

    /// Decrypts, verifies and decodes what ``sealed(user:nodeID:revisionID:key:)`` made for this
    /// node and revision.
    /// - Throws: ``ClientError/tampered(_:)`` (a forged, modified or moved manifest, or one in the
    ///   format of an older Rampart — upload such a file again).
    static func open(_ sealed: Data, user: String, key: PGPPrivateKey, nodeID: String, revisionID: String) throws -> DriveNodeManifest {
        let what = "The metadata of drive node \(nodeID)"
        var opened: PGPDecrypted
        do { opened = try MailPart.open(sealed, with: [key], messageID: binding(nodeID), part: part) } catch {
            throw ClientError.tampered("\(what) (it does not open for this node; an older drive format must be uploaded again)")
        }
        defer { opened.data.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        let data = opened.data
        guard data.count > 8, data.prefix(4) == magic else { throw ClientError.tampered(what) }
        let length = data.dropFirst(4).prefix(4).reduce(0) { $0 << 8 | Int($1) }
        guard length > 0, data.count > 8 + length else { throw ClientError.tampered(what) }
        let body = data.subdata(in: (data.startIndex + 8)..<(data.startIndex + 8 + length))
        let signature = data.subdata(in: (data.startIndex + 8 + length)..<data.endIndex)
        let status: PGPSignatureStatus
        do {
            status = try OpenPGP.verifyDetached(signedData(user: user, nodeID: nodeID, revisionID: revisionID, body: body),
                                                signature: signature, against: [key.publicKey])
        } catch { throw ClientError.tampered("\(what) (its signature is unreadable)") }
        guard case .verified(let signer) = status, signer == key.fingerprint else {
            throw ClientError.tampered("\(what) (not signed by your key for this node and revision)")
        }
        guard let manifest = try? JSONDecoder().decode(DriveNodeManifest.self, from: body), manifest.version == 3 else {
            throw ClientError.tampered(what)
        }
        return manifest
    }
}

/// Drive upload, download and listing, encrypted client-side in FileVault's block format
/// (`DriveBlockFormat`, the format of the local `DriveBlockStore` too).
///
/// Trust-model rows **encrypted file blocks (low)** — the server only ever receives blocks
/// sealed with a random content key per upload (per revision), bound to the user, the file,
/// their index and the block count; **database (nodes…, critical)** — the file's name, key and
/// block manifest travel encrypted to the user's own OpenPGP key and signed by it over the user,
/// node and revision ids (`DriveNodeManifest`), and the
/// local copy of the node is kept in the sealed store; **cleartext files (critical)** — cleartext
/// exists only in the source file and the destination the user chose; a download is written to
/// a 0600 partial file renamed into place only after the last block verified.
///
/// Upload and download hold one block at a time: memory stays flat whatever the file size.
public struct DriveClient: Sendable {
    public let account: ClientAccount
    /// 1 MiB blocks (the server accepts up to 4 MiB).
    public var blockSize = 1 << 20

    public init(account: ClientAccount) { self.account = account }

    /// Encrypts and uploads `file` into `folder` (a folder node's id; nil: the root folder);
    /// returns the new node.
    public func upload(_ file: URL, into folder: String? = nil, api: APIClient, progress: ProgressHandler? = nil) async throws -> DriveEntry {
        let handle: FileHandle
        do { handle = try FileHandle(forReadingFrom: file) } catch {
            throw ClientError.file("Cannot read \(file.path): \(error.localizedDescription)")
        }
        defer { try? handle.close() }
        let size = Int64((try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)??.int64Value ?? 0)
        let session = try account.session()
        let keys = try account.mailboxKey()
        let format = DriveBlockFormat(user: session.serverUserID, fileID: .random(), blockSize: blockSize, plaintextLength: size)
        let contentKey = SecretBytes(randomCount: 32)
        defer { contentKey.wipe() }
        let phase = "upload \(file.lastPathComponent)"
        var blockIDs: [String] = []
        var hashes = SHA256()
        var sent: Int64 = 0
        progress?(TransferProgress(phase: phase, done: 0, total: size))
        for index in 0..<format.blockCount {
            var chunk = (try? handle.read(upToCount: format.plaintextCount(ofBlock: index))) ?? Data()
            defer { chunk.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
            guard chunk.count == format.plaintextCount(ofBlock: index) else {
                throw ClientError.file("\(file.path) changed while it was being uploaded; upload it again.")
            }
            let sealed = try contentKey.withSymmetricKey { try format.seal(chunk, index: index, key: $0) }
            let stored = try await api.uploadBlock(sealed)
            let hash = DriveBlockFormat.hash(sealed)
            let expected = Self.hex(hash)
            if stored.sha256.lowercased() != expected && Data(base64Encoded: stored.sha256) != hash {
                throw ClientError.tampered("The server's receipt for block \(index)")
            }
            blockIDs.append(stored.blockId)
            hashes.update(data: hash)
            sent += Int64(chunk.count)
            progress?(TransferProgress(phase: phase, done: sent, total: size))
        }
        if let extra = try? handle.read(upToCount: 1), !extra.isEmpty {
            throw ClientError.file("\(file.path) changed while it was being uploaded; upload it again.")
        }
        let manifest = DriveNodeManifest(name: file.lastPathComponent, mimeType: Self.mimeType(file.pathExtension),
                                         key: try contentKey.withUnsafeBytes { Data($0).base64EncodedString() },
                                         fileId: format.fileID.rawValue, size: size, blockSize: blockSize,
                                         blocksDigest: Self.hex(Data(hashes.finalize())))
        let nodeID = DriveNodeRequest.newID("n"), revisionID = DriveNodeRequest.newID("r")
        let sealedName = try manifest.sealed(user: session.serverUserID, nodeID: nodeID, revisionID: revisionID, key: keys)
        let volume = try await api.driveVolume()
        let node = try await api.createNode(DriveNodeRequest(sealedName: sealedName.base64EncodedString(), parentId: folder ?? volume.rootNodeId,
                                                             blockIds: blockIDs, size: size, nodeId: nodeID, revisionId: revisionID))
        guard node.id == nodeID, node.revisionId == revisionID else {
            throw ClientError.tampered("The server's answer for the new drive node (other ids than the ones signed)")
        }
        try? remember(node, manifest: manifest, shareID: volume.shareId)
        return DriveEntry(id: node.id, name: manifest.name, size: size, modified: node.modified, isFolder: false)
    }

    /// Downloads node `id` and writes its cleartext to `destination` (0600).
    public func download(_ id: String, to destination: URL, api: APIClient, progress: ProgressHandler? = nil) async throws -> DriveEntry {
        let node = try await self.node(id, kind: "drive file", api: api)
        let manifest = try open(node)
        let format = try manifest.format(user: try account.session().serverUserID)
        guard let keyBytes = Data(base64Encoded: manifest.key), keyBytes.count == 32 else { throw ClientError.tampered("The key of drive file \(id)") }
        let contentKey = SecretBytes(copying: keyBytes)
        defer { contentKey.wipe() }
        guard node.blockIds.count == format.blockCount else { throw ClientError.tampered("The block list of drive file \(id)") }
        var hashes = SHA256()
        let partial = destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent).rampart-partial")
        guard FileManager.default.createFile(atPath: partial.path, contents: nil, attributes: [.posixPermissions: 0o600]),
              let out = try? FileHandle(forWritingTo: partial) else {
            throw ClientError.file("Cannot write \(destination.path).")
        }
        var received: Int64 = 0
        let phase = "download \(manifest.name)"
        progress?(TransferProgress(phase: phase, done: 0, total: manifest.size))
        do {
            for (index, blockID) in node.blockIds.enumerated() {
                let sealed = try await api.block(blockID)
                guard var clear = try contentKey.withSymmetricKey({ format.open(sealed, index: index, expectedHash: nil, key: $0) })
                else { throw ClientError.tampered("Drive block \(index)") }
                hashes.update(data: DriveBlockFormat.hash(sealed))
                defer { clear.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
                out.write(clear)
                received += Int64(clear.count)
                progress?(TransferProgress(phase: phase, done: received, total: manifest.size))
            }
            guard received == manifest.size else { throw ClientError.tampered("Drive file \(id) (size differs)") }
            guard Self.hex(Data(hashes.finalize())) == manifest.blocksDigest else {
                throw ClientError.tampered("Drive file \(id) (its blocks are not the ones uploaded)")
            }
            try out.synchronize()
            try out.close()
            guard rename(partial.path, destination.path) == 0 else {
                throw ClientError.file("Cannot move the download into \(destination.path): errno \(errno).")
            }
        } catch {
            try? out.close()
            try? FileManager.default.removeItem(at: partial)
            throw error
        }
        return DriveEntry(id: node.id, name: manifest.name, size: manifest.size, modified: node.modified, isFolder: false)
    }

    /// The files and folders of `folder` (a folder node's id; nil: the root folder), names opened.
    public func list(in folder: String? = nil, api: APIClient) async throws -> [DriveEntry] {
        let volume = try await api.driveVolume()
        let nodes: [DriveNodeResponse]
        do { nodes = try await api.nodes(parent: folder ?? volume.rootNodeId) } catch ClientError.http(404, _) {
            throw ClientError.notFound(kind: "drive folder", id: folder ?? volume.rootNodeId)
        }
        return try nodes.map { node in
            let manifest = try open(node)
            if node.isFolder != true { try? remember(node, manifest: manifest, shareID: volume.shareId) }
            return DriveEntry(id: node.id, name: manifest.name, size: node.size, modified: node.modified, isFolder: node.isFolder ?? false)
        }
    }

    /// Renames file or folder `id`: for a file a new revision with the same blocks and key, its
    /// metadata (the new name) sealed and signed for the new revision id; for a folder its
    /// metadata sealed and signed again (see ``createFolder(_:in:api:)``).
    /// - Throws: ``ClientError/notFound(kind:id:)``, ``ClientError/badInput(_:)`` for an empty
    ///   name or one with `/` or control characters.
    public func renameFile(_ id: String, to name: String, api: APIClient) async throws -> DriveEntry {
        let trimmed = try Self.validName(name)
        let node = try await self.node(id, kind: "drive file", api: api)
        var manifest = try open(node)
        manifest.name = trimmed
        let folder = node.isFolder == true
        let revisionID = folder ? Self.folderRevision : DriveNodeRequest.newID("r")
        let sealedName = try manifest.sealed(user: try account.session().serverUserID, nodeID: id, revisionID: revisionID, key: try account.mailboxKey())
        let updated = try await api.updateNode(id, DriveNodeRequest(sealedName: sealedName.base64EncodedString(), parentId: node.parentId,
                                                                    blockIds: node.blockIds, size: node.size, nodeId: id,
                                                                    revisionId: folder ? nil : revisionID))
        guard updated.id == id, folder || updated.revisionId == revisionID else {
            throw ClientError.tampered("The server's answer for the renamed drive node (other ids than the ones signed)")
        }
        return DriveEntry(id: id, name: trimmed, size: manifest.size, modified: updated.modified, isFolder: folder)
    }

    /// Deletes file `id` on the server (its revisions and blocks) and from this device's list;
    /// an empty folder too.
    /// - Throws: ``ClientError/badInput(_:)`` for a folder that is not empty (nothing is deleted:
    ///   delete what is in it first), ``ClientError/notFound(kind:id:)``.
    public func deleteFile(_ id: String, api: APIClient) async throws {
        let node = try await self.node(id, kind: "drive file", api: api)
        if node.isFolder == true {
            let inside = try await api.nodes(parent: id).count
            guard inside == 0 else {
                let name = (try? open(node).name) ?? id
                throw ClientError.badInput("The folder \"\(name)\" is not empty (\(inside) item\(inside == 1 ? "" : "s") in it): delete what is in it first.")
            }
        }
        do { try await api.deleteNode(id) } catch ClientError.http(404, _) { throw ClientError.notFound(kind: "drive file", id: id) }
        _ = try? account.store().drive.deleteNode(id: id)
    }

    /// Opens and authenticates a node's metadata for the node's id and current revision (for a
    /// folder, ``folderRevision``): a file's metadata never opens as a folder's, nor the reverse.
    /// - Throws: ``ClientError/tampered(_:)``.
    func open(_ node: DriveNodeResponse) throws -> DriveNodeManifest {
        guard let sealed = Data(base64Encoded: node.sealedName) else { throw ClientError.malformedResponse("the sealed name of node \(node.id)") }
        let folder = node.isFolder == true
        guard let revisionID = folder ? Self.folderRevision : node.revisionId else {
            throw ClientError.tampered("Drive node \(node.id) (it has no revision)")
        }
        let session = try account.session()
        let keys = try account.mailboxKey()
        let manifest = try DriveNodeManifest.open(sealed, user: session.serverUserID, key: keys, nodeID: node.id, revisionID: revisionID)
        guard (manifest.mimeType == Self.folderType) == folder else {
            throw ClientError.tampered("Drive node \(node.id) (a \(folder ? "file's" : "folder's") metadata on a \(folder ? "folder" : "file"))")
        }
        return manifest
    }

    /// Keeps the node in the sealed store (name and key sealed under the MainKey).
    func remember(_ node: DriveNodeResponse, manifest: DriveNodeManifest, shareID: String) throws {
        try account.store().drive.insert(node: DriveNode(id: node.id, shareID: shareID, parentID: node.parentId, kind: 1, state: 0,
                                                         size: manifest.size, modified: node.modified, name: manifest.name,
                                                         mimeType: manifest.mimeType, keyMaterial: Data(base64Encoded: manifest.key) ?? Data()))
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    static func bytes(hex: String) -> Data? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var data = Data(capacity: digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            data.append(high << 4 | low)
            index += 2
        }
        return data
    }

    static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    static func mimeType(_ fileExtension: String) -> String {
        switch fileExtension.lowercased() {
        case "txt", "md": "text/plain"
        case "pdf": "application/pdf"
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "html", "htm": "text/html"
        default: "application/octet-stream"
        }
    }
}
