import Foundation

/// One SMTP reply: a code, an enhanced status code (RFC 3463) and text; several lines are joined
/// with `code-` continuation lines.
public struct SMTPReply: Sendable, Equatable {
    /// The three-digit reply code.
    public var code: Int
    /// The enhanced status code (`2.0.0`), nil for replies that carry none (220 greeting, 334, 354).
    public var enhanced: String?
    /// The lines of text.
    public var lines: [String]

    /// Creates a reply.
    public init(_ code: Int, _ enhanced: String?, _ text: String...) { self.code = code; self.enhanced = enhanced; self.lines = text }
    /// Creates a multi-line reply.
    public init(code: Int, enhanced: String?, lines: [String]) { self.code = code; self.enhanced = enhanced; self.lines = lines }

    /// The bytes: CR, LF and non-ASCII in the text are replaced so a reply never splits.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        let texts = lines.isEmpty ? [""] : lines
        for (i, text) in texts.enumerated() {
            var line = "\(code)\(i == texts.count - 1 ? " " : "-")"
            if let enhanced { line += enhanced + " " }
            out += line.utf8
            out += text.utf8.prefix(900).map { $0 == 0x0D || $0 == 0x0A || $0 == 0 ? 0x20 : ($0 >= 0x80 ? UInt8(ascii: "?") : $0) }
            out += [0x0D, 0x0A]
        }
        return out
    }
}

/// What a session needs from its connection.
public protocol SMTPSessionConnection: Sendable {
    /// Writes bytes (returns once handed to the network).
    func write(_ bytes: [UInt8]) async throws
    /// Tells the framer whether the bytes after DATA are a message (see ``SMTPInputFramer/decideData(accepted:)``).
    func decideData(accepted: Bool) async
    /// Whether STARTTLS can be offered now.
    var canStartTLS: Bool { get }
    /// Whether the connection is encrypted.
    var isEncrypted: Bool { get }
    /// Writes `reply` (the `220` to STARTTLS) and starts TLS right behind it.
    func startTLS(after reply: [UInt8]) async throws
    /// Whether AUTH may be used in the clear (a loopback listener the caller declared so).
    var plaintextAuthAllowed: Bool { get }
}

/// One client's submission session (RFC 6409 over RFC 5321): EHLO/HELO, STARTTLS (RFC 3207),
/// AUTH PLAIN and LOGIN (RFC 4954), MAIL (SIZE, BODY=8BITMIME), RCPT, DATA, RSET, NOOP, QUIT,
/// with PIPELINING (RFC 2920) and enhanced status codes (RFC 2034).
///
/// Trust-model rows **inbox (low)** (every line is hostile input, bounded by ``SMTPLimits``;
/// too many errors end the connection) and **transport (low)** (AUTH only over TLS unless the
/// loopback listener was declared plain text).
public final class SMTPSession: @unchecked Sendable {
    // Touched only by `run`'s task.
    private let backend: any SubmissionBackend
    private let connection: any SMTPSessionConnection
    private let limits: SMTPLimits
    private let hostname: String
    private var greeted = false
    private var account: (any SubmissionAccount)?
    private var from: String?
    private var eightBit = false
    private var recipients: [String] = []
    private var errors = 0
    private var ending = false
    private var out: [UInt8] = []

    /// Creates a session.
    public init(backend: any SubmissionBackend, connection: any SMTPSessionConnection, limits: SMTPLimits = .default,
                hostname: String = "localhost") {
        self.backend = backend; self.connection = connection; self.limits = limits; self.hostname = hostname
    }

    private var authAllowed: Bool { connection.isEncrypted || connection.plaintextAuthAllowed }

    /// Greets, then answers frames until QUIT, too many errors or the end of input.
    public func run<Frames: AsyncSequence>(frames: Frames) async where Frames.Element == SMTPFrame {
        reply(SMTPReply(220, nil, "\(hostname) Rampart ESMTP submission ready"))
        await flush()
        var iterator = frames.makeAsyncIterator()
        while !ending {
            guard let frame = try? await iterator.next() else { break }
            switch frame {
            case .lineTooLong: fail(SMTPReply(500, "5.5.2", "Line too long (limit \(limits.maxLineLength) bytes)"))
            case .messageTooLarge:
                fail(SMTPReply(552, "5.3.4", "Message larger than the limit of \(limits.maxMessageSize) bytes"))
                resetTransaction()
            case .message(let bytes): await deliver(bytes)
            case .line(let bytes): await command(bytes, frames: &iterator)
            }
            // PIPELINING: replies are sent when the client has nothing more queued — here, after each frame.
            await flush()
        }
        await flush()
    }

    private func reply(_ r: SMTPReply) { out += r.encoded }
    private func fail(_ r: SMTPReply) {
        reply(r)
        errors += 1
        if errors >= limits.maxErrors {
            reply(SMTPReply(421, "4.7.0", "Too many errors; closing the connection"))
            ending = true
        }
    }
    private func flush() async {
        guard !out.isEmpty else { return }
        let bytes = out; out = []
        do { try await connection.write(bytes) } catch { ending = true }
    }
    private func resetTransaction() { from = nil; recipients = []; eightBit = false }

    private func command<I: AsyncIteratorProtocol>(_ bytes: [UInt8], frames: inout I) async where I.Element == SMTPFrame {
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F || $0 == 0x09 }) else {
            return fail(SMTPReply(500, "5.5.2", "Command line holds bytes that are not printable ASCII"))
        }
        let line = String(decoding: bytes, as: UTF8.self)
        let verb = line.prefix { $0 != " " }.uppercased()
        let argument = line.dropFirst(verb.count).trimmingCharacters(in: .whitespaces)
        switch verb {
        case "EHLO", "HELO":
            guard !argument.isEmpty else { return fail(SMTPReply(501, "5.5.4", "\(verb) needs your host name")) }
            greeted = true; resetTransaction()
            if verb == "HELO" { return reply(SMTPReply(250, nil, "\(hostname) greets \(argument)")) }
            var lines = ["\(hostname) greets \(argument)", "PIPELINING", "SIZE \(limits.maxMessageSize)", "8BITMIME", "ENHANCEDSTATUSCODES"]
            if connection.canStartTLS { lines.append("STARTTLS") }
            if authAllowed { lines.append("AUTH PLAIN LOGIN") }
            reply(SMTPReply(code: 250, enhanced: nil, lines: lines))
        case "STARTTLS":
            guard connection.canStartTLS else { return fail(SMTPReply(502, "5.5.1", "STARTTLS is not available on this connection")) }
            guard argument.isEmpty else { return fail(SMTPReply(501, "5.5.4", "STARTTLS takes no argument")) }
            await flush()
            do {
                try await connection.startTLS(after: SMTPReply(220, "2.0.0", "Ready to start TLS").encoded)
            } catch { ending = true }
            // RFC 3207 §4.2: forget everything learned before TLS.
            greeted = false; account = nil; resetTransaction()
        case "AUTH":
            await auth(argument, frames: &frames)
        case "MAIL":
            guard greeted else { return fail(SMTPReply(503, "5.5.1", "Send EHLO first")) }
            guard account != nil else { return fail(SMTPReply(530, "5.7.0", "Authentication required: send AUTH first")) }
            guard from == nil else { return fail(SMTPReply(503, "5.5.1", "MAIL already given; send RSET to start over")) }
            guard let (address, parameters) = Self.path(argument, keyword: "FROM:") else {
                return fail(SMTPReply(501, "5.5.4", "Syntax: MAIL FROM:<address> [SIZE=n] [BODY=8BITMIME]"))
            }
            var eight = false
            for p in parameters {
                let kv = p.split(separator: "=", maxSplits: 1).map(String.init)
                switch kv[0].uppercased() {
                case "SIZE":
                    guard kv.count == 2, let n = Int(kv[1]) else { return fail(SMTPReply(501, "5.5.4", "SIZE needs a number")) }
                    if n > limits.maxMessageSize { return fail(SMTPReply(552, "5.3.4", "Message size \(n) exceeds the limit of \(limits.maxMessageSize) bytes")) }
                case "BODY":
                    guard kv.count == 2, ["7BIT", "8BITMIME"].contains(kv[1].uppercased()) else { return fail(SMTPReply(501, "5.5.4", "BODY is 7BIT or 8BITMIME")) }
                    eight = kv[1].uppercased() == "8BITMIME"
                case "AUTH": break
                default: return fail(SMTPReply(555, "5.5.4", "Unsupported MAIL parameter \(kv[0].prefix(40))"))
                }
            }
            do {
                try await account!.checkSender(address)
                from = address; eightBit = eight
                reply(SMTPReply(250, "2.1.0", "Sender <\(address)> OK"))
            } catch let error as SubmissionError {
                fail(error.reply)
            } catch {
                fail(SMTPReply(451, "4.3.0", "The sender check failed: \(error)"))
            }
        case "RCPT":
            guard from != nil else { return fail(SMTPReply(503, "5.5.1", "Send MAIL first")) }
            guard let (address, parameters) = Self.path(argument, keyword: "TO:"), !address.isEmpty, parameters.isEmpty else {
                return fail(SMTPReply(501, "5.5.4", "Syntax: RCPT TO:<address>"))
            }
            guard recipients.count < limits.maxRecipients else { return fail(SMTPReply(452, "4.5.3", "Too many recipients (limit \(limits.maxRecipients))")) }
            recipients.append(address)
            reply(SMTPReply(250, "2.1.5", "Recipient <\(address)> OK"))
        case "DATA":
            guard from != nil, !recipients.isEmpty else {
                await connection.decideData(accepted: false)
                return fail(SMTPReply(from == nil ? 503 : 554, from == nil ? "5.5.1" : "5.5.1", from == nil ? "Send MAIL first" : "No valid recipients"))
            }
            reply(SMTPReply(354, nil, "Start mail input; end with <CRLF>.<CRLF>"))
            await flush()
            await connection.decideData(accepted: true)
        case "RSET": resetTransaction(); reply(SMTPReply(250, "2.0.0", "Reset"))
        case "NOOP": reply(SMTPReply(250, "2.0.0", "OK"))
        case "QUIT": reply(SMTPReply(221, "2.0.0", "Bye")); ending = true
        case "VRFY": reply(SMTPReply(252, "2.5.0", "Cannot verify; send the message and see"))
        default: fail(SMTPReply(500, "5.5.2", "Unknown command \(verb.prefix(20))"))
        }
    }

    private func auth<I: AsyncIteratorProtocol>(_ argument: String, frames: inout I) async where I.Element == SMTPFrame {
        guard greeted else { return fail(SMTPReply(503, "5.5.1", "Send EHLO first")) }
        guard account == nil else { return fail(SMTPReply(503, "5.5.1", "Already authenticated")) }
        guard authAllowed else { return fail(SMTPReply(538, "5.7.11", "Encryption required: send STARTTLS first")) }
        let parts = argument.split(separator: " ", maxSplits: 1).map(String.init)
        let mechanism = parts.first?.uppercased() ?? ""
        func ask(_ prompt: String) async -> String? {
            reply(SMTPReply(334, nil, prompt)); await flush()
            guard let frame = try? await frames.next(), case .line(let bytes) = frame else { return nil }
            let text = String(decoding: bytes, as: UTF8.self)
            return text == "*" ? nil : text
        }
        func decode(_ text: String) -> [UInt8]? { text == "=" ? [] : Data(base64Encoded: text).map(Array.init) }
        var username: String?, password: String?
        switch mechanism {
        case "PLAIN":
            guard let response = parts.count == 2 ? parts[1] : await ask("") else { return fail(SMTPReply(501, "5.7.0", "AUTH cancelled")) }
            guard let raw = decode(response) else { return fail(SMTPReply(501, "5.5.2", "Invalid base64")) }
            let fields = raw.split(separator: 0, omittingEmptySubsequences: false)
            guard fields.count == 3 else { return fail(SMTPReply(501, "5.5.2", "PLAIN needs authzid NUL user NUL password")) }
            // No proxy authorization (RFC 4616 §2): an authzid must name the user itself.
            guard fields[0].isEmpty || fields[0].elementsEqual(fields[1]) else {
                return fail(SMTPReply(535, "5.7.8", "Acting as another user (authzid) is not supported"))
            }
            username = String(validating: fields[1], as: UTF8.self); password = String(validating: fields[2], as: UTF8.self)
        case "LOGIN":
            let first = parts.count == 2 ? parts[1] : await ask("VXNlcm5hbWU6")
            guard let first, let u = decode(first) else { return fail(SMTPReply(501, "5.7.0", "AUTH cancelled or invalid base64")) }
            guard let second = await ask("UGFzc3dvcmQ6"), let p = decode(second) else { return fail(SMTPReply(501, "5.7.0", "AUTH cancelled or invalid base64")) }
            username = String(validating: u[...], as: UTF8.self); password = String(validating: p[...], as: UTF8.self)
        default:
            return fail(SMTPReply(504, "5.5.4", "Unsupported mechanism \(mechanism.prefix(20)); use PLAIN or LOGIN"))
        }
        guard let username, let password else { return fail(SMTPReply(501, "5.5.2", "Credentials are not UTF-8")) }
        do {
            account = try await backend.authenticate(username: username, password: password)
            reply(SMTPReply(235, "2.7.0", "Authentication successful"))
        } catch {
            fail(SMTPReply(535, "5.7.8", "Authentication credentials invalid"))
        }
    }

    private func deliver(_ message: [UInt8]) async {
        defer { resetTransaction() }
        guard let from, let account else { return fail(SMTPReply(503, "5.5.1", "No transaction")) }
        do {
            let receipt = try await account.submit(SMTPEnvelope(from: from, recipients: recipients, eightBit: eightBit), message: message)
            reply(SMTPReply(250, "2.0.0", "Message accepted: \(receipt.text)"))
        } catch let error as SubmissionError {
            fail(error.reply)
        } catch {
            fail(SMTPReply(451, "4.3.0", "Sending failed: \(error)"))
        }
    }

    /// `FROM:<a@b> SIZE=1` → ("a@b", ["SIZE=1"]); nil when malformed. `<>` gives "".
    static func path(_ argument: String, keyword: String) -> (String, [String])? {
        guard argument.uppercased().hasPrefix(keyword) else { return nil }
        let rest = argument.dropFirst(keyword.count).trimmingCharacters(in: .whitespaces)
        guard rest.hasPrefix("<"), let close = rest.firstIndex(of: ">") else { return nil }
        let address = String(rest[rest.index(after: rest.startIndex)..<close])
        guard address.count <= 254, !address.contains(" "), address.isEmpty || address.contains("@") else { return nil }
        let params = rest[rest.index(after: close)...].split(separator: " ").map(String.init)
        return (address, params)
    }
}
