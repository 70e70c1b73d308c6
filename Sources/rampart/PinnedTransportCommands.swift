import ArgumentParser
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
            switch error {
            case .certificateUnreadable, .invalidURL: throw ExitCode(ExitStatus.badInput)
            case .pinMismatch: throw ExitCode(ExitStatus.pinMismatch)
            default: throw ExitCode(ExitStatus.failure)
            }
        }
    }
}
