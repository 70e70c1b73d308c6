import Crypto
import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
import RampartServer
import Testing

@Suite("Embedded backend: sealed mailbox, events, send, errors")
struct MailboxTests {
    @Test func messagesAndAttachmentsComeBackSealedAndOpenOnlyWithTheMailboxKey() async throws {
        try await TestBackend.with { backend in
            let login = try await backend.login(DemoAccounts.demo)
            let keys = try login.mailboxKeys(DemoAccounts.demo.mailboxPassword)
            let inbox = try await backend.call(MessageListResponse.self, .GET, APIRoute.messages + "?label=\(SystemLabel.inbox)", token: login.accessToken)
            #expect(inbox.total == 5 && inbox.messages.count == 5)
            #expect(inbox.messages.map(\.time) == inbox.messages.map(\.time).sorted(by: >))

            var subjects: [String: MessageResponse] = [:]
            for message in inbox.messages {
                // What travels is ciphertext: no subject or HTML in the sealed bytes.
                let sealed = Data(base64Encoded: message.sealedBody)!
                let content = try message.open(with: keys, userID: login.userId)
                #expect(sealed.range(of: Data(content.subject.utf8)) == nil)
                subjects[content.subject] = message
                // Bound to the message: it does not open as another message's body.
                #expect(throws: MailboxCryptoError.self) {
                    try TestParts.open(sealed, with: keys, userID: login.userId, messageID: "m-other", part: SealedPartName.body)
                }
            }
            #expect(subjects.keys.contains("Lunch on Thursday?"))
            let newsletter = try #require(subjects["This week at Northwind: 5 deals you'll love"])
            let newsletterHTML = try newsletter.open(with: keys, userID: login.userId).html
            #expect(newsletterHTML.contains("list-manage.com/track/open.php"))
            #expect(newsletterHTML.contains("https://images.northwind.example/"))
            let hostile = try #require(subjects["Action required: verify your account"])
            let hostileHTML = try hostile.open(with: keys, userID: login.userId).html
            for marker in ["<script>", "onerror=", "javascript:", "<form", "<svg><style>"] { #expect(hostileHTML.contains(marker)) }

            // Attachments: sealed bytes, opened with the message id and the attachment's part name.
            let planning = try #require(subjects["Quarterly planning notes"])
            #expect(planning.attachments.map(\.name) == ["minutes.txt", "report.pdf"])
            for (position, info) in planning.attachments.enumerated() {
                let response = try await backend.send(.GET, APIRoute.attachment(info.id), token: login.accessToken)
                #expect(response.status == .ok)
                #expect(response.headers.first(name: "content-type") == "application/octet-stream")
                let plain = try TestParts.open(response.body, with: keys, userID: login.userId, messageID: planning.id,
                                               part: SealedPartName.attachment(position))
                #expect(plain.count == info.size)
                if info.name == "report.pdf" { #expect(plain.starts(with: Data("%PDF-1.4".utf8))) }
                // An attachment cannot be passed off as another part.
                #expect(throws: MailboxCryptoError.self) {
                    try TestParts.open(response.body, with: keys, userID: login.userId, messageID: planning.id, part: SealedPartName.body)
                }
                // Nor as the attachment at another position.
                #expect(throws: MailboxCryptoError.self) {
                    try TestParts.open(response.body, with: keys, userID: login.userId, messageID: planning.id,
                                       part: SealedPartName.attachment(position + 1))
                }
            }
            // Embedded images carry their content ids.
            let photos = try #require(subjects["Photos from the trip"])
            #expect(Set(photos.attachments.compactMap(\.contentId)) == ["harbour@rampart.test", "logo@rampart.test"])
            let photosHTML = try photos.open(with: keys, userID: login.userId).html
            #expect(photosHTML.contains("cid:harbour@rampart.test"))
            let image = try await backend.send(.GET, APIRoute.attachment(photos.attachments[0].id), token: login.accessToken)
            let png = try TestParts.open(image.body, with: keys, userID: login.userId, messageID: photos.id,
                                         part: SealedPartName.attachment(0))
            #expect(png.starts(with: Data([0x89, 0x50, 0x4E, 0x47])))

            // Another user's key opens nothing.
            let alice = try await backend.login(DemoAccounts.alice)
            let aliceKeys = try alice.mailboxKeys(DemoAccounts.alice.mailboxPassword)
            #expect(throws: MailboxCryptoError.self) { try newsletter.open(with: aliceKeys, userID: login.userId) }
        }
    }

    /// The key directory hands out public keys only, to sessions only, by address.
    @Test func theKeyDirectoryServesTheAccountsPublicKeyByAddress() async throws {
        try await TestBackend.with { backend in
            let login = try await backend.login(DemoAccounts.demo)
            let keys = try login.mailboxKeys(DemoAccounts.demo.mailboxPassword)
            let found = try await backend.call(PublicKeyResponse.self, .GET, APIRoute.publicKey + "?address=DEMO@rampart.test", token: login.accessToken)
            #expect(found.address == DemoAccounts.demo.address)
            #expect(found.publicKey.hasPrefix("-----BEGIN PGP PUBLIC KEY BLOCK-----") && !found.publicKey.contains("PRIVATE"))
            #expect(try PGPPublicKey(armored: found.publicKey).fingerprint == keys.fingerprint)
            #expect(try await backend.send(.GET, APIRoute.publicKey + "?address=nobody@elsewhere.example", token: login.accessToken).status == .notFound)
            #expect(try await backend.send(.GET, APIRoute.publicKey + "?address=not-an-address", token: login.accessToken).status == .badRequest)
            #expect(try await backend.send(.GET, APIRoute.publicKey + "?address=demo@rampart.test").status == .unauthorized)
        }
    }

    @Test(.enabled(if: TestEngine.current == .sqlite, "reads backend.sqlite's bytes; on PostgreSQL the rows are in the cluster's files"))
    func theDatabaseAtRestHoldsNoMessagePlaintext() async throws {
        try await TestBackend.with { backend in
            let login = try await backend.login(DemoAccounts.alice)
            let marker = "zero-access-body-marker-\(UUID().uuidString)"
            _ = try await backend.call(SendResponse.self, .POST, APIRoute.send, token: login.accessToken,
                                       body: try JSONEncoder().encode(try await backend.sendRequest(
                                           login, DemoAccounts.alice, to: [DemoAccounts.demo.address], subject: "Subject \(marker)",
                                           html: "<p>\(marker)</p>", attachments: [("n.txt", "text/plain", Data(marker.utf8))])))
            await backend.stop()
            var everything = Data()
            let files = FileManager.default.enumerator(at: backend.folder, includingPropertiesForKeys: nil)!
            for case let url as URL in files where url.pathExtension != "log" {
                everything.append((try? Data(contentsOf: url)) ?? Data())
            }
            #expect(everything.count > 10_000)
            for secret in [marker, "Lunch on Thursday", "list-manage.com", "onerror=", DemoAccounts.demo.loginPassword,
                           DemoAccounts.demo.mailboxPassword, login.accessToken, login.refreshToken] {
                #expect(everything.range(of: Data(secret.utf8)) == nil, "found \(secret) at rest")
            }
            try? FileManager.default.removeItem(at: backend.folder)
        }
    }

    @Test func sendDeliversSealedToTheRecipientKeepsASentCopyAndRecordsEvents() async throws {
        try await TestBackend.with { backend in
            let demo = try await backend.login(DemoAccounts.demo)
            let alice = try await backend.login(DemoAccounts.alice)
            let start = try await backend.call(EventsResponse.self, .GET, APIRoute.events, token: alice.accessToken)
            #expect(!start.events.isEmpty && !start.more)

            let sent = try await backend.call(SendResponse.self, .POST, APIRoute.send, token: demo.accessToken,
                                              body: try JSONEncoder().encode(try await backend.sendRequest(
                                                  demo, DemoAccounts.demo, to: [DemoAccounts.alice.address], subject: "Hello Alice", html: "<p>Hi!</p>")))
            #expect(sent.messageIds.count == 2)
            let events = try await backend.call(EventsResponse.self, .GET, APIRoute.events + "?since=\(start.cursor)", token: alice.accessToken)
            #expect(events.events.map(\.action) == [.create])
            #expect(events.events.first?.kind == .message)
            #expect(events.cursor > start.cursor)
            let delivered = try await backend.call(MessageResponse.self, .GET, APIRoute.message(events.events[0].objectId), token: alice.accessToken)
            let content = try delivered.open(with: try alice.mailboxKeys(DemoAccounts.alice.mailboxPassword), userID: alice.userId)
            #expect(content.subject == "Hello Alice")
            #expect(content.sender.address == DemoAccounts.demo.address)
            #expect(delivered.labelIds == [SystemLabel.inbox] && delivered.unread)

            let sentFolder = try await backend.call(MessageListResponse.self, .GET, APIRoute.messages + "?label=sent", token: demo.accessToken)
            #expect(try sentFolder.messages.contains {
                try $0.open(with: demo.mailboxKeys(DemoAccounts.demo.mailboxPassword), userID: demo.userId).subject == "Hello Alice"
            })

            // Changes are events too, with ids that only grow.
            _ = try await backend.call(OKResponse.self, .POST, APIRoute.markRead(delivered.id), token: alice.accessToken)
            _ = try await backend.call(OKResponse.self, .DELETE, APIRoute.message(delivered.id), token: alice.accessToken)
            let later = try await backend.call(EventsResponse.self, .GET, APIRoute.events + "?since=\(events.cursor)", token: alice.accessToken)
            #expect(later.events.map(\.action) == [.update, .delete])
            #expect(later.events.map(\.id) == later.events.map(\.id).sorted() && later.events[0].id > events.cursor)
            let gone = try await backend.send(.GET, APIRoute.message(delivered.id), token: alice.accessToken)
            #expect(gone.status.code == 404)

            // Unknown recipients in this server's domain are refused before anything is stored;
            // outside recipients need the message in MIME form (it goes to the outbox).
            let unknown = try await backend.send(.POST, APIRoute.send, token: demo.accessToken,
                                                 json: try await backend.sendRequest(demo, DemoAccounts.demo, to: ["nobody@rampart.test"], subject: "x", html: "x"))
            #expect(unknown.status.code == 422)
            #expect(TestBackend.errorBody(unknown)?.error.code == "send.unknownRecipient")
            let outside = try await backend.send(.POST, APIRoute.send, token: demo.accessToken,
                                                 json: try await backend.sendRequest(demo, DemoAccounts.demo, to: ["nobody@elsewhere.example"], subject: "x", html: "x"))
            #expect(outside.status.code == 400)
            #expect(TestBackend.errorBody(outside)?.error.message.contains("MIME") == true)
        }
    }

    @Test func aUserCannotReachAnotherUsersMessages() async throws {
        try await TestBackend.with { backend in
            let demo = try await backend.login(DemoAccounts.demo)
            let alice = try await backend.login(DemoAccounts.alice)
            let demoInbox = try await backend.call(MessageListResponse.self, .GET, APIRoute.messages, token: demo.accessToken)
            let target = try #require(demoInbox.messages.first { !$0.attachments.isEmpty })
            for path in [APIRoute.message(target.id), APIRoute.attachment(target.attachments[0].id)] {
                let response = try await backend.send(.GET, path, token: alice.accessToken)
                #expect(response.status.code == 404)
            }
            #expect(try await backend.send(.DELETE, APIRoute.message(target.id), token: alice.accessToken).status.code == 404)
            #expect(try await backend.send(.GET, APIRoute.message(target.id), token: demo.accessToken).status.code == 200)
        }
    }

    @Test func badRequestsGetPreciseErrors() async throws {
        try await TestBackend.with { backend in
            let login = try await backend.login(DemoAccounts.demo)

            let notJSON = try await backend.send(.POST, APIRoute.auth, body: Data("{\"username\": ".utf8))
            #expect(notJSON.status.code == 400)
            #expect(TestBackend.errorBody(notJSON)?.error.code == "request.malformedJSON")
            let missingField = try await backend.send(.POST, APIRoute.auth, body: Data("{\"Username\": \"demo\"}".utf8))
            #expect(missingField.status.code == 400)
            #expect(TestBackend.errorBody(missingField)?.error.message.contains("ClientEphemeral") == true)
            let wrongType = try await backend.send(.POST, APIRoute.send, token: login.accessToken, body: Data("{\"to\": 5, \"subject\": \"s\", \"html\": \"h\"}".utf8))
            #expect(wrongType.status.code == 400)
            let empty = try await backend.send(.POST, APIRoute.refresh, body: Data())
            #expect(empty.status.code == 400)

            let unknownRoute = try await backend.send(.GET, "/v1/no/such/route", token: login.accessToken)
            #expect(unknownRoute.status.code == 404)
            #expect(TestBackend.errorBody(unknownRoute)?.error.code == "route.notFound")
            let badQuery = try await backend.send(.GET, APIRoute.events + "?since=-4", token: login.accessToken)
            #expect(badQuery.status.code == 400)
            #expect(TestBackend.errorBody(badQuery)?.error.code == "request.invalid")
            let badPage = try await backend.send(.GET, APIRoute.messages + "?pageSize=100000", token: login.accessToken)
            #expect(badPage.status.code == 400)
            let missing = try await backend.send(.GET, APIRoute.message("m-does-not-exist"), token: login.accessToken)
            #expect(missing.status.code == 404)
            #expect(TestBackend.errorBody(missing)?.error.code == "notFound")
            let badLabel = try await backend.send(.POST, APIRoute.messageLabels("m-does-not-exist"), token: login.accessToken,
                                                  json: LabelChangeRequest(add: ["inbox"]))
            #expect(badLabel.status.code == 404)
            // The server is still fine after all that.
            #expect(try await backend.send(.GET, APIRoute.labels, token: login.accessToken).status.code == 200)
        }
    }

    @Test func labelsCanBeChangedAndListsFilterByLabel() async throws {
        try await TestBackend.with { backend in
            let login = try await backend.login(DemoAccounts.demo)
            let labels = try await backend.call(LabelListResponse.self, .GET, APIRoute.labels, token: login.accessToken).labels
            let work = try #require(labels.first { $0.name == "Work" })
            let before = try await backend.call(MessageListResponse.self, .GET, APIRoute.messages + "?label=\(work.id)", token: login.accessToken)
            #expect(before.total == 1)
            let inbox = try await backend.call(MessageListResponse.self, .GET, APIRoute.messages + "?label=inbox&pageSize=2&page=0", token: login.accessToken)
            #expect(inbox.messages.count == 2 && inbox.total == 5)
            let target = try #require(inbox.messages.first { !$0.labelIds.contains(work.id) })
            _ = try await backend.call(OKResponse.self, .POST, APIRoute.messageLabels(target.id), token: login.accessToken,
                                       body: try JSONEncoder().encode(LabelChangeRequest(add: [work.id], remove: [SystemLabel.inbox])))
            let after = try await backend.call(MessageListResponse.self, .GET, APIRoute.messages + "?label=\(work.id)", token: login.accessToken)
            #expect(after.total == 2)
            let moved = try await backend.call(MessageResponse.self, .GET, APIRoute.message(target.id), token: login.accessToken)
            #expect(moved.labelIds.contains(work.id) && !moved.labelIds.contains(SystemLabel.inbox))
        }
    }
}
