import Foundation
import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing

/// The server's abuse limits (`ServerLimits`, set here through its environment variables), each
/// tried at the limit (accepted) and just past it (a 4xx whose sentence `rampart` shows).
@Suite("Server limits, end to end", .serialized)
struct ServerLimitsEndToEndTests {
    static func server(_ world: EndToEndWorld, _ limits: [String: String]) throws -> ServerProcess {
        try ServerProcess(data: world.serverData, environment: limits.merging(["RAMPART_HOME": world.folder.child("server-home").path]) { $1 })
    }

    @Test func recipientsMessageAndAttachmentSizesAreLimited() async throws {
        let world = try EndToEndWorld()
        let server = try Self.server(world, ["RAMPART_SERVER_MAX_RECIPIENTS": "3", "RAMPART_SERVER_MAX_MESSAGE_BYTES": "262144",
                                             "RAMPART_SERVER_MAX_ATTACHMENT_BYTES": "16384"])
        defer { server.stopInBackground() }
        #expect(try await world.login(DemoAccounts.demo, user: "demo", serverInfo: server.infoFile.path).status == 0)
        func send(to: [String], body: String = "Hi", attach: [URL] = []) async throws -> CLIResult {
            try await world.rampart(["send", "--user", "demo", "--subject", "Limits"] + to.flatMap { ["--to", $0] }
                              + attach.flatMap { ["--attach", $0.path] }, stdin: body + "\n")
        }
        let three = (1...3).map { "r\($0)@elsewhere.example" }
        let atLimit = try await send(to: three)
        #expect(atLimit.status == 0, "3 recipients are accepted: \(atLimit.stderr)")
        let over = try await send(to: three + ["r4@elsewhere.example"])
        #expect(over.status != 0)
        #expect(over.stderr.contains("limit.recipients") && over.stderr.contains("at most 3 per message"), "\(over.stderr)")

        let small = world.root.appendingPathComponent("small.bin"), big = world.root.appendingPathComponent("big.bin")
        try Data(repeating: 0x41, count: 12_000).write(to: small)
        try Data(repeating: 0x42, count: 17_000).write(to: big)
        let attached = try await send(to: ["alice@rampart.test"], attach: [small])
        #expect(attached.status == 0, "a 12,000-byte attachment is accepted: \(attached.stderr)")
        let tooBig = try await send(to: ["alice@rampart.test"], attach: [big])
        #expect(tooBig.status != 0)
        #expect(tooBig.stderr.contains("limit.attachmentSize") && tooBig.stderr.contains("big.bin"), "\(tooBig.stderr)")

        // Twelve 12,000-byte attachments: each under its limit, together (with base64 and the
        // outside recipient's clear MIME copy) past the message limit.
        let many = (0..<12).map { index -> URL in
            let file = world.root.appendingPathComponent("part\(index).bin")
            try? Data((0..<12_000).map { _ in UInt8.random(in: 0...255) }).write(to: file)
            return file
        }
        let tooLarge = try await send(to: ["alice@rampart.test", "x@elsewhere.example"], attach: many)
        #expect(tooLarge.status != 0)
        #expect(tooLarge.stderr.contains("limit.messageSize"), "\(tooLarge.stderr)")
    }

    @Test func theStorageQuotaAndTheRequestRateAreLimited() async throws {
        let world = try EndToEndWorld()
        let server = try Self.server(world, ["RAMPART_SERVER_QUOTA_BYTES": "1", "RAMPART_SERVER_REQUESTS_PER_MINUTE": "8"])
        defer { server.stopInBackground() }
        #expect(try await world.login(DemoAccounts.demo, user: "demo", serverInfo: server.infoFile.path).status == 0)
        let full = try await world.rampart(["send", "--user", "demo", "--to", "alice@rampart.test", "--subject", "Quota"], stdin: "Hi\n")
        #expect(full.status != 0)
        #expect(full.stderr.contains("limit.quota") && full.stderr.contains("storage is full"), "\(full.stderr)")
        let file = world.root.appendingPathComponent("doc.txt")
        try Data("drive".utf8).write(to: file)
        let upload = try await world.rampart(["drive", "upload", file.path, "--user", "demo"])
        #expect(upload.status != 0 && upload.stderr.contains("limit.quota"), "\(upload.stdout) \(upload.stderr)")

        // The same session, again and again: refused once it made 8 requests in a minute (a low
        // limit, so that a loaded machine, where one `rampart sync` may take seconds, still makes
        // them within the minute; the window starts at the session's first request).
        var refused: CLIResult?
        for _ in 0..<30 {
            let sync = try await world.rampart(["sync", "--user", "demo"])
            if sync.status != 0 { refused = sync; break }
        }
        let answer = try #require(refused, "no sync was refused")
        #expect(answer.stderr.contains("HTTP 429") && answer.stderr.contains("limit.rate") && answer.stderr.contains("wait"), "\(answer.stderr)")
    }
}
