import ArgumentParser
import RampartCLIKit
import Foundation
import PinnedTransport
import RampartCore

/// `rampart pin`: computes certificate pins (SHA-256 of the SubjectPublicKeyInfo, base64).
///
/// Trust-model row: **transport (network), low trust**: the pins that go into a
/// `DomainPinningPolicy`.
struct PinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Print the SPKI SHA-256 pin (base64) of each certificate in a PEM file or served by a host.",
        discussion: """
        Same value as: openssl x509 -pubkey -noout -in cert.pem | openssl pkey -pubin -outform der \\
          | openssl dgst -sha256 -binary | base64
        One line per certificate, leaf first. With --host the chain is read from the live server
        WITHOUT validating it (the handshake is aborted, nothing is sent): compare the result over
        a trusted network before pinning it.
        """
    )

    @Argument(help: "A PEM file with one or more certificates.")
    var pemFile: String?

    @Option(help: "Read the chain served by this host instead of a file.")
    var host: String?

    @Option(help: "Port of --host.")
    var port: Int = 443

    @Option(help: "SNI name to send (default: --host).")
    var serverName: String?

    @Flag(help: "Print each certificate's subject after its pin.")
    var showSubjects = false

    func run() async throws {
        do {
            let pins: [(subject: String, pin: SPKIPin)]
            switch (pemFile, host) {
            case (let path?, nil):
                let text: String
                do {
                    text = try String(contentsOfFile: path, encoding: .utf8)
                } catch {
                    throw PinnedTransportError.certificateUnreadable("cannot read \(path): \(error.localizedDescription)")
                }
                pins = try SPKIPin.pins(fromPEM: text).map { ("\($0.certificate.subject)", $0.pin) }
            case (nil, let host?):
                guard (1...65_535).contains(port) else {
                    throw PinnedTransportError.invalidURL("\(host):\(port)", reason: "--port must be between 1 and 65535")
                }
                let chain = try await ServedChain.fetch(host: host, port: port, serverName: serverName)
                pins = try chain.map { ("\($0.subject)", try SPKIPin(certificate: $0)) }
            default:
                FileHandle.standardError.write(Data("rampart pin: give either a PEM file or --host (not both)\n".utf8))
                throw ExitCode(ExitStatus.badInput)
            }
            for (subject, pin) in pins {
                print(showSubjects ? "\(pin.base64)  \(subject)" : pin.base64)
            }
        } catch let error as PinnedTransportError {
            FileHandle.standardError.write(Data("rampart pin: \(error.description)\n".utf8))
            throw ExitCode(ExitStatus.code(for: error))
        }
    }
}

/// `rampart transport …`: requests over the pinned client.
///
/// Trust-model row: **transport (network), low trust — a person in the middle**.
struct TransportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transport",
        abstract: "Talk to a backend over TLS with certificate pinning.",
        subcommands: [TransportGet.self]
    )
}

/// `rampart transport get URL --pin P --pin BACKUP [--ca roots.pem] [--resolve host:ip]`.
struct TransportGet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "GET (or --method/--data) a URL over a validated and pinned connection; print the body.",
        discussion: """
        The URL's host must be covered by the pins given (at least two: the live key and a backup).
        On a pin mismatch the connection is cut before anything is sent, an alert is printed on
        stderr, and the exit code is 8.
        """
    )

    @Argument(help: "An https URL.")
    var url: String

    @Option(name: .customLong("pin"), help: "An SPKI SHA-256 pin (base64); give at least two.")
    var pins: [String] = []

    @Option(help: "The pinned domain (default: the URL's host).")
    var domain: String?

    @Flag(help: "The pins also cover subdomains of --domain.")
    var includeSubdomains = false

    @Flag(help: "Report a mismatch but do not cut the connection.")
    var reportOnly = false

    @Option(help: "PEM file of the only trusted roots (default: the system's roots).")
    var ca: String?

    @Option(help: "Connect to this address for a host, as HOST:ADDRESS (like curl --resolve).")
    var resolve: [String] = []

    @Option(help: "Append pin violation reports (JSON lines) to this file.")
    var reports: String?

    @Option(help: "HTTP method.")
    var method: String = "GET"

    @Option(help: "Request body (text).")
    var data: String?

    @Flag(help: "Print the status line and headers on stderr.")
    var verbose = false

    func run() async throws {
        try await reportingErrors {
            guard let target = URL(string: url), let host = target.host else {
                throw RuntimeError.badInput("\(url) is not a URL")
            }
            var overrides: [String: String] = [:]
            for entry in resolve {
                guard let colon = entry.firstIndex(of: ":") else {
                    throw RuntimeError.badInput("--resolve wants HOST:ADDRESS, got \(entry)")
                }
                overrides[String(entry[..<colon])] = String(entry[entry.index(after: colon)...])
            }
            let policy: PinningPolicy
            do {
                policy = try PinningPolicy([
                    DomainPinningPolicy(domain: domain ?? host, pins: pins, includeSubdomains: includeSubdomains,
                                        enforcement: reportOnly ? .reportOnly : .enforce),
                ])
            } catch let refused as PinningPolicyError {
                throw RuntimeError.badInput(refused.description)
            }
            let client = try PinnedHTTPClient(configuration: .init(
                policy: policy,
                trustRoots: try ca.map { try PinnedTrustRoots.pemFile($0) } ?? .system,
                reportSink: reports.map { JSONLinesReportFile(url: URL(fileURLWithPath: $0)) },
                connectAddressOverrides: overrides))
            let events = client.events.stream()
            let result: Result<PinnedResponse, any Error>
            do {
                var headers: [(String, String)] = []
                if data != nil { headers.append(("Content-Type", "application/octet-stream")) }
                result = .success(try await client.send(PinnedRequest(
                    method: .init(rawValue: method.uppercased()), url: target, headers: .init(headers),
                    body: data.map { Data($0.utf8) })))
            } catch {
                result = .failure(error)
            }
            try await client.shutdown()
            for await event in events {
                FileHandle.standardError.write(Data("rampart: \(event.isAlert ? "ALERT" : "notice"): \(event.message)\n".utf8))
            }
            let response = try result.get()
            if verbose {
                var head = "HTTP/1.1 \(response.status.code) \(response.status.reasonPhrase)\n"
                for (name, value) in response.headers { head += "\(name): \(value)\n" }
                FileHandle.standardError.write(Data(head.utf8))
            }
            FileHandle.standardOutput.write(response.body)
        }
    }
}
