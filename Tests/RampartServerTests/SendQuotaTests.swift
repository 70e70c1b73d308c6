import Crypto
import Foundation
import NIOCore
@testable import RampartServer
import Testing

/// The quota check of a send (``ServerLimitEnforcer/checkSend(_:sender:store:)``): the sender's
/// stored bytes and every local recipient's, read in one transaction, on both engines.
@Suite("Send quota: sender and recipients in one read")
struct SendQuotaTests {
    /// Users a (sender), b, c, each with two addresses; b stores 600 bytes over a message, an
    /// attachment, a drive block and an original; c stores 100. With a quota of 1,000 a ~450-byte
    /// send refuses b (named by the address as written, any case) and admits c and remote
    /// addresses; the sender's own address is not counted as a recipient; a sender over quota is
    /// refused first.
    @Test(arguments: TestEngine.allUnderTest)
    func theSenderAndEveryLocalRecipientAreChecked(engine: TestEngine) async throws {
        try await engine.withStorageOffThePool { storage in
            let store = try BackendStore(storage: storage, name: "test")
            try store.write { db in
                for user in ["a", "b", "c"] {
                    try db.execute(sql: """
                        INSERT INTO users (id, username, displayName, addresses, passwordSalt, passwordLogN, passwordHash, publicKey, sealedPrivateKey, created)
                        VALUES (?, ?, ?, '[]', x'00', 1, x'00', x'00', x'00', 0)
                        """, arguments: [user, user, user])
                    for address in ["\(user)@rampart.test", "\(user).Alias@rampart.test"] {
                        try db.execute(sql: "INSERT INTO addresses (address, userId) VALUES (?, ?)", arguments: [address, user])
                    }
                }
                func message(_ id: String, _ user: String, _ bytes: Int) throws {
                    try db.execute(sql: """
                        INSERT INTO messages (id, userId, conversationId, time, size, unread, sealedBody) VALUES (?, ?, 'c', 0, ?, 1, ?)
                        """, arguments: [id, user, bytes, Data(count: bytes)])
                }
                try message("b1", "b", 300)
                try db.execute(sql: """
                    INSERT INTO attachments (id, messageId, userId, position, name, mimeType, size, sealedData) VALUES ('b1a', 'b1', 'b', 0, 'x', 'x', 100, ?)
                    """, arguments: [Data(count: 100)])
                try db.execute(sql: "INSERT INTO driveBlocks (id, userId, sha256, data) VALUES ('b-block', 'b', 'h', ?)", arguments: [Data(count: 150)])
                try db.execute(sql: "INSERT INTO messageOriginals (messageId, userId, sealedData) VALUES ('b1', 'b', ?)", arguments: [Data(count: 50)])
                try message("c1", "c", 100)
            }
            #expect(try store.read { db in try ServerLimitEnforcer.storedBytes(of: "b", in: db) } == 600)
            let enforcer = ServerLimitEnforcer(ServerLimits(storageQuotaBytes: 1_000), store: store, nameKey: SymmetricKey(size: .bits256))
            func send(_ to: [String], from sender: String = "a", padding: Int = 400) -> ServerLimitViolation? {
                let json = try! JSONSerialization.data(withJSONObject: ["to": to, "body": String(repeating: "x", count: padding)])
                do {
                    try enforcer.checkSend(ByteBuffer(bytes: json), sender: sender, store: store)
                    return nil
                } catch ServerError.limitExceeded(let violation) {
                    return violation
                } catch {
                    Issue.record("\(error)")
                    return nil
                }
            }
            #expect(send(["c@rampart.test", "C.alias@RAMPART.test", "someone@elsewhere.example"]) == nil)
            #expect(send(["c@rampart.test", "B.ALIAS@rampart.test", "someone@elsewhere.example"]) == .recipientOverQuota(address: "b.alias@rampart.test"))
            #expect(send(["b@rampart.test"], padding: 200) == nil)
            // b sending to itself (and to c): its own mailbox counts once, as the sender.
            #expect(send(["b@rampart.test", "c@rampart.test"], from: "b", padding: 200) == nil)
            #expect(send(["c@rampart.test"], from: "b", padding: 500) == .quotaExceeded(limit: 1_000))
            #expect(send([]) == nil)
        }
    }
}
