import Crypto
import Foundation
import RampartCore
import RampartTestSupport
import Testing
@testable import FileVault

/// The drive's one block format (local store and server upload): a block opens only at its
/// index, in its file, for its user, under its key, and only if its hash is the listed one.
@Suite struct DriveBlockFormatTests {
    static let file = try! DriveFileID("file-1")
    static func format(user: String = "u1", file: DriveFileID = file, length: Int64 = 2500) -> DriveBlockFormat {
        DriveBlockFormat(user: user, fileID: file, blockSize: 1000, plaintextLength: length)
    }

    @Test func blocksAreCutToTheBlockSizeAndAnEmptyFileHasOneEmptyBlock() {
        let format = Self.format()
        #expect(format.blockCount == 3)
        #expect((0..<3).map(format.plaintextCount(ofBlock:)) == [1000, 1000, 500])
        #expect(format.sealedCount(ofBlock: 2) == 500 + DriveBlockFormat.overhead)
        #expect(Self.format(length: 0).blockCount == 1)
        #expect(Self.format(length: 0).plaintextCount(ofBlock: 0) == 0)
    }

    @Test func aBlockOpensOnlyWhereItWasSealed() throws {
        let key = SymmetricKey(size: .bits256)
        let format = Self.format()
        let plain = Data(repeating: 7, count: 1000)
        let sealed = try format.seal(plain, index: 1, key: key)
        let hash = DriveBlockFormat.hash(sealed)
        #expect(sealed.count == format.sealedCount(ofBlock: 1))
        #expect(format.open(sealed, index: 1, expectedHash: hash, key: key) == plain)
        // Another index (same length), another file, another user, another length, another key.
        #expect(format.open(sealed, index: 0, expectedHash: hash, key: key) == nil)
        #expect(Self.format(file: try DriveFileID("file-2")).open(sealed, index: 1, expectedHash: hash, key: key) == nil)
        #expect(Self.format(user: "u2").open(sealed, index: 1, expectedHash: hash, key: key) == nil)
        #expect(Self.format(length: 3500).open(sealed, index: 1, expectedHash: hash, key: key) == nil)
        #expect(format.open(sealed, index: 1, expectedHash: hash, key: SymmetricKey(size: .bits256)) == nil)
    }

    @Test func aModifiedBlockOrAnotherHashIsRefused() throws {
        let key = SymmetricKey(size: .bits256)
        let format = Self.format()
        let sealed = try format.seal(Data(repeating: 1, count: 500), index: 2, key: key)
        let hash = DriveBlockFormat.hash(sealed)
        var flipped = sealed
        flipped[20] ^= 1
        #expect(format.open(flipped, index: 2, expectedHash: hash, key: key) == nil)
        #expect(format.open(flipped, index: 2, expectedHash: DriveBlockFormat.hash(flipped), key: key) == nil)
        #expect(format.open(sealed, index: 2, expectedHash: Data(count: 32), key: key) == nil)
        #expect(format.open(sealed.prefix(100), index: 2, expectedHash: hash, key: key) == nil)
        // Without a listed hash (the list's digest is checked by the caller) the tag still decides.
        #expect(format.open(sealed, index: 2, expectedHash: nil, key: key) == Data(repeating: 1, count: 500))
        #expect(format.open(flipped, index: 2, expectedHash: nil, key: key) == nil)
    }

    @Test func theListDigestCoversEveryHashInOrder() {
        let hashes = (0..<3).map { DriveBlockFormat.hash(Data([UInt8($0)])) }
        let digest = DriveBlockFormat.listDigest(hashes)
        #expect(digest.count == 32)
        #expect(DriveBlockFormat.listDigest(hashes.reversed()) != digest)
        #expect(DriveBlockFormat.listDigest(Array(hashes.dropLast())) != digest)
    }
}

/// The one lease type also serves callers without a vault (the client's rendered documents).
@Suite struct StandaloneLeaseTests {
    @Test func aStandaloneLeaseKeepsItsAreaAndEndsWithItsCleartext() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let root = folder.url.appendingPathComponent("leases")
        let lease = try PreviewArea.lease(root: root, fileName: "../message.html", contents: Data("<p>secret</p>".utf8))
        let url = try lease.url()
        #expect(url.lastPathComponent == "message.html")
        #expect(try Data(contentsOf: url) == Data("<p>secret</p>".utf8))
        #expect(TemporaryHome.mode(of: url) == 0o600)
        lease.end()
        #expect(TemporaryHome.isGoneWithItsFolder(url))
    }

    @Test func aSecondLeaseSweepsWhatACrashedLeaseLeftBehind() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let root = folder.url.appendingPathComponent("leases")
        let lease = try PreviewArea.lease(root: root, fileName: "a.html", contents: Data("a".utf8))
        // A leftover without a live owner (what a crashed process or an older version leaves).
        let leftover = root.appendingPathComponent("old-lease")
        try FileManager.default.createDirectory(at: leftover, withIntermediateDirectories: true)
        try Data("old cleartext".utf8).write(to: leftover.appendingPathComponent("message.html"))
        let second = try PreviewArea.lease(root: root, fileName: "b.html", contents: Data("b".utf8))
        #expect(!FileManager.default.fileExists(atPath: leftover.path))
        #expect(lease.isActive && FileManager.default.fileExists(atPath: lease.path))
        second.end()
        lease.end()
    }
}
