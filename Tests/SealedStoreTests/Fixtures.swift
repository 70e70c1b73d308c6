import Testing
import Foundation
import GRDB
import RampartCore
@testable import SealedStore

/// A temporary folder with an unlocked session and an open store; removed at deinit.
final class StoreFixture: @unchecked Sendable {
    let root: URL
    let files: StoreFiles
    let session: MainKeySession
    let key: MainKey
    private(set) var store: SealedStore

    init(user: UserID = "alice", key: MainKey = .generate(), root: URL? = nil) throws {
        self.root = root ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("rampart-store-tests-\(UUID().uuidString)", isDirectory: true)
        files = StoreFiles(root: self.root.appendingPathComponent("stores", isDirectory: true))
        session = MainKeySession(userID: user)
        self.key = key
        session.unlock(with: key)
        store = try SealedStore(files: files, keys: session)
    }

    deinit {
        store.close()
        try? FileManager.default.removeItem(at: root)
    }

    var databasePath: String { files.databaseURL(for: session.userID).path }

    /// Closes the store, runs `body` on the raw database file (as an attacker with the disk
    /// would), and reopens the store.
    func tamper(_ body: (Database) throws -> Void) throws {
        store.close()
        let queue = try DatabaseQueue(path: databasePath)
        try queue.write(body)
        try queue.close()
        store = try SealedStore(files: files, keys: session)
    }

    /// A fixture holding `messages` whose database file an attacker then edited with the SQL
    /// `statements` (``tamper(_:)``).
    static func tampered(holding messages: [MailMessage], _ statements: [String]) throws -> StoreFixture {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(messages: messages)
        try fixture.tamper { db in
            for statement in statements { try db.execute(sql: statement) }
        }
        return fixture
    }

    func reopen() throws {
        store.close()
        store = try SealedStore(files: files, keys: session)
    }
}

func sampleMessage(_ number: Int, label: String = "inbox", body: String? = nil, subject: String? = nil,
                   sender: MailAddress? = nil, time: Int64? = nil) -> MailMessage {
    MailMessage(
        id: "msg-\(number)", conversationID: "conv-\(number / 3)", time: time ?? Int64(1_700_000_000 + number * 60),
        size: Int64(1_000 + number), flags: number.isMultiple(of: 2) ? [.unread] : [.starred],
        labelIDs: [label, "all"], subject: subject ?? "Quarterly report \(number)",
        sender: sender ?? MailAddress(name: "Bob Sender", address: "bob\(number % 5)@example.org"),
        recipients: [MailAddress(name: "Alice", address: "alice@example.org"), MailAddress(address: "carol@example.net")],
        body: body ?? "Hello Alice, the numbers for period \(number) are attached. Regards, Bob.")
}

func isTampered(_ error: any Error) -> Bool {
    if case SealedStoreError.tampered = error { return true }
    return false
}

func isLocked(_ error: any Error) -> Bool {
    if case SealedStoreError.locked = error { return true }
    return false
}

/// Records an issue unless `body` throws ``SealedStoreError/tampered(table:column:primaryKey:reason:)``.
func expectTampered<T>(_ sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T) {
    expectFailure("tampered", isTampered, sourceLocation, body)
}

/// Records an issue unless `body` throws ``SealedStoreError/locked(_:)``.
func expectLocked<T>(_ sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T) {
    expectFailure("locked", isLocked, sourceLocation, body)
}

/// Records an issue unless `body` throws an error `matches` accepts (`name` for the message).
private func expectFailure<T>(_ name: String, _ matches: (any Error) -> Bool, _ sourceLocation: SourceLocation,
                              _ body: () throws -> T) {
    do {
        _ = try body()
        Issue.record("expected a \(name) error, got a value", sourceLocation: sourceLocation)
    } catch {
        #expect(matches(error), "expected \(name), got \(error)", sourceLocation: sourceLocation)
    }
}
