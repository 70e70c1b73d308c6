import Foundation
import RampartCore
import Testing
@testable import FileVault

/// Cleartext exists only while a lease is active: explicit end, release, thrown errors, task
/// cancellation, lock of the MainKey.
@Suite struct CleartextLeaseTests {
    private func vaultWithAttachment(_ folder: TemporaryFolder, session: MainKeySession = unlockedSession()) throws -> Vault {
        let vault = try Vault(root: folder.url, provider: session)
        try vault.attachments.put(Data("cleartext body".utf8), attachment: "a", fileName: "a.txt", mimeType: "text/plain")
        return vault
    }

    @Test func endingALeaseDeletesTheCleartext() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let vault = try vaultWithAttachment(folder)
        let lease = try vault.attachments.lease("a")
        #expect(FileManager.default.fileExists(atPath: lease.path))
        #expect(vault.previews.activeLeaseCount == 1)
        lease.end()
        lease.end()  // idempotent
        #expect(!FileManager.default.fileExists(atPath: lease.path))
        #expect(throws: FileVaultError.leaseEnded) { try lease.url() }
        #expect(leaseFiles(vault).isEmpty)
    }

    @Test func releasingALeaseDeletesTheCleartext() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let vault = try vaultWithAttachment(folder)
        var path = ""
        do {
            let lease = try vault.attachments.lease("a")
            path = lease.path
            #expect(FileManager.default.fileExists(atPath: path))
        }
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func withCleartextDeletesAfterReturnAndAfterThrow() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let vault = try vaultWithAttachment(folder)
        let seen = try vault.attachments.withCleartext("a") { url in
            let text = try String(contentsOf: url, encoding: .utf8)
            #expect(text == "cleartext body")
            return url.path
        }
        #expect(!FileManager.default.fileExists(atPath: seen))
        struct ViewerFailed: Error {}
        var thrownPath = ""
        #expect(throws: ViewerFailed.self) {
            try vault.attachments.withCleartext("a") { url in
                thrownPath = url.path
                throw ViewerFailed()
            }
        }
        #expect(!thrownPath.isEmpty && !FileManager.default.fileExists(atPath: thrownPath))
        #expect(leaseFiles(vault).isEmpty)
    }

    @Test func taskCancellationDeletesTheCleartextWhileTheBodyRuns() async throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let vault = try vaultWithAttachment(folder)
        let (opened, openedContinuation) = AsyncStream<String>.makeStream()
        let task = Task {
            try await vault.attachments.withCleartext("a") { url in
                openedContinuation.yield(url.path)
                // Long enough never to end on its own: in the shared test process this test can
                // wait for the pool for minutes (a 30 s sleep once ended before the cancel came).
                try await Task.sleep(for: .seconds(3600))
            }
        }
        var iterator = opened.makeAsyncIterator()
        let path = try #require(await iterator.next())
        #expect(FileManager.default.fileExists(atPath: path))
        task.cancel()
        // The cancellation handler ends the lease at once, before the body has unwound.
        #expect(!FileManager.default.fileExists(atPath: path))
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(leaseFiles(vault).isEmpty)
    }

    /// A body that returns normally after its task was cancelled (it ignores cancellation) still
    /// ends in `CancellationError`: the file it worked on was deleted under it.
    @Test func aBodyThatIgnoresCancellationStillEndsInCancellationError() async throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let vault = try vaultWithAttachment(folder)
        let (opened, openedContinuation) = AsyncStream<String>.makeStream()
        let (cancelled, cancelledContinuation) = AsyncStream<Void>.makeStream()
        let task = Task {
            try await vault.attachments.withCleartext("a") { url -> Int in
                openedContinuation.yield(url.path)
                var iterator = cancelled.makeAsyncIterator()
                _ = await iterator.next()  // (does not throw on cancellation)
                return 42
            }
        }
        var iterator = opened.makeAsyncIterator()
        let path = try #require(await iterator.next())
        task.cancel()
        #expect(!FileManager.default.fileExists(atPath: path))
        cancelledContinuation.yield()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(leaseFiles(vault).isEmpty)
    }

    @Test func lockingTheMainKeyEndsEveryLease() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let session = unlockedSession()
        let vault = try vaultWithAttachment(folder, session: session)
        let source = try writeFile(Data("drive content".utf8), in: folder.url.appendingPathComponent("src"))
        let id = try vault.drive.upload(from: source, name: "d.txt")
        let first = try vault.attachments.lease("a")
        let second = try vault.drive.lease(id)
        session.lock(reason: .autolockTimeout)
        for lease in [first, second] {
            #expect(!lease.isActive)
            #expect(!FileManager.default.fileExists(atPath: lease.path))
        }
        #expect(leaseFiles(vault).isEmpty)
    }

    @Test func leaseFileNamesCannotEscapeTheLeaseFolder() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let vault = try Vault(root: folder.url, provider: unlockedSession())
        for name in ["../../evil.sh", "..", "", ".hidden", "a\u{0}b\nc", String(repeating: "é", count: 200)] {
            try vault.attachments.put(Data("x".utf8), attachment: "n", fileName: name, mimeType: "x")
            try vault.attachments.withCleartext("n") { url in
                #expect(url.deletingLastPathComponent().deletingLastPathComponent().path == vault.previews.sessionFolder.path)
                #expect(!url.lastPathComponent.hasPrefix("."))
            }
        }
    }

    @Test func startupSweepRemovesLeftoversButNotLiveSessions() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let session = unlockedSession()
        let live = try vaultWithAttachment(folder, session: session)
        let liveLease = try live.attachments.lease("a")
        // A leftover of a crashed process: a session folder with an unlocked lock file.
        let dead = live.previews.root.appendingPathComponent("session-dead")
        try FileManager.default.createDirectory(at: dead.appendingPathComponent("lease"), withIntermediateDirectories: true)
        try Data().write(to: dead.appendingPathComponent(".owner.lock"))
        try Data("old".utf8).write(to: dead.appendingPathComponent("lease/old.txt"))
        let second = try Vault(root: folder.url, provider: session)
        #expect(second.previews.sweptSessions == 1)
        #expect(!FileManager.default.fileExists(atPath: dead.path))
        #expect(FileManager.default.fileExists(atPath: liveLease.path))  // another live process's lease stays
        liveLease.end()
    }
}
