import Foundation
import IMAPServer

/// An ``IMAPSessionConnection`` that records what the session writes.
final class RecordingConnection: IMAPSessionConnection, @unchecked Sendable {
    private let lock = NSLock()
    private var data: [UInt8] = []
    let plaintextLoginAllowed: Bool
    init(plaintext: Bool = true) { plaintextLoginAllowed = plaintext }
    var canStartTLS: Bool { false }
    var isEncrypted: Bool { false }
    func write(_ bytes: [UInt8]) async throws { lock.withLock { data += bytes } }
    func startTLS(after response: [UInt8]) async throws { try await write(response) }
    var text: String { lock.withLock { String(decoding: data, as: UTF8.self) } }
}

/// A backend with user alice (password "pw") and three messages in INBOX.
func sampleBackend() async throws -> InMemoryIMAPBackend {
    let backend = InMemoryIMAPBackend()
    await backend.addUser("alice", password: "pw")
    let day: TimeInterval = 86_400
    let base = Date(timeIntervalSince1970: 1_780_000_000)   // 2026-05-28
    try await backend.deliver(Array(Sample.plain.utf8), to: "alice", flags: ["\\Seen"], internalDate: base)
    try await backend.deliver(Array(Sample.multipart.utf8), to: "alice", internalDate: base.addingTimeInterval(day))
    try await backend.deliver(Array(Sample.forwarded.utf8), to: "alice", flags: ["\\Deleted"], internalDate: base.addingTimeInterval(2 * day))
    return backend
}

/// Runs a whole conversation: `input` is fed as the client would send it (all at once,
/// pipelined), the session answers until the input ends; returns everything the server wrote.
func converse(_ input: String, backend: InMemoryIMAPBackend? = nil, limits: IMAPLimits = .default, plaintext: Bool = true) async throws -> String {
    try await converse(bytes: Array(input.utf8), backend: backend, limits: limits, plaintext: plaintext)
}

func converse(bytes: [UInt8], backend: InMemoryIMAPBackend? = nil, limits: IMAPLimits = .default, plaintext: Bool = true,
              chunk: Int = 4096) async throws -> String {
    let backend = if let backend { backend } else { try await sampleBackend() }
    let connection = RecordingConnection(plaintext: plaintext)
    let session = IMAPSession(backend: backend, connection: connection, limits: limits)
    var framer = IMAPCommandFramer(limits: limits)
    var frames: [IMAPFrame] = []
    var i = 0
    while i < bytes.count {
        frames += framer.feed(bytes[i..<min(bytes.count, i + chunk)])
        i += chunk
    }
    let (stream, continuation) = AsyncStream.makeStream(of: IMAPFrame.self)
    for f in frames { continuation.yield(f) }
    continuation.finish()
    await session.run(frames: stream)
    return connection.text
}

/// The response lines, CRLF removed.
func lines(_ text: String) -> [String] { text.components(separatedBy: "\r\n").filter { !$0.isEmpty } }

enum Sample {
    static let plain = """
    Date: Thu, 28 May 2026 10:00:00 +0000\r
    From: Alice Example <alice@example.org>\r
    To: bob@example.org\r
    Subject: Lunch plans\r
    Message-ID: <lunch@example.org>\r
    \r
    Shall we meet at noon?\r

    """

    static let multipart = """
    Date: Fri, 29 May 2026 09:00:00 +0000\r
    From: =?UTF-8?Q?J=C3=BCrgen?= <jurgen@example.net>\r
    To: alice@example.org, Carol <carol@example.org>\r
    Cc: dave@example.org\r
    Subject: Report attached\r
    MIME-Version: 1.0\r
    Content-Type: multipart/mixed; boundary="XYZ"\r
    \r
    preamble\r
    --XYZ\r
    Content-Type: text/plain; charset=utf-8\r
    \r
    See the report, quarterly numbers inside.\r
    --XYZ\r
    Content-Type: application/pdf; name="r.pdf"\r
    Content-Disposition: attachment; filename="r.pdf"\r
    Content-Transfer-Encoding: base64\r
    \r
    JVBERi0xLjQK\r
    --XYZ--\r

    """

    static let forwarded = """
    Date: Sat, 30 May 2026 08:00:00 +0000\r
    From: eve@example.com\r
    To: alice@example.org\r
    Subject: Fwd: old note\r
    MIME-Version: 1.0\r
    Content-Type: multipart/mixed; boundary="B1"\r
    \r
    --B1\r
    Content-Type: text/plain\r
    \r
    Forwarding this.\r
    --B1\r
    Content-Type: message/rfc822\r
    \r
    From: frank@example.com\r
    Subject: note\r
    \r
    inner body\r
    --B1--\r

    """
}
