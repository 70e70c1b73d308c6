import Foundation
import IMAPServer
import NIOSSL
import RampartTestSupport
import Testing

/// Real clients (Python's imaplib, imapclient, curl) against a server on 127.0.0.1, port 0.
/// The clients run as child processes on threads of their own (`runOnThread`), so the server's
/// sessions keep the shared concurrency pool; every client has socket timeouts and the run a time
/// limit, `CLITool.defaultTimeout` (a hang guard: under a 90 s limit, a fresh-clone CI run failed
/// an imaplib run of 0.1 s that had printed "ok"; `runClientScript` prints where a run's time went).
@Suite(.serialized) struct RealClientTests {
    static let script = BuiltExecutable.packageRoot.appendingPathComponent("scripts/bridge/imap_clients.py").path

    func withServer<T>(_ configuration: IMAPServerConfiguration = IMAPServerConfiguration(plaintextOnLoopback: true),
                       _ body: (Int) async throws -> T) async throws -> T {
        let server = IMAPServer(configuration: configuration, backend: try await sampleBackend())
        try await server.start()
        do {
            let result = try await body(server.port)
            try await server.stop()
            return result
        } catch {
            try? await server.stop()
            throw error
        }
    }

    func python(_ arguments: [String]) async throws -> CLIResult {
        let python = try #require(ProjectPython.executable, "No project Python: run scripts/setup.sh or set RAMPART_PYTHON")
        return try await ProjectPython.runClientScript(python, Self.script, arguments, label: "IMAP")
    }

    @Test func pythonImaplibReadsSearchesStoresCopiesMovesAndAppends() async throws {
        let result = try await withServer { port in try await python(["imaplib", String(port)]) }
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("ok imaplib"))
    }

    @Test func imapclientParsesEnvelopesBodyStructuresSpecialUseAndIdles() async throws {
        let result = try await withServer { port in try await python(["imapclient", String(port)]) }
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("ok imapclient"))
    }

    @Test func startTLSIsRequiredBeforeLoginWhenTheListenerIsNotDeclaredPlainText() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("imap-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("key.pem").path, cert = folder.appendingPathComponent("cert.pem").path
        let openssl = CLITool(path: URL(fileURLWithPath: "/usr/bin/openssl"))
        let made = try await openssl.runOnThread(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                                  "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
                                                  "-addext", "subjectAltName=IP:127.0.0.1"], timeout: .seconds(60))
        try #require(made.status == 0, "openssl: \(made.stderr)")
        let tls = try NIOSSLContext(configuration: .makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(file: cert, format: .pem))], privateKey: .file(key)))
        let result = try await withServer(IMAPServerConfiguration(tls: tls)) { port in try await python(["starttls", String(port), cert]) }
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
    }

    @Test func aSlowSenderIsServedAndASilentOneIsLoggedOut() async throws {
        let result = try await withServer(IMAPServerConfiguration(plaintextOnLoopback: true, idleTimeout: .seconds(1))) { port in
            try await python(["slow", String(port)])
        }
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
    }

    @Test func aClientPipeliningTwentyThousandCommandsGetsEveryAnswer() async throws {
        let result = try await withServer { port in try await python(["flood", String(port)]) }
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
    }

    @Test func curlFetchesAMessageAndListsMailboxes() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/curl") else { return }
        let curl = CLITool(path: URL(fileURLWithPath: "/usr/bin/curl"))
        let (message, list) = try await withServer { port in
            let message = try await curl.runOnThread(["-sS", "--max-time", "20", "-u", "alice:pw", "imap://127.0.0.1:\(port)/INBOX;UID=1"],
                                                     timeout: .seconds(60))
            let list = try await curl.runOnThread(["-sS", "--max-time", "20", "-u", "alice:pw", "imap://127.0.0.1:\(port)/"], timeout: .seconds(60))
            return (message, list)
        }
        #expect(message.status == 0, "\(message.stderr)")
        #expect(message.stdout.contains("Shall we meet at noon?"))
        #expect(list.stdout.contains("\"/\" Sent"), "\(list.stdout)")
    }

    @Test func plainTextOffLoopbackOrWithoutAnyWayToLogInDoesNotStart() async throws {
        let backend = InMemoryIMAPBackend()
        await #expect(throws: IMAPServerError.plaintextNeedsLoopback(host: "0.0.0.0")) {
            try await IMAPServer(configuration: IMAPServerConfiguration(host: "0.0.0.0", plaintextOnLoopback: true), backend: backend).start()
        }
        await #expect(throws: IMAPServerError.noWayToLogIn) {
            try await IMAPServer(configuration: IMAPServerConfiguration(), backend: backend).start()
        }
    }
}
