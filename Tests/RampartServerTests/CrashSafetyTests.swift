import Foundation
import OpenPGP
import PinnedTransport
import RampartAPI
import RampartCore
import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing

@Suite("Embedded backend: crash safety")
struct CrashSafetyTests {
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aServerKilledMidWriteRestartsWithEverySendWhole() async throws {
        let folder = TestBackend.newFolder()
        defer {
            try? FileManager.default.removeItem(at: folder)
            TestEngine.current.dropDatabase(folder: folder)
        }
        // On PostgreSQL the child serves the database the in-process restart below opens.
        let database = TestEngine.current == .postgresql ? ["--database", try TestEngine.databaseURL(folder: folder)] : []
        _ = try TestEngine.current.opener(folder: folder)
        let server = try await ServerProcess.start(data: folder, arguments: database)
        let info = server.info
        let client = try TestBackend.client(for: info)
        defer { Task { try? await client.shutdown() } }
        func post(_ path: String, _ token: String?, _ body: some Encodable) async throws -> PinnedResponse {
            var request = PinnedRequest(method: .POST, url: URL(string: info.baseURL.absoluteString + path)!, body: try JSONEncoder().encode(body))
            if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
            return try await client.send(request)
        }
        // On threads of its own: the server process forgets an SRP session after 180 s.
        let login = try await onThreadsOfItsOwn {
            try await SRPTestClient.login(info: info, username: "demo", password: DemoAccounts.demo.loginPassword) { path, body in
                try await post(path, nil, body).body
            }
        }
        let signer = try login.mailboxKeys(DemoAccounts.demo.mailboxPassword)
        var keyRequest = PinnedRequest(method: .GET, url: URL(string: info.baseURL.absoluteString + APIRoute.publicKey + "?address=\(DemoAccounts.alice.address)")!)
        keyRequest.headers.add(name: "Authorization", value: "Bearer \(login.accessToken)")
        let aliceKey = try PGPPublicKey(armored: try JSONDecoder().decode(PublicKeyResponse.self, from: try await client.send(keyRequest).body).publicKey)
        let blob = Data(repeating: 0xAB, count: 256 * 1024)

        // Sends in flight (4 at a time) while the process is killed with SIGKILL (no shutdown, no
        // flush), once at least 8 have been answered.
        let answered = Counter()
        let total = 400
        let sender = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<total {
                    if index >= 4 { try await group.next() }
                    group.addTask {
                        let request = try SendRequest.encrypted(signer: signer, account: DemoAccounts.demo, keys: [signer.publicKey, aliceKey],
                                                                to: [DemoAccounts.alice.address], subject: "Crash \(index)", html: "<p>\(index)</p>",
                                                                attachments: [("blob.bin", "application/octet-stream", blob)])
                        if (try? await post(APIRoute.send, login.accessToken, request))?.status == .ok {
                            await answered.increment()
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        for _ in 0..<1200 where await answered.value < 8 { try await Task.sleep(for: .milliseconds(50)) }
        server.child.kill(SIGKILL)
        _ = try? await sender.value
        let acknowledged = await answered.value
        #expect(server.child.process.terminationReason == .uncaughtSignal)

        // Restart in-process on the same folder.
        let backend = try await TestBackend.start(folder: folder)
        let demo = try await backend.login(DemoAccounts.demo)
        let alice = try await backend.login(DemoAccounts.alice)
        let demoKeys = try demo.mailboxKeys(DemoAccounts.demo.mailboxPassword)
        let aliceKeys = try alice.mailboxKeys(DemoAccounts.alice.mailboxPassword)
        func crashSubjects(_ login: LoginResponse, _ keys: PGPPrivateKey, label: String) async throws -> [String] {
            let list = try await backend.call(MessageListResponse.self, .GET, APIRoute.messages + "?label=\(label)&pageSize=200", token: login.accessToken)
            var subjects: [String] = []
            for message in list.messages {
                let content = try message.open(with: keys, userID: login.userId)
                guard content.subject.hasPrefix("Crash ") else { continue }
                subjects.append(content.subject)
                // Whole: the attachment row and its sealed bytes are there and open.
                #expect(message.attachments.count == 1)
                let sealed = try await backend.send(.GET, APIRoute.attachment(message.attachments[0].id), token: login.accessToken)
                let plain = try TestParts.open(sealed.body, with: keys, userID: login.userId, messageID: message.id,
                                               part: SealedPartName.attachment(0))
                #expect(plain.count == 256 * 1024)
            }
            return subjects.sorted()
        }
        let sent = try await crashSubjects(demo, demoKeys, label: SystemLabel.sent)
        let received = try await crashSubjects(alice, aliceKeys, label: SystemLabel.inbox)
        // A send is one transaction: the Sent copy exists exactly when the delivery does.
        #expect(sent == received)
        // Every send the server acknowledged is there (a 200 is sent only after the commit), and the
        // kill came before the end of the run.
        #expect(sent.count >= acknowledged)
        #expect(sent.count < total)
        // Every stored message has its event, and every message event its message.
        let events = try await backend.call(EventsResponse.self, .GET, APIRoute.events, token: alice.accessToken)
        let all = try await backend.call(MessageListResponse.self, .GET, APIRoute.messages + "?pageSize=200", token: alice.accessToken)
        #expect(Set(events.events.filter { $0.kind == .message }.map(\.objectId)) == Set(all.messages.map(\.id)))
        await backend.stop()
        print("crash test: \(acknowledged) sends acknowledged, \(sent.count) of \(total) committed before SIGKILL")
    }
}

actor Counter {
    private(set) var value = 0
    func increment() { value += 1 }
}
