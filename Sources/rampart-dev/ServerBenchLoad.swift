import Crypto
import Foundation
import RampartAPI
import RampartClient
import RampartCore

/// The simulated clients of `bench server`, the check of what the server acknowledged, and the
/// sync-time table.
extension ServerBenchRun {
    /// The Web Push registration body (`PushRegistration`'s JSON) with a fresh P-256 key.
    struct PushBody: Encodable {
        var sessionId: String
        var publicKey: String
        var authSecret: String

        init(session: String) {
            func base64URL(_ data: Data) -> String {
                data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: "")
            }
            sessionId = session
            publicKey = base64URL(P256.KeyAgreement.PrivateKey().publicKey.x963Representation)
            authSecret = base64URL(Data((0..<16).map { _ in UInt8.random(in: 0...255) }))
        }
    }

    /// Runs `size.clients` simulated clients until the time is up.
    func load(endpoints: [ServerEndpoint], addresses: [String], recorder: BenchRecorder) async throws {
        let deadline = ContinuousClock.now + .seconds(size.seconds)
        let attachment = try Self.sealedBody(bytes: 32_768)
        await withTaskGroup(of: Void.self) { group in
            for client in 0..<size.clients {
                group.addTask {
                    await simulatedClient(client, endpoint: endpoints[client % endpoints.count], addresses: addresses,
                                          attachment: attachment, deadline: deadline, recorder: recorder)
                }
            }
        }
    }

    /// One client: logs in, then syncs, sends, uploads, registers push and logs in again, in a
    /// weighted random order (sync 40 %, send 20 %, drive 20 %, push 10 %, login 10 %).
    func simulatedClient(_ client: Int, endpoint: ServerEndpoint, addresses: [String], attachment: String,
                         deadline: ContinuousClock.Instant, recorder: BenchRecorder) async {
        let account = client % size.accounts
        var api: APIClient?
        var session = ""
        var cursor: Int64 = 0
        defer { if let api { Task { await api.shutdown() } } }
        while ContinuousClock.now < deadline {
            let roll = Int.random(in: 0..<100)
            do {
                if api == nil || roll >= 90 {
                    if let old = api { await old.shutdown() }
                    api = nil
                    let fresh = try APIClient(endpoint: endpoint)
                    let login = try await recorder.time("login (SRP, 2 requests)") {
                        try await fresh.login(username: Self.username(account), password: Self.password(account))
                    }
                    api = fresh
                    session = login.sessionId
                    continue
                }
                guard let api else { continue }
                switch roll {
                case 0..<40:
                    let page = try await recorder.time("sync (events page)") { try await api.events(since: cursor) }
                    cursor = page.cursor
                case 40..<60:
                    let id = SendRequest.newID()
                    let body = try Self.sealedBody(bytes: 200)
                    let to = addresses[Int.random(in: 0..<addresses.count)]
                    _ = try await recorder.time("send + 32 KiB attachment") {
                        try await api.send(SendRequest(to: [to], id: id, subject: "bench", encryptedBody: body, attachments: [
                            OutgoingAttachment(name: "bench.bin", mimeType: "application/octet-stream", size: 32_768, encryptedData: attachment)]))
                    }
                    recorder.acknowledgedSend(id, sender: account, digest: sha256Hex(Data(base64Encoded: body) ?? Data()))
                case 60..<80:
                    let block = Data((0..<65_536).map { _ in UInt8.random(in: 0...255) })
                    let stored = try await recorder.time("drive block 64 KiB") { try await api.uploadBlock(block) }
                    recorder.acknowledgedBlock(stored.blockId, account: account, digest: sha256Hex(block))
                default:
                    try await recorder.time("push registration") { try await api.registerPush(PushBody(session: session)) }
                }
            } catch {
                // Recorded by the recorder; a refused session logs in again.
                if case ClientError.sessionExpired = error { api = nil }
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// Every acknowledged send and block, read back from the server (through the last process,
    /// which was not killed): present once, with the SHA-256 the client computed.
    func verify(_ recorder: BenchRecorder, endpoint: ServerEndpoint, killed: Bool) async throws {
        let sends = recorder.sentBodies, blocks = recorder.blocks
        var accounts = Set(sends.values.map(\.sender)).union(blocks.values.map(\.account))
        var missing = 0, wrong = 0, doubled = 0
        for account in accounts.sorted() {
            try await APIClient(endpoint: endpoint).closing { api in
                _ = try await api.login(username: Self.username(account), password: Self.password(account))
                // The Sent copy of each submission is `<id>.0`; list them all from the event log.
                var sentCopies: [String] = []
                var cursor: Int64 = 0
                while true {
                    let page = try await api.events(since: cursor)
                    sentCopies += page.events.filter { $0.kind == .message && $0.action == .create && $0.objectId.hasSuffix(".0") }.map(\.objectId)
                    cursor = page.cursor
                    if !page.more { break }
                }
                let counts = Dictionary(sentCopies.map { ($0, 1) }, uniquingKeysWith: +)
                for (id, sent) in sends where sent.sender == account {
                    switch counts["\(id).0"] ?? 0 {
                    case 0: missing += 1
                    case 1:
                        let message = try await api.message("\(id).0")
                        if sha256Hex(Data(base64Encoded: message.sealedBody) ?? Data()) != sent.digest { wrong += 1 }
                    default: doubled += 1
                    }
                }
                for (id, block) in blocks where block.account == account {
                    do {
                        if sha256Hex(try await api.block(id)) != block.digest { wrong += 1 }
                    } catch { missing += 1 }
                }
            }
        }
        accounts.removeAll()
        let verdict = missing == 0 && wrong == 0 && doubled == 0 ? "OK" : "FAILED"
        print("acknowledged \(killed ? "(one process killed with SIGKILL under load) " : ""): \(sends.count) sends, \(blocks.count) drive blocks; "
            + "missing \(missing), other bytes \(wrong), stored twice \(doubled): \(verdict)")
    }

    /// The time of a full sync (every events page from 0) of one mailbox as it grows: a fresh
    /// account filled by sends to it alone, median of 3 syncs per size.
    func syncCurve(_ endpoint: ServerEndpoint) async throws -> [String] {
        var rows: [String] = []
        let owner = 0
        let address = try await APIClient(endpoint: endpoint).closing { api in
            try await api.login(username: Self.username(owner), password: Self.password(owner)).user.addresses.first ?? ""
        }
        let body = try Self.sealedBody()
        var filled = 0
        var first: (size: Int, millis: Double)?
        try await APIClient(endpoint: endpoint).closing { api in
            _ = try await api.login(username: Self.username(owner), password: Self.password(owner))
            // The mailbox already holds its seeded share and its Sent copies; count what the log holds.
            for target in size.curve {
                let have = try await eventCount(api)
                filled = max(filled, have)
                if filled < target {
                    let missing = target - filled
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for worker in 0..<4 {
                            group.addTask {
                                for _ in stride(from: worker, to: missing, by: 4) {
                                    _ = try await api.send(SendRequest(to: [address], id: SendRequest.newID(), subject: "curve", encryptedBody: body))
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
                var timing = Timing()
                var events = 0
                for _ in 0..<3 {
                    let start = ContinuousClock.now
                    events = try await eventCount(api)
                    timing.samples.append((ContinuousClock.now - start).inSeconds * 1000)
                }
                filled = events
                let perEvent = timing.median / Double(max(1, events))
                if first == nil { first = (events, timing.median) }
                let ratio = first.map { (timing.median / $0.millis) / (Double(events) / Double($0.size)) } ?? 1
                print(String(format: "full sync of %d events: %.1f ms (%.3f ms per event; time ratio / size ratio vs first: %.2f, linear = 1.00)",
                             events, timing.median, perEvent, ratio))
                rows.append(String(format: "| %@ | full sync, %d events | %.1f ms | %.3f ms/event | %.2f |", setup.name, events, timing.median, perEvent, ratio))
            }
        }
        return rows
    }

    /// Pages through the whole event log; returns how many events it holds.
    func eventCount(_ api: APIClient) async throws -> Int {
        var cursor: Int64 = 0, count = 0
        while true {
            let page = try await api.events(since: cursor)
            count += page.events.count
            cursor = page.cursor
            if !page.more { return count }
        }
    }
}
