import Crypto
import Foundation
import PushCrypto
import RampartAPI
import RampartCore
import RampartServer
import Testing

@Suite("Embedded backend: push delivery, persistence, logs, drive, files")
struct PushAndPersistenceTests {
    static func pushFiles(_ folder: URL) -> [URL] {
        ((try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [])
            .filter { $0.pathExtension == "push" }.sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test func pushDeliveryWritesAFileThatOpensWithTheRegisteredKeys() async throws {
        try await TestBackend.with { backend in
            let demo = try await backend.login(DemoAccounts.demo)
            let alice = try await backend.login(DemoAccounts.alice)
            let pair = try PushKeyPair.generate(sessionID: PushSessionID(demo.sessionId), now: Date())
            let registration = try pair.registration()
            _ = try await backend.call(OKResponse.self, .POST, APIRoute.pushSubscriptions, token: demo.accessToken,
                                       body: try JSONEncoder().encode(registration))
            let inbox = URL(fileURLWithPath: try #require(backend.server.info.pushDirectory)).appendingPathComponent(demo.sessionId)
            #expect(Self.pushFiles(inbox).isEmpty)

            let sent = try await backend.call(SendResponse.self, .POST, APIRoute.send, token: alice.accessToken,
                                              body: try JSONEncoder().encode(try await backend.sendRequest(alice, DemoAccounts.alice, to: [DemoAccounts.demo.address], subject: "Push me", html: "<p>x</p>")))
            let files = Self.pushFiles(inbox)
            #expect(files.count == 1)
            let body = [UInt8](try Data(contentsOf: try #require(files.first)))
            #expect(body.count <= WebPushMessage.maximumBodyLength)
            #expect(Data(body).range(of: Data("Push me".utf8)) == nil)
            let opened = try WebPushMessage.open(body, with: [pair])
            let notification = try PushNotification(decoding: opened.plaintext)
            #expect(notification.subject == "Push me")
            #expect(notification.sender == DemoAccounts.alice.displayName)
            #expect(notification.userId.rawValue == demo.userId)
            #expect(sent.messageIds.contains(notification.messageId))
            // Another key pair (another session's) cannot open it.
            let stranger = try PushKeyPair.generate(sessionID: PushSessionID("other"), now: Date())
            #expect(throws: PushCryptoError.authenticationFailed) { try WebPushMessage.open(body, with: [stranger]) }
            // Files and folders are private.
            let mode = try FileManager.default.attributesOfItem(atPath: files[0].path)[.posixPermissions] as? Int
            #expect(mode == 0o600)

            // A public key is accepted once only, and only for the caller's own session.
            let reused = try await backend.send(.POST, APIRoute.pushSubscriptions, token: demo.accessToken, json: registration)
            #expect(reused.status.code == 409)
            let foreign = try PushKeyPair.generate(sessionID: PushSessionID(alice.sessionId), now: Date()).registration()
            let wrongSession = try await backend.send(.POST, APIRoute.pushSubscriptions, token: demo.accessToken, json: foreign)
            #expect(wrongSession.status.code == 409)
            let malformed = try await backend.send(.POST, APIRoute.pushSubscriptions, token: demo.accessToken,
                                                   json: PushRegistration(sessionId: demo.sessionId, publicKey: "AAAA", authSecret: "BBBB"))
            #expect(malformed.status.code == 400)

            // Logout deletes the subscription and the session's inbox; later mail makes no push.
            _ = try await backend.call(OKResponse.self, .POST, APIRoute.logout, token: demo.accessToken)
            #expect(!FileManager.default.fileExists(atPath: inbox.path))
            _ = try await backend.call(SendResponse.self, .POST, APIRoute.send, token: alice.accessToken,
                                       body: try JSONEncoder().encode(try await backend.sendRequest(alice, DemoAccounts.alice, to: [DemoAccounts.demo.address], subject: "After logout", html: "x")))
            #expect(Self.pushFiles(inbox).isEmpty)
        }
    }

    @Test func restartKeepsAccountsMessagesSessionsEventsAndPins() async throws {
        let folder = TestBackend.newFolder()
        defer {
            try? FileManager.default.removeItem(at: folder)
            TestEngine.current.dropDatabase(folder: folder)  // on PostgreSQL the two servers' database
        }
        let first = try await TestBackend.start(folder: folder)
        let demo = try await first.login(DemoAccounts.demo)
        let alice = try await first.login(DemoAccounts.alice)
        _ = try await first.call(SendResponse.self, .POST, APIRoute.send, token: alice.accessToken,
                                 body: try JSONEncoder().encode(try await first.sendRequest(alice, DemoAccounts.alice, to: [DemoAccounts.demo.address], subject: "Survives a restart", html: "x")))
        let before = try await first.call(MessageListResponse.self, .GET, APIRoute.messages, token: demo.accessToken)
        let cursor = try await first.call(EventsResponse.self, .GET, APIRoute.events, token: demo.accessToken).cursor
        let pins = first.server.pins
        await first.stop()
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("server.json").path))

        let second = try await TestBackend.start(folder: folder)
        #expect(second.server.pins == pins)
        // The session made before the restart still works, and nothing was seeded twice.
        let after = try await second.call(MessageListResponse.self, .GET, APIRoute.messages, token: demo.accessToken)
        #expect(after.total == before.total)
        #expect(after.messages.map(\.id) == before.messages.map(\.id))
        let keys = try demo.mailboxKeys(DemoAccounts.demo.mailboxPassword)
        #expect(try after.messages.contains { try $0.open(with: keys, userID: demo.userId).subject == "Survives a restart" })
        let events = try await second.call(EventsResponse.self, .GET, APIRoute.events + "?since=\(cursor)", token: demo.accessToken)
        #expect(events.events.isEmpty && events.cursor == cursor)
        let relogin = try await second.login(DemoAccounts.demo)
        #expect(relogin.userId == demo.userId && relogin.keys.publicKey == demo.keys.publicKey)
        await second.stop()
    }

    @Test func theLogRecordsRequestsButNoSecretOrPlaintext() async throws {
        try await TestBackend.with { backend in
            let wrongPassword = "known-wrong-secret-\(UUID().uuidString)"
            _ = try await backend.srpAttempt(username: "demo", password: wrongPassword)
            let login = try await backend.login(DemoAccounts.demo)
            let marker = "body-marker-\(UUID().uuidString)"
            _ = try await backend.call(SendResponse.self, .POST, APIRoute.send, token: login.accessToken,
                                       body: try JSONEncoder().encode(try await backend.sendRequest(
                                           login, DemoAccounts.demo, to: [DemoAccounts.alice.address], subject: "Subject \(marker)", html: "<p>\(marker)</p>")))
            let pair = try PushKeyPair.generate(sessionID: PushSessionID(login.sessionId), now: Date())
            _ = try await backend.call(OKResponse.self, .POST, APIRoute.pushSubscriptions, token: login.accessToken,
                                       body: try JSONEncoder().encode(try pair.registration()))
            _ = try await backend.send(.POST, APIRoute.send, token: login.accessToken, body: Data("{\"to\": [\"\(marker)\"".utf8))
            let tokens = try await backend.call(SessionTokens.self, .POST, APIRoute.refresh,
                                                body: try JSONEncoder().encode(RefreshRequest(refreshToken: login.refreshToken)))
            _ = try await backend.send(.GET, APIRoute.labels, token: tokens.accessToken)
            await backend.stop()

            let log = try String(contentsOf: backend.folder.appendingPathComponent("server.log"), encoding: .utf8)
            // The log is there and says what happened…
            #expect(log.contains("login succeeded"))
            #expect(log.contains("login refused"))
            #expect(log.contains("route=\(APIRoute.send)"))
            #expect(log.contains("status=400"))
            // …and holds none of these.
            let secrets = [wrongPassword, DemoAccounts.demo.loginPassword, DemoAccounts.demo.mailboxPassword, marker,
                           login.accessToken, login.refreshToken, tokens.accessToken, tokens.refreshToken,
                           login.keys.privateKey, try pair.registration().authSecret, "Lunch on Thursday", "Bearer "]
            for secret in secrets { #expect(!log.contains(secret), "the log contains \(secret.prefix(12))…") }
            let mode = try FileManager.default.attributesOfItem(atPath: backend.folder.appendingPathComponent("server.log").path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }

    @Test func driveBlocksAndRevisionsRoundTripAsOpaqueBytes() async throws {
        try await TestBackend.with { backend in
            let login = try await backend.login(DemoAccounts.demo)
            let volume = try await backend.call(DriveVolumeResponse.self, .GET, APIRoute.driveVolume, token: login.accessToken)
            #expect(try await backend.call(DriveVolumeResponse.self, .GET, APIRoute.driveVolume, token: login.accessToken) == volume)

            let blockBytes = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            let block = try await backend.call(DriveBlockResponse.self, .POST, APIRoute.driveBlocks, token: login.accessToken, body: blockBytes)
            #expect(block.sha256 == SHA256.hash(data: blockBytes).map { String(format: "%02x", $0) }.joined())
            let folder = try await backend.call(DriveNodeResponse.self, .POST, APIRoute.driveNodes, token: login.accessToken,
                                                body: try JSONEncoder().encode(DriveNodeRequest(sealedName: Data("sealed-folder".utf8).base64EncodedString(),
                                                                                                parentId: nil, blockIds: [], size: 0, isFolder: true)))
            #expect(folder.parentId == volume.rootNodeId && folder.isFolder == true)
            let file = try await backend.call(DriveNodeResponse.self, .POST, APIRoute.driveNodes, token: login.accessToken,
                                              body: try JSONEncoder().encode(DriveNodeRequest(sealedName: Data("sealed-name".utf8).base64EncodedString(),
                                                                                              parentId: folder.id, blockIds: [block.blockId],
                                                                                              size: Int64(blockBytes.count))))
            #expect(file.blockIds == [block.blockId] && file.revisionId != nil)
            let listed = try await backend.call(DriveNodeListResponse.self, .GET, APIRoute.driveNodes + "?parent=\(folder.id)", token: login.accessToken)
            #expect(listed.nodes == [file])
            let download = try await backend.send(.GET, APIRoute.driveBlock(block.blockId), token: login.accessToken)
            #expect(download.body == blockBytes)

            // A new revision.
            let second = try await backend.call(DriveBlockResponse.self, .POST, APIRoute.driveBlocks, token: login.accessToken, body: Data("v2".utf8))
            let updated = try await backend.call(DriveNodeResponse.self, .PUT, APIRoute.driveNode(file.id), token: login.accessToken,
                                                 body: try JSONEncoder().encode(DriveNodeRequest(sealedName: file.sealedName, parentId: folder.id,
                                                                                                 blockIds: [second.blockId], size: 2)))
            #expect(updated.blockIds == [second.blockId] && updated.revisionId != file.revisionId)
            let revisions = try await backend.call([DriveRevisionResponse].self, .GET, APIRoute.driveRevisions(file.id), token: login.accessToken)
            #expect(revisions.map(\.blockIds) == [[block.blockId], [second.blockId]])

            // Another user sees none of it; unknown blocks and oversize blocks are refused.
            let alice = try await backend.login(DemoAccounts.alice)
            #expect(try await backend.send(.GET, APIRoute.driveBlock(block.blockId), token: alice.accessToken).status.code == 404)
            #expect(try await backend.send(.GET, APIRoute.driveNode(file.id), token: alice.accessToken).status.code == 404)
            let stolen = try await backend.send(.POST, APIRoute.driveNodes, token: alice.accessToken,
                                                json: DriveNodeRequest(sealedName: "bmFtZQ==", parentId: nil, blockIds: [block.blockId], size: 1))
            #expect(stolen.status.code == 404)
            let tooBig = try await backend.send(.POST, APIRoute.driveBlocks, token: login.accessToken, body: Data(count: 4 * 1024 * 1024 + 1),
                                                contentType: "application/octet-stream")
            #expect(tooBig.status.code == 413)

            // Deleting the folder removes the file and its blocks.
            _ = try await backend.call(OKResponse.self, .DELETE, APIRoute.driveNode(folder.id), token: login.accessToken)
            #expect(try await backend.send(.GET, APIRoute.driveBlock(block.blockId), token: login.accessToken).status.code == 404)
            #expect(try await backend.send(.GET, APIRoute.driveNode(file.id), token: login.accessToken).status.code == 404)
        }
    }

    @Test(.enabled(if: TestEngine.current == .sqlite, "checks backend.sqlite's mode; on PostgreSQL the cluster's files are its own"))
    func theDataFolderAndItsKeysArePrivate() async throws {
        try await TestBackend.with { backend in
            func mode(_ path: String) throws -> Int? {
                try FileManager.default.attributesOfItem(atPath: backend.folder.appendingPathComponent(path).path)[.posixPermissions] as? Int
            }
            #expect(try mode("") == 0o700)
            #expect(try mode("tls") == 0o700)
            #expect(try mode("push") == 0o700)
            for file in ["tls/ca-key.pem", "tls/leaf-key.pem", "tls/backup-key.pem", "tls/ca.pem", "tls/leaf.pem", "backend.sqlite",
                     "backend.sqlite-wal", "server.json"] {
                #expect(try mode(file) == 0o600, "\(file)")
            }
            let info = try EmbeddedServer.info(dataDirectory: backend.folder)
            #expect(info.port == backend.server.port && info.pins.count == 2 && info.pins[0] != info.pins[1])
            #expect(info.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        }
    }

    @Test func aSecondServerCannotTakeABusyPort() async throws {
        try await TestBackend.with { backend in
            let folder = TestBackend.newFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            await #expect(throws: ServerError.self) {
                _ = try await EmbeddedServer.start(configuration: EmbeddedServerConfiguration(dataDirectory: folder, port: backend.server.port,
                                                                                               seedDemo: false))
            }
        }
    }
}
