import ArgumentParser
import Bcrypt
import Foundation
import RampartCLIKit
import RampartCore
import SRP

/// `rampart-dev bench srp`: the client's login computation (bcrypt + SRP) and the server's
/// verification, next to proton-client's client computation on the same machine (same run).
///
/// Trust-model row **server (zero access)**: SRP costs the client one bcrypt and a few 2048-bit
/// exponentiations, the server only exponentiations; targets: client < 150 ms, server < 10 ms.
struct SRPBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "srp",
        abstract: "Time SRP login: Rampart's client (bcrypt + SRP) and server, against proton-client's client, in one run.",
        discussion: "The baseline runs scripts/srp/bench_proton.py with $RAMPART_PYTHON or ./.venv/bin/python3 (proton-client==0.5.1, bcrypt<5).")

    @Option(help: "Number of logins to time.") var iterations = 15
    @Option(help: "Python with proton-client (default: $RAMPART_PYTHON or ./.venv/bin/python3).") var python: String?
    @Flag(help: "Skip the proton-client baseline.") var noPython = false

    func run() async throws {
        try await reportingErrors {
            let group = SRPGroup.rampart
            let password = "correct horse battery staple"
            let secret = SecretBytes(copying: Array(password.utf8))
            let salt = SRPPassword.newSalt()
            let verifier = try SRPPassword.verifier(password: secret, salt: salt, group: group)

            var bcryptOnly = Timing(), client = Timing(), server = Timing()
            var lastEphemeral: [UInt8] = []
            for _ in 0..<iterations {
                let bcryptSalt = Array((salt + Array("proton".utf8)).prefix(16))
                try bcryptOnly.measure { _ = try Bcrypt.hash(password: secret, salt: bcryptSalt) }
                let challenge = try SRPServer(group: group, verifier: verifier)
                var login: SRPClient?
                try client.measure {
                    login = try SRPClient(group: group, password: secret, salt: salt, serverEphemeral: challenge.serverEphemeral)
                }
                guard let login else { continue }
                // The server's whole share of a login: B at /auth/info, then A, u, S, M1, M2 at /auth.
                var proof: [UInt8] = []
                try server.measure {
                    let fresh = try SRPServer(group: group, verifier: verifier)
                    _ = fresh.serverEphemeral
                    _ = try? fresh.verify(clientEphemeral: login.clientEphemeral, clientProof: login.clientProof)
                }
                proof = try challenge.verify(clientEphemeral: login.clientEphemeral, clientProof: login.clientProof)
                try login.verifyServerProof(proof)
                lastEphemeral = challenge.serverEphemeral
            }
            print("bench srp: \(iterations) logins, 2048-bit group, bcrypt cost 10 (medians)")
            print("  bcrypt alone (libxcrypt)           \(formatMillis(bcryptOnly.median))")
            print("  Rampart client (bcrypt + SRP)      \(formatMillis(client.median))  target < 150 ms  \(client.median < 150 ? "ok" : "OVER")"
                  + String(format: "  (%.2fx bcrypt alone)", client.median / bcryptOnly.median))
            print("  Rampart server (B + verify)        \(formatMillis(server.median))  target < 10 ms  \(server.median < 10 ? "ok" : "OVER")")

            guard !noPython else { return }
            guard let python = pythonPath() else {
                print("  proton-client baseline: no Python found (.venv/bin/python3 or RAMPART_PYTHON)")
                return
            }
            let script = FileManager.default.currentDirectoryPath + "/scripts/srp/bench_proton.py"
            guard let output = BaselineProcess.output(python, [script, group.modulusBase64, Data(salt).base64EncodedString(),
                                                               Data(lastEphemeral).base64EncodedString(), password, "\(iterations)"]),
                  let json = try? JSONSerialization.jsonObject(with: output) as? [String: Any],
                  let protonLogin = json["login_ms"] as? Double, let protonBcrypt = json["bcrypt_ms"] as? Double else {
                print("  proton-client baseline: \(script) failed (run from the package root; needs proton-client, bcrypt<5)")
                return
            }
            print("  proton-client client (\(json["impl"] as? String ?? "?"))  \(formatMillis(protonLogin))"
                  + String(format: "  Rampart client / proton-client = %.2fx", client.median / protonLogin))
            print("  proton-client bcrypt alone         \(formatMillis(protonBcrypt))"
                  + String(format: "  Rampart bcrypt / Python bcrypt = %.2fx", bcryptOnly.median / protonBcrypt))
            print(String(format: "  Rampart server / proton-client client = %.3fx", server.median / protonLogin))
        }
    }

    func pythonPath() -> String? {
        if let python { return python }
        if let path = ProcessInfo.processInfo.environment["RAMPART_PYTHON"], FileManager.default.isExecutableFile(atPath: path) { return path }
        let local = FileManager.default.currentDirectoryPath + "/.venv/bin/python3"
        return FileManager.default.isExecutableFile(atPath: local) ? local : nil
    }
}
