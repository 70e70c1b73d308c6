import Crypto
import Foundation
import MailboxCrypto
import OpenPGP
import PinnedTransport
import RampartAPI
@testable import RampartClient
import RampartCore
@testable import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing

/// Several `rampart server start` processes on one data folder: they serve one identity (TLS
/// pins, SRP modulus key, key log key) however they race at the first start, and a client given
/// the list of their addresses goes on through another when one is killed with SIGKILL, never
/// past a certificate or key it does not trust.
///
/// Trust-model row **transport (network), low trust — a person in the middle**.
@Suite("Several server processes on one data folder (shared identity, client failover)", .serialized)
struct ServerProcessesTests {
    /// Two processes started at the same moment on an empty folder: one creates the keys (and the
    /// demo accounts), the other loads them, so both publish the same pins and modulus key.
    @Test func processesStartedTogetherOnAFreshFolderServeOneIdentity() async throws {
        let home = try TemporaryHome("processes")
        defer { home.remove() }
        let data = home.child("server")
        async let startA = ServerProcess.start(data: data, infoFile: home.child("a.json"))
        async let startB = ServerProcess.start(data: data, infoFile: home.child("b.json"))
        let (a, b) = try await (startA, startB)
        defer { a.stopInBackground(); b.stopInBackground() }
        #expect(a.info.port != b.info.port)
        #expect(a.info.pins == b.info.pins)
        #expect(a.info.certificatePEM == b.info.certificatePEM)
        #expect(a.info.modulusKeyFingerprint != nil && a.info.modulusKeyFingerprint == b.info.modulusKeyFingerprint)
        #expect(a.info.keyLog?.logKey != nil && a.info.keyLog?.logKey == b.info.keyLog?.logKey)
        // What they serve is what the folder holds (no process kept a key it made and lost the rename race with).
        let onDisk = try ServerIdentity.loadOrCreate(in: data.appendingPathComponent("tls", isDirectory: true))
        #expect(try onDisk.pins == a.info.pins)
        // The demo accounts were made once: one demo user, listed by either's database.
        let users = try await CLITool.rampart.run(["server", "users", "list", "--data", data.path])
        #expect(users.status == 0, "\(users.stderr)")
        #expect(users.stdout.split(separator: "\n").filter { $0.contains(DemoAccounts.demo.address) }.count == 1, "\(users.stdout)")
    }

    /// A client with both addresses logs in and stores a drive block through the first; the first
    /// is killed (-9); the same client goes on through the second (a read and a write), a new
    /// client logs in through it, and the block stored before the kill is there, byte for byte.
    /// A list whose first address serves another CA's certificate stops there: no failover past
    /// an interception.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aClientGoesOnThroughAnotherProcessWhenOneIsKilled() async throws {
        let (home, a, b) = try await Self.twoProcesses("failover")
        defer { a.stopInBackground(); b.stopInBackground(); home.remove() }
        var endpoint = ServerEndpoint(serverInfo: a.info)
        endpoint.alternateURLs = [b.info.baseURL]
        let demo = DemoAccounts.demo
        try await onThreadsOfItsOwn {
            try await APIClient(endpoint: endpoint).closing { api in
                _ = try await api.login(username: demo.username, password: demo.loginPassword)
                let before = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7) })
                let stored = try await api.uploadBlock(before)
                #expect(stored.sha256 == SHA256.hash(data: before).map { String(format: "%02x", $0) }.joined())

                a.child.kill(SIGKILL)
                #expect(!a.child.isRunning)
                // A read and a write go on through the second process, with the same session.
                #expect(try await api.block(stored.blockId) == before)
                let after = Data("after the kill".utf8)
                let second = try await api.uploadBlock(after)
                #expect(try await api.block(second.blockId) == after)
                #expect(try await api.events(since: 0).events.isEmpty == false)
            }
            // A new login (two SRP steps) with the dead address first.
            try await APIClient(endpoint: endpoint).closing { api in
                let login = try await api.login(username: demo.username, password: demo.loginPassword)
                #expect(!login.tokens.accessToken.isEmpty)
            }
            // Only the dead address: the failure is a transport error, not a hang or a crash.
            await #expect(throws: ClientError.self) {
                try await APIClient(endpoint: ServerEndpoint(serverInfo: a.info)).closing { api in
                    _ = try await api.login(username: demo.username, password: demo.loginPassword)
                }
            }
        }

        // A server with another CA and keys first in the list: its untrusted chain stops the
        // request there (had it gone on to the second address, the login would have succeeded).
        let other = try await ServerProcess.start(data: home.child("other"), arguments: ["--no-demo"], infoFile: home.child("other.json"))
        defer { other.stopInBackground() }
        var mixed = ServerEndpoint(serverInfo: b.info)
        mixed.url = other.info.baseURL
        mixed.alternateURLs = [b.info.baseURL]
        try await onThreadsOfItsOwn {
            await #expect {
                try await APIClient(endpoint: mixed).closing { api in
                    _ = try await api.login(username: demo.username, password: demo.loginPassword)
                }
            } throws: { error in
                "\(error)".contains("not trusted")
            }
        }
    }

    /// New mail reaches every process: the event log is in the database, so a client syncing from
    /// process B (its cursor taken before) sees, in its next page, the copy of a message demo
    /// sent through process A, and reads the same sealed body. (Polling the shared event log,
    /// which every client does anyway, rather than pushing between processes.)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func mailSentThroughOneProcessIsSeenThroughAnother() async throws {
        let (home, a, b) = try await Self.twoProcesses("events")
        defer { a.stopInBackground(); b.stopInBackground(); home.remove() }
        let demo = DemoAccounts.demo, alice = DemoAccounts.alice
        try await onThreadsOfItsOwn {
            try await APIClient(endpoint: ServerEndpoint(serverInfo: b.info)).closing { onB in
                _ = try await onB.login(username: alice.username, password: alice.loginPassword)
                var cursor: Int64 = 0
                while true {
                    let page = try await onB.events(since: cursor)
                    cursor = page.cursor
                    if !page.more { break }
                }
                let key = try PGPPrivateKey.generate(name: "test", address: "test@localhost")
                let id = SendRequest.newID()
                let body = try MailPart.seal(Data("{}".utf8), to: [key.publicKey], signedBy: nil, messageID: id, part: SealedPartName.body)
                try await APIClient(endpoint: ServerEndpoint(serverInfo: a.info)).closing { onA in
                    _ = try await onA.login(username: demo.username, password: demo.loginPassword)
                    _ = try await onA.send(SendRequest(to: [alice.address], id: id, subject: "through A", encryptedBody: body.base64EncodedString()))
                }
                let page = try await onB.events(since: cursor)
                let copy = try #require(page.events.first { $0.kind == .message && $0.action == .create }?.objectId)
                #expect(copy.hasPrefix(id))
                #expect(try await onB.message(copy).sealedBody == body.base64EncodedString())
            }
        }
    }

    /// Two processes behind HAProxy (Debian, TCP mode: TLS goes through to the servers, so the
    /// pins are the servers'): a client knows one address; one process is killed -9 and every
    /// request still succeeds (HAProxy redispatches a refused connection and its health check
    /// takes the dead one out), the block stored before the kill included. `balance first`: every
    /// connection goes to A while it lives, so the kill is of the process that served (a login's
    /// two SRP steps may meet two processes: `SharedLoginStateTests`).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func twoProcessesBehindHAProxyServeOneAddress() async throws {
        let (home, a, b) = try await Self.twoProcesses("haproxy")
        defer { a.stopInBackground(); b.stopInBackground(); home.remove() }
        let port = LoopbackPort.free()
        #expect(port > 0)
        let configuration = home.child("haproxy.cfg")
        try """
            global
                maxconn 256
            defaults
                mode tcp
                timeout connect 2s
                timeout client 60s
                timeout server 60s
                retries 3
                option redispatch
            frontend rampart
                bind 127.0.0.1:\(port)
                default_backend servers
            backend servers
                balance first
                server a 127.0.0.1:\(a.info.port) check inter 200ms fall 1 rise 2
                server b 127.0.0.1:\(b.info.port) check inter 200ms fall 1 rise 2

            """.write(to: configuration, atomically: true, encoding: .utf8)
        let haproxy = try CLITool(path: URL(fileURLWithPath: "/usr/sbin/haproxy")).spawn(["-db", "-f", configuration.path])
        defer { haproxy.kill() }
        var endpoint = ServerEndpoint(serverInfo: a.info)
        endpoint.url = URL(string: "https://localhost:\(port)")!
        let demo = DemoAccounts.demo
        try await onThreadsOfItsOwn {
            // HAProxy is listening once a connection goes through.
            var ready = false
            for _ in 0..<100 where !ready {
                ready = (try? await APIClient(endpoint: endpoint).closing { api in
                    _ = try await api.login(username: demo.username, password: demo.loginPassword)
                }) != nil
                if !ready { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(ready, "haproxy: \(haproxy.stderr)")
            try await APIClient(endpoint: endpoint).closing { api in
                _ = try await api.login(username: demo.username, password: demo.loginPassword)
                let before = Data("stored before the kill".utf8)
                let stored = try await api.uploadBlock(before)
                a.child.kill(SIGKILL)
                for round in 0..<6 {
                    #expect(try await api.block(stored.blockId) == before)
                    let more = Data("after the kill \(round)".utf8)
                    #expect(try await api.block(try await api.uploadBlock(more).blockId) == more)
                }
            }
            try await APIClient(endpoint: endpoint).closing { api in
                _ = try await api.login(username: demo.username, password: demo.loginPassword)
            }
        }
    }

    /// A backup with `pg_dump` restored with `pg_restore` into a new database: a server on the
    /// restored database (same data folder: same keys) logs the demo account in with SRP (the
    /// verifier came back), serves every message's sealed body and a drive block byte for byte as
    /// before, so the mail opens with the same key. PostgreSQL from `scripts/services/postgres.sh`.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func aPgDumpRestoredIntoANewDatabaseServesTheSameAccountsAndMail() async throws {
        let server = try #require(ProcessInfo.processInfo.environment["RAMPART_POSTGRES_URL"],
                                  "RAMPART_POSTGRES_URL (source scripts/services/postgres.sh)")
        let home = try TemporaryHome("pgdump")
        defer { home.remove() }
        let psql = CLITool(path: URL(fileURLWithPath: "/usr/bin/psql"))
        let names = ["rampart_dump_source_\(getpid())", "rampart_dump_restored_\(getpid())"]
        func url(_ name: String) -> String {
            var components = URLComponents(string: server)!
            components.path = "/" + name
            return components.string!
        }
        for name in names { #expect(try await psql.run([server, "-q", "-c", "CREATE DATABASE \(name)"]).status == 0) }
        defer { for name in names { _ = try? psql.run([server, "-q", "-c", "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"]) } }
        let data = home.child("server")
        let demo = DemoAccounts.demo
        func snapshot(_ info: ServerInfo, block: String?) async throws -> (bodies: [String: String], block: String, blockDigest: String) {
            try await onThreadsOfItsOwn {
                try await APIClient(endpoint: ServerEndpoint(serverInfo: info)).closing { api in
                    _ = try await api.login(username: demo.username, password: demo.loginPassword)
                    var id = block ?? ""
                    if block == nil { id = try await api.uploadBlock(Data("drive block before the backup".utf8)).blockId }
                    var bodies: [String: String] = [:]
                    for event in try await api.events(since: 0).events where event.kind == .message && event.action == .create {
                        bodies[event.objectId] = SHA256.hash(data: Data(try await api.message(event.objectId).sealedBody.utf8)).description
                    }
                    return (bodies, id, SHA256.hash(data: try await api.block(id)).description)
                }
            }
        }
        let source = try await ServerProcess.start(data: data, arguments: ["--database", url(names[0])], infoFile: home.child("source.json"))
        let before = try await snapshot(source.info, block: nil)
        await source.stopAndWait()
        #expect(before.bodies.count >= 5)
        let dump = home.child("rampart.dump")
        let dumped = try await CLITool(path: URL(fileURLWithPath: "/usr/bin/pg_dump")).run(["--format=custom", "--file=\(dump.path)", url(names[0])])
        #expect(dumped.status == 0, "\(dumped.stderr)")
        let restored = try await CLITool(path: URL(fileURLWithPath: "/usr/bin/pg_restore")).run(["--no-owner", "--dbname=\(url(names[1]))", dump.path])
        #expect(restored.status == 0, "\(restored.stderr)")
        let again = try await ServerProcess.start(data: data, arguments: ["--database", url(names[1]), "--no-demo"], infoFile: home.child("restored.json"))
        defer { again.stopInBackground() }
        let after = try await snapshot(again.info, block: before.block)
        #expect(after.bodies == before.bodies)
        #expect(after.blockDigest == before.blockDigest)
    }

    /// Two `rampart server start` processes, A then B, on the data folder `server` of a new home,
    /// each with its own description file.
    static func twoProcesses(_ label: String) async throws -> (TemporaryHome, ServerProcess, ServerProcess) {
        let home = try TemporaryHome(label)
        let data = home.child("server")
        let a = try await ServerProcess.start(data: data, infoFile: home.child("a.json"))
        let b = try await ServerProcess.start(data: data, infoFile: home.child("b.json"))
        return (home, a, b)
    }

    /// Which failures send a request on to the next address.
    @Test func onlyRequestsTheFirstAddressCannotHaveActedOnGoElsewhere() {
        let refused = PinnedTransportError.connectionFailed(host: "localhost", port: 1, reason: "refused")
        #expect(APIClient.mayTryNext(refused, method: .POST))
        #expect(APIClient.mayTryNext(refused, method: .GET))
        for cut in [PinnedTransportError.malformedResponse("closed mid-answer"), .timedOut(host: "localhost", seconds: 60),
                    .tlsFailed(host: "localhost", reason: "unclean shutdown")] {
            #expect(APIClient.mayTryNext(cut, method: .GET))
            #expect(!APIClient.mayTryNext(cut, method: .POST))
        }
        #expect(!APIClient.mayTryNext(.pinMismatch(host: "localhost", port: 1, servedPins: []), method: .GET))
        #expect(!APIClient.mayTryNext(.chainValidationFailed(host: "localhost", reason: "untrusted"), method: .GET))
    }
}
