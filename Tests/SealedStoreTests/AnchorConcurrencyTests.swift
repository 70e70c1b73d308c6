import Foundation
import RampartCore
import Testing
@testable import SealedStore

/// A rollback anchor that lets another writer run while it is being read, as another process
/// (a `rampart sync` next to a `rampart list`) may at any moment.
final class InterleavingAnchor: StoreRollbackAnchor, @unchecked Sendable {
    private let lock = NSLock()
    private var record: Data?
    private var pending: (@Sendable () -> Void)?

    /// Runs `body` inside the next `load()`, before the record is read.
    func interleave(_ body: @escaping @Sendable () -> Void) { lock.withLock { pending = body } }

    func load() throws -> Data? {
        let body = lock.withLock { () -> (@Sendable () -> Void)? in
            defer { pending = nil }
            return pending
        }
        body?()
        return lock.withLock { record }
    }

    func save(_ record: Data) throws { lock.withLock { self.record = record } }
}

/// Trust-model row **device storage (low)** — rollback: the anchor is compared with the epoch
/// the opening store read while holding SQLite's write lock, so another writer's later epoch
/// (committed and recorded by another process at the same time) is never taken for a rollback.
@Suite struct AnchorConcurrencyTests {
    @Test func anotherWritersLaterEpochWhileTheStoreOpensIsNotARollback() throws {
        let fixture = try StoreFixture()
        fixture.store.close()
        let anchor = InterleavingAnchor()
        let writer = try SealedStore(files: fixture.files, keys: fixture.session, anchor: anchor)
        defer { writer.close() }
        try writer.mail.insert(message: sampleMessage(1))

        let committed = DispatchSemaphore(value: 0)
        let waitedOut = DispatchSemaphore(value: 0)
        anchor.interleave {
            // The other writer commits (and records) a later epoch now, if SQLite lets it; the
            // opening store waits a moment for it, as an unlucky schedule would.
            DispatchQueue.global().async {
                try? writer.mail.insert(message: sampleMessage(2))
                committed.signal()
            }
            if committed.wait(timeout: .now() + 1) == .timedOut { waitedOut.signal() }
        }
        let opening = Result { try SealedStore(files: fixture.files, keys: fixture.session, anchor: anchor) }
        // The writer was held back by the opening store's transaction: it commits now.
        if waitedOut.wait(timeout: .now()) == .success {
            #expect(committed.wait(timeout: .now() + 30) == .success)
        }
        let store = try opening.get()
        defer { store.close() }
        #expect(try store.mail.message(id: "msg-2").id == "msg-2")

        // A real rollback is still refused: the anchor now remembers the writer's epoch.
        writer.close()
        store.close()
        let backup = fixture.root.appendingPathComponent("backup", isDirectory: true)
        try FileManager.default.copyItem(at: fixture.files.directory(for: fixture.session.userID), to: backup)
        let later = try SealedStore(files: fixture.files, keys: fixture.session, anchor: anchor)
        try later.mail.insert(message: sampleMessage(3))
        later.close()
        try FileManager.default.removeItem(at: fixture.files.directory(for: fixture.session.userID))
        try FileManager.default.copyItem(at: backup, to: fixture.files.directory(for: fixture.session.userID))
        expectTampered { try SealedStore(files: fixture.files, keys: fixture.session, anchor: anchor) }
    }
}
