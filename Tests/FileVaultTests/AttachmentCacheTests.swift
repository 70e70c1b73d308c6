import Foundation
import RampartCore
import Testing
@testable import FileVault
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The attachment cache: sealed at rest under a sub-key bound to user and attachment id, TTL,
/// LRU size cap, purge on logout and on the Keymaker's wipe, private files.
@Suite struct AttachmentCacheTests {
    @Test func storedAttachmentRoundTripsThroughGetAndLease() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let vault = try Vault(root: folder.url, provider: unlockedSession())
        let content = pseudoRandomData(count: 3 * 1024 * 1024 + 17, seed: 1)
        try vault.attachments.put(content, attachment: "att-1", fileName: "report.pdf", mimeType: "application/pdf")
        #expect(try vault.attachments.get("att-1") == content)
        let entry = try vault.attachments.entry("att-1")
        #expect(entry.fileName == "report.pdf" && entry.mimeType == "application/pdf")
        let lease = try vault.attachments.lease("att-1")
        #expect(try Data(contentsOf: lease.url()) == content)
        #expect(try lease.url().lastPathComponent == "report.pdf")
        lease.end()
        #expect(leaseFiles(vault).isEmpty)
    }

    @Test func emptyAttachmentIsSealedAndAuthenticated() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let vault = try Vault(root: folder.url, provider: unlockedSession())
        try vault.attachments.put(Data(), attachment: "empty", fileName: "e.txt", mimeType: "text/plain")
        #expect(try vault.attachments.get("empty") == Data())
    }

    @Test func everyVaultFileIsPrivateAndFoldersAreExcludedFromBackup() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let vault = try vaultHoldingA(in: folder)
        let source = try writeFile(Data("drive".utf8), in: folder.url.appendingPathComponent("src"))
        let id = try vault.drive.upload(from: source, name: "d.txt", thumbnail: Data("t".utf8))
        let lease = try vault.drive.lease(id)
        defer { lease.end() }
        let files = allFiles(under: vault.folder)
        #expect(files.count >= 6)
        for file in files {
            #expect(file.mode & 0o077 == 0, "\(file.url.path) is \(String(file.mode & 0o777, radix: 8))")
        }
        for dir in allFolders(under: vault.folder) {
            #expect(dir.mode & 0o777 == 0o700, "\(dir.url.path) is \(String(dir.mode & 0o777, radix: 8))")
        }
        for dir in [vault.folder, vault.attachments.folder, vault.drive.folder, vault.previews.root] {
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent("CACHEDIR.TAG").path))
        }
    }

    @Test func blobOfAnotherAttachmentIsRejected() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let vault = try Vault(root: folder.url, provider: unlockedSession())
        try vault.attachments.put(Data("first".utf8), attachment: "a", fileName: "a.txt", mimeType: "text/plain")
        try vault.attachments.put(Data("other".utf8), attachment: "b", fileName: "b.txt", mimeType: "text/plain")
        let rows = try vault.attachments.indexRows()
        try #require(rows.count == 2)
        let rowA = rows[0], rowB = rows[1]
        // Put b's sealed blob in place of a's.
        let blobA = vault.attachments.folder.appendingPathComponent(rowA.blobName)
        let blobB = vault.attachments.folder.appendingPathComponent(rowB.blobName)
        try FileManager.default.removeItem(at: blobA)
        try FileManager.default.copyItem(at: blobB, to: blobA)
        var failures = 0
        for id in ["a", "b"] {
            do { _ = try vault.attachments.get(id) } catch let error as FileVaultError {
                #expect(error == .attachmentTampered(attachment: id))
                failures += 1
            }
        }
        #expect(failures == 1)
        #expect(leaseFiles(vault).isEmpty)
    }

    /// A vault in `folder` holding the attachment "a" (`a.txt`, one byte).
    private func vaultHoldingA(in folder: TemporaryFolder, provider: MainKeySession = unlockedSession()) throws -> Vault {
        let vault = try Vault(root: folder.url, provider: provider)
        try vault.attachments.put(Data("x".utf8), attachment: "a", fileName: "a.txt", mimeType: "text/plain")
        return vault
    }

    /// A vault with 4 KiB chunks holding 20,000 pseudo-random bytes as attachment "a" (five
    /// chunks), and the file of its encrypted blob.
    private func vaultWithOneBlob(in folder: TemporaryFolder, seed: UInt64) throws -> (Vault, URL) {
        let vault = try Vault(root: folder.url, provider: unlockedSession(),
                              configuration: .init(attachments: .init(chunkSize: 4096)))
        try vault.attachments.put(pseudoRandomData(count: 20_000, seed: seed), attachment: "a", fileName: "a.bin", mimeType: "x")
        let row = try #require(try vault.attachments.indexRows().first)
        return (vault, vault.attachments.folder.appendingPathComponent(row.blobName))
    }

    @Test func flippedByteInBlobIsRejectedWithoutCleartext() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let (vault, blob) = try vaultWithOneBlob(in: folder, seed: 2)
        var bytes = try Data(contentsOf: blob)
        bytes[bytes.count - 100] ^= 0x01  // inside the last chunk: earlier chunks verify first
        try bytes.write(to: blob)
        #expect(throws: FileVaultError.attachmentTampered(attachment: "a")) { try vault.attachments.lease("a") }
        #expect(leaseFiles(vault).isEmpty)
        #expect(throws: FileVaultError.notCached(attachment: "a")) { try vault.attachments.get("a") }
    }

    @Test func truncatedBlobIsRejected() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let (vault, blob) = try vaultWithOneBlob(in: folder, seed: 3)
        let bytes = try Data(contentsOf: blob)
        try bytes.prefix(bytes.count - 4096 - 28).write(to: blob)  // the whole last chunk dropped
        #expect(throws: FileVaultError.attachmentTampered(attachment: "a")) { try vault.attachments.get("a") }
    }

    @Test func aNewMainKeyCannotFindOldEntries() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        do {
            let vault = try Vault(root: folder.url, provider: unlockedSession("alice"))
            try vault.attachments.put(Data("secret".utf8), attachment: "a", fileName: "a.txt", mimeType: "text/plain")
        }
        // Same user, different MainKey (a new login): the entry cannot be found or opened.
        let vault = try Vault(root: folder.url, provider: unlockedSession("alice"))
        #expect(throws: FileVaultError.notCached(attachment: "a")) { try vault.attachments.get("a") }
    }

    @Test func lockedKeyGivesTypedError() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let session = unlockedSession()
        let vault = try vaultHoldingA(in: folder, provider: session)
        session.lock(reason: .userRequest)
        #expect(throws: FileVaultError.locked) { try vault.attachments.get("a") }
        #expect(throws: FileVaultError.locked) {
            try vault.attachments.put(Data("y".utf8), attachment: "b", fileName: "b.txt", mimeType: "text/plain")
        }
    }

    @Test func entriesExpireAfterThreeDaysByDefault() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        #expect(AttachmentCache.Configuration().timeToLive == 3 * 24 * 3600)
        let clock = ManualClock()
        let vault = try Vault(root: folder.url, provider: unlockedSession(), clock: clock)
        try vault.attachments.put(Data("x".utf8), attachment: "a", fileName: "a.txt", mimeType: "text/plain")
        clock.advance(by: 3 * 24 * 3600 - 60)
        #expect(try vault.attachments.contains("a"))
        clock.advance(by: 120)
        #expect(try !vault.attachments.contains("a"))
        #expect(throws: FileVaultError.notCached(attachment: "a")) { try vault.attachments.get("a") }
        #expect(try vault.attachments.count == 0)
        #expect(allFiles(under: vault.attachments.folder).filter { $0.url.pathExtension == "blob" }.isEmpty)
    }

    @Test func timeToLiveIsConfigurableAndPurgeExpiredRemovesBlobs() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let clock = ManualClock()
        let vault = try Vault(root: folder.url, provider: unlockedSession(), clock: clock,
                              configuration: .init(attachments: .init(timeToLive: 3600)))
        try vault.attachments.put(Data("x".utf8), attachment: "old", fileName: "a.txt", mimeType: "text/plain")
        clock.advance(by: 1800)
        try vault.attachments.put(Data("y".utf8), attachment: "new", fileName: "b.txt", mimeType: "text/plain")
        clock.advance(by: 1900)
        #expect(try vault.attachments.purgeExpired() == 1)
        #expect(try vault.attachments.contains("new"))
        #expect(try vault.attachments.count == 1)
        #expect(allFiles(under: vault.attachments.folder).filter { $0.url.pathExtension == "blob" }.count == 1)
    }

    @Test func wallClockSetBackExpiresEntries() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let clock = ManualClock()
        let vault = try Vault(root: folder.url, provider: unlockedSession(), clock: clock)
        try vault.attachments.put(Data("x".utf8), attachment: "a", fileName: "a.txt", mimeType: "text/plain")
        clock.setWallClock(clock.now.addingTimeInterval(-86_400))
        #expect(try !vault.attachments.contains("a"))
    }

    @Test func sizeCapEvictsLeastRecentlyUsed() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let clock = ManualClock()
        // Each 1000-byte attachment seals to 1000 + 20 + 28 bytes; the cap holds three.
        let vault = try Vault(root: folder.url, provider: unlockedSession(), clock: clock,
                              configuration: .init(attachments: .init(maxTotalBytes: 3 * 1048 + 10)))
        for id in ["a", "b", "c"] {
            try vault.attachments.put(pseudoRandomData(count: 1000, seed: 9), attachment: id, fileName: id, mimeType: "x")
            clock.advance(by: 10)
        }
        _ = try vault.attachments.get("a")  // a is now the most recently used
        clock.advance(by: 10)
        try vault.attachments.put(pseudoRandomData(count: 1000, seed: 9), attachment: "d", fileName: "d", mimeType: "x")
        #expect(try vault.attachments.contains("a"))
        #expect(try !vault.attachments.contains("b"))
        #expect(try vault.attachments.contains("c"))
        #expect(try vault.attachments.contains("d"))
        #expect(try vault.attachments.totalStoredBytes <= 3 * 1048 + 10)
        #expect(allFiles(under: vault.attachments.folder).filter { $0.url.pathExtension == "blob" }.count == 3)
    }

    @Test func attachmentOverTheLimitIsRejectedAndNothingIsWritten() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let vault = try Vault(root: folder.url, provider: unlockedSession(),
                              configuration: .init(attachments: .init(maxAttachmentBytes: 1000)))
        #expect(throws: FileVaultError.fileTooLarge(size: 1001, limit: 1000)) {
            try vault.attachments.put(Data(count: 1001), attachment: "big", fileName: "b", mimeType: "x")
        }
        #expect(allFiles(under: vault.attachments.folder).filter { $0.url.lastPathComponent != "CACHEDIR.TAG" }.isEmpty)
    }

    @Test func purgeOnLogoutRemovesEveryBlobAndLease() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let vault = try vaultHoldingA(in: folder)
        let lease = try vault.attachments.lease("a")
        try vault.purge()
        #expect(!lease.isActive)
        #expect(!FileManager.default.fileExists(atPath: lease.path))
        #expect(try vault.attachments.count == 0)
        #expect(allFiles(under: vault.attachments.folder).filter { $0.url.lastPathComponent != "CACHEDIR.TAG" }.isEmpty)
    }

    @Test func keymakerWipeThroughTheRegistryErasesTheVault() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let vault = try vaultHoldingA(in: folder)
        let lease = try vault.attachments.lease("a")
        let registry = WipeRegistry()
        registry.register(FileVaultWipe(root: folder.url))
        #expect(registry.registeredNames == ["file-vault"])
        let report = registry.wipeAll(user: "alice")
        #expect(report.isComplete && report.wiped == ["file-vault"])
        #expect(!lease.isActive)
        #expect(!FileManager.default.fileExists(atPath: vault.folder.path))
        // Idempotent, and other users' vaults stay.
        let bob = try Vault(root: folder.url, provider: unlockedSession("bob"))
        #expect(registry.wipeAll(user: "alice").isComplete)
        #expect(FileManager.default.fileExists(atPath: bob.folder.path))
    }

    @Test func wipeEventOfTheProviderPurgesTheOpenVault() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let session = unlockedSession()
        let vault = try vaultHoldingA(in: folder, provider: session)
        session.publishWipe(reason: .tooManyFailedAttempts)
        #expect(try vault.attachments.count == 0)
    }
}
