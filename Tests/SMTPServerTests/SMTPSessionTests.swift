import Foundation
import Testing
@testable import SMTPServer

/// A connection whose framer is driven by the session's DATA decisions, as the server's is.
final class ScriptConnection: SMTPSessionConnection, @unchecked Sendable {
    private let lock = NSLock()
    private var written: [UInt8] = []
    private var framer: SMTPInputFramer
    let continuation: AsyncStream<SMTPFrame>.Continuation
    let stream: AsyncStream<SMTPFrame>
    let plaintextAuthAllowed: Bool

    init(limits: SMTPLimits, plaintext: Bool) {
        framer = SMTPInputFramer(limits: limits)
        (stream, continuation) = AsyncStream.makeStream(of: SMTPFrame.self)
        plaintextAuthAllowed = plaintext
    }
    var canStartTLS: Bool { false }
    var isEncrypted: Bool { false }
    func feed(_ bytes: [UInt8]) { let frames = lock.withLock { framer.feed(bytes) }; frames.forEach { continuation.yield($0) } }
    func write(_ bytes: [UInt8]) async throws { lock.withLock { written += bytes } }
    func decideData(accepted: Bool) async {
        let frames = lock.withLock { framer.decideData(accepted: accepted) }
        frames.forEach { continuation.yield($0) }
    }
    func startTLS(after reply: [UInt8]) async throws { try await write(reply) }
    var text: String { lock.withLock { String(decoding: written, as: UTF8.self) } }
}

/// Runs a pipelined script that ends with QUIT (or makes the server close); returns the reply lines.
func smtp(_ script: String, backend: InMemorySubmissionBackend? = nil, limits: SMTPLimits = .default, plaintext: Bool = true) async throws -> [String] {
    let backend = if let backend { backend } else { await sampleSubmissionBackend() }
    let connection = ScriptConnection(limits: limits, plaintext: plaintext)
    connection.feed(Array(script.utf8))
    await SMTPSession(backend: backend, connection: connection, limits: limits).run(frames: connection.stream)
    return connection.text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
}

func sampleSubmissionBackend() async -> InMemorySubmissionBackend {
    let b = InMemorySubmissionBackend()
    await b.addUser("alice", password: "pw", addresses: ["alice@example.org"])
    return b
}

let plainToken = Data("\u{0}alice\u{0}pw".utf8).base64EncodedString()

struct SMTPFramerTests {
    @Test func dataIsDotUnstuffedAndEndsAtTheLoneDot() {
        var f = SMTPInputFramer()
        #expect(f.feed(Array("MAIL FROM:<a@b>\r\nDATA\r\nline\r\n..dot\r\n.\r\nQUIT\r\n".utf8)) == [.line(Array("MAIL FROM:<a@b>".utf8)), .line(Array("DATA".utf8))])
        #expect(f.isWaitingForDataDecision)
        #expect(f.decideData(accepted: true) == [.message(Array("line\r\n.dot\r\n".utf8)), .line(Array("QUIT".utf8))])
    }

    @Test func aRefusedDataLeavesTheFollowingBytesAsCommands() {
        var f = SMTPInputFramer()
        _ = f.feed(Array("DATA\r\nRSET\r\n".utf8))
        #expect(f.decideData(accepted: false) == [.line(Array("RSET".utf8))])
    }

    @Test func theMessageMayArriveAByteAtATime() {
        var f = SMTPInputFramer()
        _ = f.feed(Array("DATA\r\n".utf8))
        var frames = f.decideData(accepted: true)
        for b in Array("a\r\n.b\r\n.\r\n".utf8) { frames += f.feed([b]) }
        #expect(frames == [.message(Array("a\r\nb\r\n".utf8))])
    }

    @Test func aTooLargeMessageIsReadToItsEndAndDropped() {
        var f = SMTPInputFramer(limits: SMTPLimits(maxMessageSize: 10))
        _ = f.feed(Array("DATA\r\n".utf8))
        #expect(f.decideData(accepted: true).isEmpty)
        #expect(f.feed(Array("0123456789abcdef\r\n.\r\nNOOP\r\n".utf8)) == [.messageTooLarge, .line(Array("NOOP".utf8))])
    }

    @Test func aTooLongLineIsSkippedAndBytesAfterStartTLSAreDropped() {
        var f = SMTPInputFramer(limits: SMTPLimits(maxLineLength: 512))
        #expect(f.feed(Array((String(repeating: "x", count: 100_000) + "\r\nNOOP\r\n").utf8)) == [.lineTooLong, .line(Array("NOOP".utf8))])
        #expect(f.feed(Array("STARTTLS\r\nAUTH PLAIN xyz\r\n".utf8)) == [.line(Array("STARTTLS".utf8))])
    }
}

struct SMTPSessionTests {
    @Test func ehloAdvertisesTheSubmissionExtensions() async throws {
        let out = try await smtp("EHLO client.example\r\nQUIT\r\n")
        #expect(out == ["220 localhost Rampart ESMTP submission ready", "250-localhost greets client.example", "250-PIPELINING",
                        "250-SIZE 33554432", "250-8BITMIME", "250-ENHANCEDSTATUSCODES", "250 AUTH PLAIN LOGIN", "221 2.0.0 Bye"])
    }

    @Test func aPipelinedSubmissionIsAcceptedAndNamesItsRecipients() async throws {
        let backend = await sampleSubmissionBackend()
        let out = try await smtp("""
        EHLO c\r
        AUTH PLAIN \(plainToken)\r
        MAIL FROM:<alice@example.org> SIZE=100 BODY=8BITMIME\r
        RCPT TO:<bob@example.org>\r
        RCPT TO:<carol@example.org>\r
        DATA\r
        Subject: hi\r
        \r
        ..leading dot\r
        .\r
        QUIT\r

        """, backend: backend)
        #expect(out.contains("235 2.7.0 Authentication successful"))
        #expect(out.contains("250 2.1.0 Sender <alice@example.org> OK"))
        #expect(out.contains("354 Start mail input; end with <CRLF>.<CRLF>"))
        #expect(out.contains("250 2.0.0 Message accepted: queued as 1 for bob@example.org, carol@example.org"))
        let sent = await backend.submissions
        #expect(sent.count == 1)
        #expect(sent.first?.envelope == SMTPEnvelope(from: "alice@example.org", recipients: ["bob@example.org", "carol@example.org"], eightBit: true))
        #expect(sent.first.map { String(decoding: $0.message, as: UTF8.self) } == "Subject: hi\r\n\r\n.leading dot\r\n")
    }

    @Test func authLoginWorksAndWrongPasswordsAreRefused() async throws {
        let u = Data("alice".utf8).base64EncodedString(), p = Data("pw".utf8).base64EncodedString()
        let out = try await smtp("EHLO c\r\nAUTH LOGIN\r\n\(u)\r\nWRONG\r\nAUTH LOGIN \(u)\r\n\(p)\r\nQUIT\r\n")
        #expect(out.contains("334 VXNlcm5hbWU6") && out.contains("334 UGFzc3dvcmQ6"))
        #expect(out.contains("501 5.7.0 AUTH cancelled or invalid base64") || out.contains("535 5.7.8 Authentication credentials invalid"))
        #expect(out.contains("235 2.7.0 Authentication successful"))
    }

    @Test func aForeignFromIsRefusedWith550() async throws {
        let out = try await smtp("EHLO c\r\nAUTH PLAIN \(plainToken)\r\nMAIL FROM:<mallory@example.org>\r\nQUIT\r\n")
        #expect(out.contains("550 5.7.1 You may not send as mallory@example.org"))
        let proxy = Data("bob\u{0}alice\u{0}pw".utf8).base64EncodedString()
        #expect(try await smtp("EHLO c\r\nAUTH PLAIN \(proxy)\r\nQUIT\r\n").contains("535 5.7.8 Acting as another user (authzid) is not supported"))
    }

    @Test func submissionNeedsAuthenticationAndAuthNeedsTLSUnlessLoopbackPlainText() async throws {
        let out = try await smtp("EHLO c\r\nMAIL FROM:<alice@example.org>\r\nAUTH PLAIN \(plainToken)\r\nQUIT\r\n", plaintext: false)
        #expect(out.contains("530 5.7.0 Authentication required: send AUTH first"))
        #expect(out.contains("538 5.7.11 Encryption required: send STARTTLS first"))
        #expect(!out.contains("250 AUTH PLAIN LOGIN"))
    }

    @Test func badSequencesSizesAndInputGetEnhancedCodesAndTheSessionGoesOn() async throws {
        let limits = SMTPLimits(maxLineLength: 512, maxMessageSize: 50, maxRecipients: 1)
        let out = try await smtp("""
        MAIL FROM:<alice@example.org>\r
        EHLO c\r
        AUTH PLAIN \(plainToken)\r
        RCPT TO:<bob@example.org>\r
        DATA\r
        MAIL FROM:<alice@example.org> SIZE=51\r
        MAIL FROM:alice@example.org\r
        MAIL FROM:<alice@example.org>\r
        RCPT TO:<bob@example.org>\r
        RCPT TO:<carol@example.org>\r
        DATA\r
        \(String(repeating: "y", count: 60))\r
        .\r
        \(String(repeating: "z", count: 600))\r
        FROB\r
        NOOP\r
        QUIT\r

        """, limits: limits)
        #expect(out.contains("503 5.5.1 Send EHLO first"))
        #expect(out.contains("503 5.5.1 Send MAIL first"))
        #expect(out.contains("552 5.3.4 Message size 51 exceeds the limit of 50 bytes"))
        #expect(out.contains("501 5.5.4 Syntax: MAIL FROM:<address> [SIZE=n] [BODY=8BITMIME]"))
        #expect(out.contains("452 4.5.3 Too many recipients (limit 1)"))
        #expect(out.contains("552 5.3.4 Message larger than the limit of 50 bytes"))
        #expect(out.contains("500 5.5.2 Line too long (limit 512 bytes)"))
        #expect(out.contains("500 5.5.2 Unknown command FROB"))
        #expect(out.suffix(2) == ["250 2.0.0 OK", "221 2.0.0 Bye"])
    }

    @Test func refusedRecipientsAreNamedInTheFinalReply() async throws {
        let out = try await smtp("EHLO c\r\nAUTH PLAIN \(plainToken)\r\nMAIL FROM:<alice@example.org>\r\nRCPT TO:<x@nowhere.invalid>\r\nDATA\r\nhi\r\n.\r\nQUIT\r\n")
        #expect(out.contains("550 5.1.1 Cannot send to x@nowhere.invalid: the .invalid domain does not exist"))
    }

    @Test func tooManyErrorsCloseTheConnection() async throws {
        let out = try await smtp(String(repeating: "BAD\r\n", count: 30), limits: SMTPLimits(maxErrors: 3))
        #expect(out.last == "421 4.7.0 Too many errors; closing the connection")
        #expect(out.filter { $0.hasPrefix("500") }.count == 3)
    }
}
