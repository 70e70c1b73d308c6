import Foundation
import NIOSSL
import RampartTestSupport
import SMTPServer
import Testing

/// Real clients (Python's smtplib, swaks) against a server on 127.0.0.1, port 0, each a child
/// process on a thread of its own with socket timeouts and a time limit.
@Suite(.serialized) struct SMTPRealClientTests {
    static let script = BuiltExecutable.packageRoot.appendingPathComponent("scripts/bridge/smtp_clients.py").path

    func withServer<T>(_ configuration: SMTPServerConfiguration, backend: InMemorySubmissionBackend,
                       _ body: (Int) async throws -> T) async throws -> T {
        let server = SMTPServer(configuration: configuration, backend: backend)
        try await server.start()
        do { let r = try await body(server.port); try await server.stop(); return r } catch { try? await server.stop(); throw error }
    }

    func python(_ arguments: [String]) async throws -> CLIResult {
        let python = try #require(ProjectPython.executable, "No project Python: run scripts/setup.sh or set RAMPART_PYTHON")
        return try await ProjectPython.runClientScript(python, Self.script, arguments, label: "SMTP")
    }

    static let loopback = SMTPServerConfiguration(plaintextOnLoopback: true, limits: SMTPLimits(maxMessageSize: 1 << 20))

    @Test func pythonSmtplibSubmitsWithPlainAndIsRefusedAForeignSenderAndAnInvalidRecipient() async throws {
        let backend = await sampleSubmissionBackend()
        let result = try await withServer(Self.loopback, backend: backend) { port in try await python(["submit", String(port)]) }
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let sent = await backend.submissions
        #expect(sent.count == 1)
        #expect(sent.first.map { String(decoding: $0.message, as: UTF8.self).contains("\r\n.starts with a dot\r\nbody é\r\n") } == true)
        #expect(sent.first?.envelope.recipients == ["bob@example.org", "carol@example.org"])
    }

    @Test func pythonSmtplibAuthenticatesWithLogin() async throws {
        let result = try await withServer(Self.loopback, backend: await sampleSubmissionBackend()) { port in try await python(["login", String(port)]) }
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
    }

    @Test func startTLSComesBeforeAuthWhenTheListenerIsNotDeclaredPlainText() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("smtp-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("key.pem").path, cert = folder.appendingPathComponent("cert.pem").path
        let made = try await CLITool(path: URL(fileURLWithPath: "/usr/bin/openssl")).runOnThread(
            ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key, "-out", cert,
             "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1"], timeout: .seconds(60))
        try #require(made.status == 0, "openssl: \(made.stderr)")
        let tls = try NIOSSLContext(configuration: .makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(file: cert, format: .pem))], privateKey: .file(key)))
        let backend = await sampleSubmissionBackend()
        let result = try await withServer(SMTPServerConfiguration(tls: tls), backend: backend) { port in try await python(["starttls", String(port), cert]) }
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(await backend.submissions.count == 1)
    }

    @Test func swaksSubmitsWithPipelining() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/swaks") else {
            Issue.record("swaks is not installed: run scripts/setup.sh (scripts/deps/bridge.apt)"); return
        }
        let backend = await sampleSubmissionBackend()
        let result = try await withServer(Self.loopback, backend: backend) { port in
            try await CLITool(path: URL(fileURLWithPath: "/usr/bin/swaks")).runOnThread(
                ["--server", "127.0.0.1", "--port", String(port), "--auth", "PLAIN", "--auth-user", "alice", "--auth-password", "pw",
                 "--from", "alice@example.org", "--to", "bob@example.org,carol@example.org", "--pipeline", "--timeout", "20",
                 "--header", "Subject: from swaks", "--body", ".dot line\nsecond"], timeout: .seconds(60))
        }
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("250 2.0.0 Message accepted: queued as 1 for bob@example.org, carol@example.org"))
        let sent = await backend.submissions
        #expect(sent.first.map { String(decoding: $0.message, as: UTF8.self).contains("\r\n.dot line\r\nsecond") } == true)
    }

    @Test func plainTextOffLoopbackDoesNotStart() async throws {
        await #expect(throws: SMTPServerError.plaintextNeedsLoopback(host: "0.0.0.0")) {
            try await SMTPServer(configuration: SMTPServerConfiguration(host: "0.0.0.0", plaintextOnLoopback: true),
                                 backend: InMemorySubmissionBackend()).start()
        }
    }
}
