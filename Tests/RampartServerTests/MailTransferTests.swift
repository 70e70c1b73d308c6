import Crypto
import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
import RampartServer
import Testing

/// Mail that crosses the edge of the server: imports sealed by their owner, delivery from
/// outside, the outbox for outside recipients, and the originals kept for export.
@Suite("Embedded backend: import, delivery from outside, outbox")
struct MailTransferTests {
    static let outsideMessage = """
        From: "Zoë Outside" <zoe@elsewhere.example>\r
        To: Dana Demo <demo@rampart.test>, alice@rampart.test\r
        Subject: =?UTF-8?Q?Caf=C3=A9_plans?=\r
        Date: Tue, 24 Nov 2026 18:30:00 +0100\r
        Message-ID: <plans-1@elsewhere.example>\r
        MIME-Version: 1.0\r
        Content-Type: multipart/mixed; boundary="b1"\r
        \r
        --b1\r
        Content-Type: text/plain; charset=utf-8\r
        Content-Transfer-Encoding: quoted-printable\r
        \r
        Meet at the caf=C3=A9 at <b>noon</b>. OUTSIDE-MARKER-5521\r
        --b1\r
        Content-Type: application/octet-stream; name="notes.bin"\r
        Content-Disposition: attachment; filename="notes.bin"\r
        Content-Transfer-Encoding: base64\r
        \r
        AAECAwQFBgc=\r
        --b1--\r

        """

    /// A hand-sealed import request, as the client builds one.
    static func importRequest(_ raw: Data, keys: PGPPrivateKey, userID: String, label: String = SystemLabel.inbox) throws -> ImportRequest {
        let id = ImportIdentity.messageID(original: raw, key: try keys.importKey)
        let content = MessageContent(subject: "Imported \(raw.count)", sender: Correspondent(name: "", address: "old@archive.example"),
                                     to: [], html: "<p>old mail</p>")
        let body = try TestParts.seal(try JSONEncoder().encode(content), to: keys.publicKey, userID: userID, messageID: id, part: SealedPartName.body)
        let original = try TestParts.seal(MailOriginal(kind: .message, batch: 7, sequence: 3, bytes: raw).encoded(), to: keys.publicKey,
                                           userID: userID, messageID: id, part: SealedPartName.original)
        let attachmentID = ImportIdentity.attachmentID(messageID: id, index: 0)
        let attachment = try TestParts.seal(Data("attached".utf8), to: keys.publicKey, userID: userID, messageID: id,
                                             part: SealedPartName.attachment(0))
        return ImportRequest(id: id, time: 1_700_000_000, labelIds: [label], unread: false, size: Int64(raw.count),
                             sealedBody: body.base64EncodedString(), sealedOriginal: original.base64EncodedString(),
                             attachments: [ImportAttachment(id: attachmentID, name: "a.txt", mimeType: "text/plain", size: 8,
                                                            contentId: nil, sealedData: attachment.base64EncodedString())])
    }

    @Test func anImportIsStoredOnceAndItsOriginalOpensOnlyWithTheOwnersKey() async throws {
        try await TestBackend.with { backend in
            let login = try await backend.login(DemoAccounts.demo)
            let keys = try login.mailboxKeys(DemoAccounts.demo.mailboxPassword)
            let raw = Data("Subject: old\r\n\r\nfrom the archive\r\n".utf8)
            let request = try Self.importRequest(raw, keys: keys, userID: login.userId)
            let first = try await backend.call(ImportResponse.self, .POST, APIRoute.importMessage, token: login.accessToken,
                                               body: try JSONEncoder().encode(request))
            #expect(first == ImportResponse(messageId: request.id, created: true))
            let second = try await backend.call(ImportResponse.self, .POST, APIRoute.importMessage, token: login.accessToken,
                                                body: try JSONEncoder().encode(request))
            #expect(second == ImportResponse(messageId: request.id, created: false))
            let known = try await backend.call(KnownMessagesResponse.self, .POST, APIRoute.importKnown, token: login.accessToken,
                                               body: try JSONEncoder().encode(KnownMessagesRequest(ids: [request.id, "mi_" + String(repeating: "0", count: 32)])))
            #expect(known.known == [request.id])
            let inbox = try await backend.call(MessageListResponse.self, .GET, APIRoute.messages + "?label=inbox&pageSize=200", token: login.accessToken)
            #expect(inbox.messages.filter { $0.id == request.id }.count == 1)

            let sealed = try await backend.send(.GET, APIRoute.messageOriginal(request.id), token: login.accessToken)
            #expect(sealed.status == .ok)
            let opened = try TestParts.open(sealed.body, with: keys, userID: login.userId, messageID: request.id, part: SealedPartName.original)
            #expect(try MailOriginal(decoding: opened) == MailOriginal(kind: .message, batch: 7, sequence: 3, bytes: raw))
            #expect(throws: MailboxCryptoError.self) {
                try TestParts.open(sealed.body, with: try TestParts.newKey(), userID: login.userId, messageID: request.id,
                                    part: SealedPartName.original)
            }
            // Another user neither sees the original nor can take the id.
            let alice = try await backend.login(DemoAccounts.alice)
            #expect(try await backend.send(.GET, APIRoute.messageOriginal(request.id), token: alice.accessToken).status == .notFound)
            let stolen = try await backend.send(.POST, APIRoute.importMessage, token: alice.accessToken, json: request)
            #expect(stolen.status == .conflict)
            // A message written inside Rampart has no original.
            let seeded = try #require(inbox.messages.first { !$0.id.hasPrefix("mi_") })
            #expect(try await backend.send(.GET, APIRoute.messageOriginal(seeded.id), token: login.accessToken).status == .notFound)
        }
    }

    @Test func malformedImportsAreRefusedWithoutStoringAnything() async throws {
        try await TestBackend.with { backend in
            let login = try await backend.login(DemoAccounts.demo)
            let keys = try login.mailboxKeys(DemoAccounts.demo.mailboxPassword)
            let good = try Self.importRequest(Data("Subject: x\r\n\r\ny\r\n".utf8), keys: keys, userID: login.userId)
            var badID = good; badID.id = "m-chosen-by-me"
            var badAttachment = good; badAttachment.attachments[0].id = "ai_" + String(repeating: "1", count: 32)
            var notSealed = good; notSealed.sealedBody = Data("plain text body".utf8).base64EncodedString()
            var unknownLabel = good; unknownLabel.labelIds = ["l-nope"]
            for (request, status) in [(badID, 400), (badAttachment, 400), (notSealed, 400), (unknownLabel, 404)] {
                let response = try await backend.send(.POST, APIRoute.importMessage, token: login.accessToken, json: request)
                #expect(Int(response.status.code) == status, "\(request.id): \(String(decoding: response.body, as: UTF8.self))")
            }
            let known = try await backend.call(KnownMessagesResponse.self, .POST, APIRoute.importKnown, token: login.accessToken,
                                               body: try JSONEncoder().encode(KnownMessagesRequest(ids: [good.id])))
            #expect(known.known.isEmpty)
        }
    }

    @Test func labelsByNameAreCreatedOnce() async throws {
        try await TestBackend.with { backend in
            let login = try await backend.login(DemoAccounts.demo)
            let first = try await backend.call(APILabel.self, .POST, APIRoute.labels, token: login.accessToken,
                                               body: try JSONEncoder().encode(LabelCreateRequest(name: "Archive 2019")))
            let again = try await backend.call(APILabel.self, .POST, APIRoute.labels, token: login.accessToken,
                                               body: try JSONEncoder().encode(LabelCreateRequest(name: "Archive 2019")))
            #expect(first == again && first.name == "Archive 2019")
            let inbox = try await backend.call(APILabel.self, .POST, APIRoute.labels, token: login.accessToken,
                                               body: try JSONEncoder().encode(LabelCreateRequest(name: SystemLabel.inbox)))
            #expect(inbox.id == SystemLabel.inbox)
            let bad = try await backend.send(.POST, APIRoute.labels, token: login.accessToken, json: LabelCreateRequest(name: "a\u{7}b"))
            #expect(bad.status == .badRequest)
        }
    }

    @Test func mailFromOutsideIsSealedToEachRecipientOnArrivalWithItsOriginal() async throws {
        try await TestBackend.with { backend in
            let raw = Data(Self.outsideMessage.utf8)
            let ids = try OutsideDelivery.deliver(raw, recipients: [], dataDirectory: backend.folder, storage: try TestEngine.current.opener(folder: backend.folder))
            #expect(ids.count == 2)
            for account in [DemoAccounts.demo, DemoAccounts.alice] {
                let login = try await backend.login(account)
                let keys = try login.mailboxKeys(account.mailboxPassword)
                let inbox = try await backend.call(MessageListResponse.self, .GET, APIRoute.messages + "?label=inbox&pageSize=200",
                                                   token: login.accessToken)
                let message = try #require(inbox.messages.first { ids.contains($0.id) })
                let content = try message.open(with: keys, userID: login.userId)
                #expect(content.subject == "Café plans")
                #expect(content.sender == Correspondent(name: "Zoë Outside", address: "zoe@elsewhere.example"))
                #expect(content.messageId == "plans-1@elsewhere.example")
                // A plain-text body is shown as text: escaped, never markup.
                #expect(content.html.contains("&lt;b&gt;noon&lt;/b&gt;") && !content.html.contains("<b>"))
                #expect(message.attachments.map(\.name) == ["notes.bin"] && message.attachments[0].size == 8)
                let original = try await backend.send(.GET, APIRoute.messageOriginal(message.id), token: login.accessToken)
                let opened = try TestParts.open(original.body, with: keys, userID: login.userId, messageID: message.id,
                                                 part: SealedPartName.original)
                #expect(try MailOriginal(decoding: opened).bytes == raw)
            }
            // No cleartext copy at rest (the SQLite file's bytes; on PostgreSQL the cluster's files are its own).
            guard TestEngine.current == .sqlite else { return }
            let database = try Data(contentsOf: backend.folder.appendingPathComponent("backend.sqlite"))
            let wal = (try? Data(contentsOf: backend.folder.appendingPathComponent("backend.sqlite-wal"))) ?? Data()
            for haystack in [database, wal] {
                #expect(haystack.range(of: Data("OUTSIDE-MARKER-5521".utf8)) == nil)
                #expect(haystack.range(of: Data("Meet at the caf".utf8)) == nil)
                #expect(haystack.range(of: Data("zoe@elsewhere.example".utf8)) == nil)
            }
        }
    }

    @Test func anUnknownRecipientOrAnUnreadableMessageStoresNothing() async throws {
        try await TestBackend.with { backend in
            let login = try await backend.login(DemoAccounts.demo)
            func count() async throws -> Int {
                try await backend.call(MessageListResponse.self, .GET, APIRoute.messages, token: login.accessToken).total
            }
            let before = try await count()
            #expect(throws: ServerError.unknownRecipient("nobody@rampart.test")) {
                try OutsideDelivery.deliver(Data(Self.outsideMessage.utf8), recipients: ["demo@rampart.test", "nobody@rampart.test"],
                                            dataDirectory: backend.folder, storage: try TestEngine.current.opener(folder: backend.folder))
            }
            for garbage in [Data(), Data([0xFF, 0xFE, 0x00, 0x01]), Data("no header here, just words\n".utf8)] {
                #expect(throws: ServerError.self) {
                    try OutsideDelivery.deliver(garbage, recipients: ["demo@rampart.test"], dataDirectory: backend.folder, storage: try TestEngine.current.opener(folder: backend.folder))
                }
            }
            #expect(try await count() == before)
            #expect(ServerError.unknownRecipient("x").kind == .notFound)
        }
    }

    @Test func mailToOutsideRecipientsGoesToTheOutboxAsTheClientsMIME() async throws {
        try await TestBackend.with { backend in
            let login = try await backend.login(DemoAccounts.demo)
            let outbox = try #require(backend.server.info.outbox)
            let mime = Data("From: Dana Demo <demo@rampart.test>\r\nTo: zoe@elsewhere.example, alice@rampart.test\r\nSubject: hi\r\n\r\nhello\r\n".utf8)
            let request = try await backend.sendRequest(login, DemoAccounts.demo, to: ["zoe@elsewhere.example", "alice@rampart.test"],
                                                        subject: "hi", html: "<p>hello</p>", mime: mime)
            let response = try await backend.call(SendResponse.self, .POST, APIRoute.send, token: login.accessToken,
                                                  body: try JSONEncoder().encode(request))
            #expect(response.deliveries == [DeliveryReport(address: "alice@rampart.test", route: .local),
                                            DeliveryReport(address: "zoe@elsewhere.example", route: .outbox)])
            let files = Outbox(root: URL(fileURLWithPath: outbox)).pending()
            #expect(files.count == 1)
            #expect(try Data(contentsOf: files[0]) == mime)
            #expect(try FileManager.default.contentsOfDirectory(atPath: outbox + "/tmp").isEmpty)

            // Outside recipients need the MIME form, and its From must be the sender's.
            let noMIME = try await backend.send(.POST, APIRoute.send, token: login.accessToken,
                                                json: try await backend.sendRequest(login, DemoAccounts.demo, to: ["zoe@elsewhere.example"],
                                                                                    subject: "x", html: "x"))
            #expect(noMIME.status == .badRequest)
            let spoofed = Data("From: ceo@bank.example\r\nTo: zoe@elsewhere.example\r\n\r\nsend money\r\n".utf8)
            let spoof = try await backend.send(.POST, APIRoute.send, token: login.accessToken,
                                               json: try await backend.sendRequest(login, DemoAccounts.demo, to: ["zoe@elsewhere.example"],
                                                                                   subject: "x", html: "x", mime: spoofed))
            #expect(spoof.status == .badRequest)
            #expect(Outbox(root: URL(fileURLWithPath: outbox)).pending().count == 1)
        }
    }

    /// Maildir names sort in the order the messages were written: the microseconds are padded, so
    /// a message written at `.000099` s sorts before one written at `.123456` s of the same second
    /// (unpadded, `M99` sorted after `M123456`, and `pending()` listed them out of order).
    @Test(arguments: [(Int(1_764_000_000), Int32(99), Int(1_764_000_000), Int32(123_456)),
                      (Int(1_764_000_000), Int32(999_999), Int(1_764_000_001), Int32(0)),
                      (Int(999_999_999), Int32(5), Int(1_000_000_000), Int32(5))])
    func outboxNamesSortInWritingOrder(firstSeconds: Int, firstMicros: Int32, secondSeconds: Int, secondMicros: Int32) {
        var first = timeval(), second = timeval()
        first.tv_sec = .init(firstSeconds); first.tv_usec = .init(firstMicros)
        second.tv_sec = .init(secondSeconds); second.tv_usec = .init(secondMicros)
        let a = Outbox.uniqueName(at: first), b = Outbox.uniqueName(at: second)
        #expect(a < b, "\(a) should sort before \(b)")
    }
}
