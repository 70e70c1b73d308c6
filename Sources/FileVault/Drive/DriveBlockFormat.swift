import Crypto
import Foundation
import RampartCore

/// The one block format of the drive, used by the local ``DriveBlockStore`` and by the client's
/// upload and download to the server (so the bytes the server keeps are the bytes a local
/// store keeps).
///
/// Trust-model rows **encrypted file blocks (low)** and **database (nodes, revisions, blocks) —
/// critical** (modified: critical):
/// - a file is cut into fixed-size blocks (the last one shorter, an empty file one empty block);
/// - each block is `nonce (12) ‖ ciphertext ‖ tag (16)`, AES-256-GCM under the revision's random
///   content key (a new key for every upload: per-revision keys), associated data
///   `AD("rampart.filevault.drive.block.v1", user, file id, index (u64), block count (u64))` —
///   a block cannot be reordered, dropped, repeated, truncated away or moved to another file;
/// - the SHA-256 of every sealed block is listed, in order, in the file's authenticated manifest
///   (`DriveManifest` locally, so a block is checked before it is decrypted), or — where the
///   manifest must stay small (the server's node metadata) — their ``listDigest(_:)``; either way
///   the manifest covers the whole file;
/// - sealing and opening work one block at a time: memory stays flat whatever the file size.
public struct DriveBlockFormat: Sendable {
    /// Bytes a sealed block adds to its plaintext: nonce (12) and tag (16).
    public static let overhead = 12 + 16

    /// The user the blocks are bound to (the local user id, or the server's user id).
    public let user: String
    /// The file the blocks belong to.
    public let fileID: DriveFileID
    /// Plaintext bytes per block (all but the last block are exactly this long).
    public let blockSize: Int
    /// The cleartext length of the file.
    public let plaintextLength: Int64

    /// The format of one file (revision).
    /// - Precondition: `blockSize > 0`, `plaintextLength >= 0`.
    public init(user: String, fileID: DriveFileID, blockSize: Int, plaintextLength: Int64) {
        precondition(blockSize > 0 && plaintextLength >= 0)
        self.user = user
        self.fileID = fileID
        self.blockSize = blockSize
        self.plaintextLength = plaintextLength
    }

    /// How many blocks the file has: `max(1, ⌈length / blockSize⌉)`.
    public var blockCount: Int { Self.blockCount(length: plaintextLength, blockSize: blockSize) }

    /// `max(1, ⌈length / blockSize⌉)`.
    public static func blockCount(length: Int64, blockSize: Int) -> Int {
        max(1, Int((length + Int64(blockSize) - 1) / Int64(blockSize)))
    }

    /// The plaintext length of block `index`.
    public func plaintextCount(ofBlock index: Int) -> Int {
        let start = Int64(index) * Int64(blockSize)
        return Int(min(Int64(blockSize), max(0, plaintextLength - start)))
    }

    /// The sealed length of block `index`.
    public func sealedCount(ofBlock index: Int) -> Int { plaintextCount(ofBlock: index) + Self.overhead }

    /// The SHA-256 of a sealed block, as the manifest lists it.
    public static func hash(_ sealed: Data) -> Data { Data(SHA256.hash(data: sealed)) }

    /// Seals block `index`.
    /// - Precondition: `plain.count == plaintextCount(ofBlock: index)`.
    public func seal(_ plain: Data, index: Int, key: SymmetricKey) throws -> Data {
        precondition(index >= 0 && index < blockCount && plain.count == plaintextCount(ofBlock: index))
        return try AES.GCM.seal(plain, using: key, authenticating: associatedData(index: index).bytes).combined!
    }

    /// The digest of a whole file's block list: SHA-256 over the SHA-256 of every sealed block,
    /// in order. A manifest too large to list every hash (the server's node metadata) carries
    /// this instead; computed block by block, it needs no list in memory.
    public static func listDigest(_ hashes: [Data]) -> Data {
        var digest = SHA256()
        for hash in hashes { digest.update(data: hash) }
        return Data(digest.finalize())
    }

    /// Checks a sealed block's length (and its listed hash, when the manifest lists one), then
    /// decrypts it.
    /// - Returns: the plaintext, or `nil` when the block is not the one the manifest lists at
    ///   `index` (modified, moved, truncated or under another key). The caller reports which.
    public func open(_ sealed: Data, index: Int, expectedHash: Data?, key: SymmetricKey) -> Data? {
        guard index >= 0, index < blockCount, sealed.count == sealedCount(ofBlock: index),
              expectedHash.map({ Self.hash(sealed) == $0 }) ?? true,
              let box = try? AES.GCM.SealedBox(combined: sealed),
              let plain = try? AES.GCM.open(box, using: key, authenticating: associatedData(index: index).bytes)
        else { return nil }
        return plain
    }

    func associatedData(index: Int) -> AssociatedData {
        var ad = AssociatedData("rampart.filevault.drive.block.v1")
        ad.append(user)
        ad.append(fileID.rawValue)
        ad.append(UInt64(index))
        ad.append(UInt64(blockCount))
        return ad
    }
}
