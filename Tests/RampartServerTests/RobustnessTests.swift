import Foundation
import NIOHTTP1
import RampartAPI
import RampartCore
import RampartServer
import Testing

@Suite("Embedded backend: hostile requests and concurrency")
struct RobustnessTests {
    @Test func garbageBodiesOnEveryRouteGetA4xxAndTheServerGoesOn() async throws {
        try await TestBackend.with { backend in
            let login = try await backend.login(DemoAccounts.demo)
            var generator = SystemRandomNumberGenerator()
            let nested = String(repeating: "[", count: 100_000)
            let bodies: [Data] = [
                Data((0..<512).map { _ in UInt8.random(in: 0...255, using: &generator) }),
                Data("{\"to\": [\"demo@rampart.test\"], \"subject\": ".utf8),
                Data(nested.utf8),
                Data("null".utf8),
                Data("{\"username\": \"demo\", \"password\": 12}".utf8),
                Data("{\"sealedName\": \"***\", \"blockIds\": [], \"size\": -1}".utf8),
                Data("{\"sessionId\": \"../../etc\", \"publicKey\": \"\", \"authSecret\": \"\"}".utf8),
            ]
            let routes: [(HTTPMethod, String)] = [
                (.POST, APIRoute.auth), (.POST, APIRoute.authInfo), (.POST, APIRoute.refresh), (.POST, APIRoute.send), (.POST, APIRoute.pushSubscriptions),
                (.POST, APIRoute.driveNodes), (.PUT, APIRoute.driveNode("n-x")), (.POST, APIRoute.messageLabels("m-x")),
            ]
            for (method, path) in routes {
                for body in bodies {
                    let response = try await backend.send(method, path, token: login.accessToken, body: body)
                    #expect((400..<500).contains(Int(response.status.code)), "\(method) \(path) → \(response.status.code)")
                    #expect(TestBackend.errorBody(response) != nil, "\(method) \(path): the error has the APIErrorBody shape")
                }
            }
            // Odd paths and ids.
            for path in ["/v1/messages/%00", "/v1/messages/" + String(repeating: "a", count: 4000), "/v1/attachments/..%2f..%2fbackend.sqlite",
                         "/v1/drive/blocks/'%20OR%201=1", "/v1/events?since=abc", "/v1/messages?page=-1"] {
                let response = try await backend.send(.GET, path, token: login.accessToken)
                #expect((400..<500).contains(Int(response.status.code)), "\(path) → \(response.status.code)")
            }
            #expect(try await backend.send(.GET, APIRoute.labels, token: login.accessToken).status == .ok)
        }
    }

    @Test func concurrentSendsGetDistinctGrowingEventIds() async throws {
        try await TestBackend.with { backend in
            let demo = try await backend.login(DemoAccounts.demo)
            let alice = try await backend.login(DemoAccounts.alice)
            let start = try await backend.call(EventsResponse.self, .GET, APIRoute.events, token: alice.accessToken).cursor
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<12 {
                    group.addTask {
                        _ = try await backend.call(SendResponse.self, .POST, APIRoute.send, token: demo.accessToken,
                                                   body: try JSONEncoder().encode(try await backend.sendRequest(
                                                       demo, DemoAccounts.demo, to: [DemoAccounts.alice.address], subject: "Parallel \(index)", html: "x")))
                    }
                }
                try await group.waitForAll()
            }
            let events = try await backend.call(EventsResponse.self, .GET, APIRoute.events + "?since=\(start)", token: alice.accessToken)
            #expect(events.events.count == 12)
            #expect(Set(events.events.map(\.objectId)).count == 12)
            #expect(events.events.map(\.id) == events.events.map(\.id).sorted())
            let keys = try alice.mailboxKeys(DemoAccounts.alice.mailboxPassword)
            var subjects: Set<String> = []
            for event in events.events {
                let message = try await backend.call(MessageResponse.self, .GET, APIRoute.message(event.objectId), token: alice.accessToken)
                subjects.insert(try message.open(with: keys, userID: alice.userId).subject)
            }
            #expect(subjects == Set((0..<12).map { "Parallel \($0)" }))
        }
    }
}
