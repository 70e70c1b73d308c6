import Crypto
import Foundation
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

/// The metadata sealed into a node's `sealedName`: the name and the per-file key.
struct DriveNodeSecrets: Codable {
    var name: String
    var mimeType: String
    /// base64 of the 32-byte per-file key.
    var key: String
    var size: Int64
    var blockCount: Int
}

/// Drive upload, download and listing, encrypted client-side.
///
/// Trust-model rows **encrypted file blocks (low)** — the server only ever receives blocks
/// sealed with a random per-file key; **database (nodes…, critical)** — the file's name and key
/// travel sealed to the user's own public key (HPKE, part `drive.node`), and the local copy of
/// the node is kept in the sealed store; **cleartext files (critical)** — cleartext exists only in
/// the source file and the destination the user chose.
///
/// Block envelope, version 1: `"RDB1" ‖ nonce (12) ‖ ciphertext ‖ tag (16)`, AES-256-GCM under the
/// file key, associated data `"rampart.drive.block.v1" ‖ index (u32 BE) ‖ block count (u32 BE)`, so
/// blocks cannot be reordered, dropped or swapped between files.
///
/// Note: FileVault's block store (issue 9) was not in `main` when this was written; blocks are
/// streamed from and to the server without a local encrypted block cache.
public struct DriveClient: Sendable {
    public let account: ClientAccount
    /// 1 MiB blocks (the server accepts up to 4 MiB).
    public var blockSize = 1 << 20
    static let magic = Array("RDB1".utf8)
    static let namePart = "drive.node"

    public init(account: ClientAccount) { self.account = account }

    /// Encrypts and uploads `file` into the root folder; returns the new node's id.
    public func upload(_ file: URL, api: APIClient, progress: ProgressHandler? = nil) async throws -> DriveEntry {
        let handle: FileHandle
        do { handle = try FileHandle(forReadingFrom: file) } catch {
            throw ClientError.file("Cannot read \(file.path): \(error.localizedDescription)")
        }
        defer { try? handle.close() }
        let size = Int64((try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)??.int64Value ?? 0)
        let count = max(1, Int((size + Int64(blockSize) - 1) / Int64(blockSize)))
        let fileKey = SecretBytes(randomCount: 32)
        defer { fileKey.wipe() }
        let phase = "upload \(file.lastPathComponent)"
        var blockIDs: [String] = []
        var sent: Int64 = 0
        progress?(TransferProgress(phase: phase, done: 0, total: size))
        for index in 0..<count {
            var chunk = (try? handle.read(upToCount: blockSize)) ?? Data()
            defer { chunk.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
            let sealed = try Self.sealBlock(chunk, index: index, count: count, key: fileKey)
            let stored = try await api.uploadBlock(sealed)
            let expected = SHA256.hash(data: sealed).map { String(format: "%02x", $0) }.joined()
            if stored.sha256.lowercased() != expected && Data(base64Encoded: stored.sha256) != Data(SHA256.hash(data: sealed)) {
                throw ClientError.tampered("The server's receipt for block \(index)")
            }
            blockIDs.append(stored.blockId)
            sent += Int64(chunk.count)
            progress?(TransferProgress(phase: phase, done: sent, total: size))
        }
        let session = try account.session()
        let keys = try account.mailboxKey()
        let secrets = DriveNodeSecrets(name: file.lastPathComponent, mimeType: Self.mimeType(file.pathExtension),
                                       key: try fileKey.withUnsafeBytes { Data($0).base64EncodedString() },
                                       size: size, blockCount: count)
        var json = try JSONEncoder().encode(secrets)
        defer { json.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        let sealedName = try SealedPart.seal(json, to: keys.publicKey, userID: session.serverUserID, messageID: "drive", part: Self.namePart)
        let volume = try await api.driveVolume()
        let node = try await api.createNode(DriveNodeRequest(sealedName: sealedName.base64EncodedString(), parentId: volume.rootNodeId,
                                                             blockIds: blockIDs, size: size))
        try? remember(node, secrets: secrets, shareID: volume.shareId)
        return DriveEntry(id: node.id, name: secrets.name, size: size, modified: node.modified, isFolder: false)
    }

    /// Downloads node `id` and writes its cleartext to `destination` (0600).
    public func download(_ id: String, to destination: URL, api: APIClient, progress: ProgressHandler? = nil) async throws -> DriveEntry {
        let node: DriveNodeResponse
        do { node = try await api.node(id) } catch ClientError.http(404, _) { throw ClientError.notFound(kind: "drive file", id: id) }
        let secrets = try open(node)
        guard let keyBytes = Data(base64Encoded: secrets.key), keyBytes.count == 32 else { throw ClientError.tampered("The key of drive file \(id)") }
        let fileKey = SecretBytes(copying: keyBytes)
        defer { fileKey.wipe() }
        guard node.blockIds.count == secrets.blockCount else { throw ClientError.tampered("The block list of drive file \(id)") }
        let partial = destination.deletingLastPathComponent().appendingPathComponent(".\(destination.lastPathComponent).rampart-partial")
        guard FileManager.default.createFile(atPath: partial.path, contents: nil, attributes: [.posixPermissions: 0o600]),
              let out = try? FileHandle(forWritingTo: partial) else {
            throw ClientError.file("Cannot write \(destination.path).")
        }
        var received: Int64 = 0
        let phase = "download \(secrets.name)"
        progress?(TransferProgress(phase: phase, done: 0, total: secrets.size))
        do {
            for (index, blockID) in node.blockIds.enumerated() {
                let sealed = try await api.block(blockID)
                var clear = try Self.openBlock(sealed, index: index, count: node.blockIds.count, key: fileKey)
                defer { clear.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
                out.write(clear)
                received += Int64(clear.count)
                progress?(TransferProgress(phase: phase, done: received, total: secrets.size))
            }
            guard received == secrets.size else { throw ClientError.tampered("Drive file \(id) (size differs)") }
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
        return DriveEntry(id: node.id, name: secrets.name, size: secrets.size, modified: node.modified, isFolder: false)
    }

    /// The files of the root folder, names opened.
    public func list(api: APIClient) async throws -> [DriveEntry] {
        let volume = try await api.driveVolume()
        let nodes = try await api.nodes(parent: volume.rootNodeId)
        return try nodes.map { node in
            let secrets = try open(node)
            try? remember(node, secrets: secrets, shareID: volume.shareId)
            return DriveEntry(id: node.id, name: secrets.name, size: node.size, modified: node.modified, isFolder: node.isFolder ?? false)
        }
    }

    func open(_ node: DriveNodeResponse) throws -> DriveNodeSecrets {
        guard let sealed = Data(base64Encoded: node.sealedName) else { throw ClientError.malformedResponse("the sealed name of node \(node.id)") }
        let session = try account.session()
        var json = try SealedPart.open(sealed, with: try account.mailboxKey(), userID: session.serverUserID, messageID: "drive", part: Self.namePart)
        defer { json.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        do { return try JSONDecoder().decode(DriveNodeSecrets.self, from: json) } catch {
            throw ClientError.malformedResponse("the metadata of drive node \(node.id)")
        }
    }

    /// Keeps the node in the sealed store (name and key sealed under the MainKey).
    func remember(_ node: DriveNodeResponse, secrets: DriveNodeSecrets, shareID: String) throws {
        try account.store().drive.insert(node: DriveNode(id: node.id, shareID: shareID, parentID: node.parentId, kind: 1, state: 0,
                                                         size: secrets.size, modified: node.modified, name: secrets.name,
                                                         mimeType: secrets.mimeType, keyMaterial: Data(base64Encoded: secrets.key) ?? Data()))
    }

    static func associatedData(index: Int, count: Int) -> Data {
        var data = Data("rampart.drive.block.v1".utf8)
        for value in [UInt32(index), UInt32(count)] { withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) } }
        return data
    }

    static func sealBlock(_ clear: Data, index: Int, count: Int, key: SecretBytes) throws -> Data {
        let box = try key.withSymmetricKey { try AES.GCM.seal(clear, using: $0, authenticating: associatedData(index: index, count: count)) }
        return Data(magic) + box.nonce.withUnsafeBytes { Data($0) } + box.ciphertext + box.tag
    }

    static func openBlock(_ sealed: Data, index: Int, count: Int, key: SecretBytes) throws -> Data {
        let bytes = [UInt8](sealed)
        guard bytes.count >= 4 + 12 + 16, Array(bytes[0..<4]) == magic else { throw ClientError.tampered("Drive block \(index)") }
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: bytes[4..<16]), ciphertext: bytes[16..<(bytes.count - 16)],
                                            tag: bytes[(bytes.count - 16)...])
            return try key.withSymmetricKey { try AES.GCM.open(box, using: $0, authenticating: associatedData(index: index, count: count)) }
        } catch {
            throw ClientError.tampered("Drive block \(index)")
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
