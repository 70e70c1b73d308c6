import Foundation
import OpenPGP
import RampartTestSupport

/// GnuPG 2.2 (`gpg`) with a private GNUPGHOME (short path: gpg-agent's socket lives in it),
/// `--batch --pinentry-mode loopback`, an empty passphrase for its own key, and
/// `--trust-model always` so that an imported Rampart key can be used without certifying it.
/// Signature checks read gpg's machine-readable status lines (`--status-file`): `VALIDSIG` names
/// the primary key's fingerprint; a decryption is good only with `DECRYPTION_OKAY` and no
/// `DECRYPTION_FAILED`.
final class GnuPGPeer: Peer, @unchecked Sendable {
    let name = "gpg"
    let fingerprint: String
    let files: PeerFiles
    let gpg: PeerCommand

    init(name: String, address: String) async throws {
        files = try PeerFiles("gpg", shortPath: true)
        files.home.stopsGnuPGAgentAtEnd()
        gpg = try PeerCommand.onPath("gpg", peer: "gpg")
        let uid = "\(name) <\(address)>"
        let base = Self.options(files.home.path)
        try await gpg.run(base + ["--passphrase", "", "--quick-gen-key", uid, "ed25519", "sign,cert", "never"])
        let listed = try await gpg.run(base + ["--with-colons", "--list-secret-keys", address]).lines
        guard let fpr = listed.first(where: { $0.hasPrefix("fpr:") })?.split(separator: ":", omittingEmptySubsequences: false)[9] else {
            throw PeerError.unexpectedOutput(peer: "gpg", detail: "no fpr line in \(listed)")
        }
        fingerprint = String(fpr)
        try await gpg.run(base + ["--passphrase", "", "--quick-add-key", fingerprint, "cv25519", "encr", "never"])
    }

    /// Options every call gets.
    var base: [String] { Self.options(files.home.path) }

    static func options(_ home: String) -> [String] {
        ["--homedir", home, "--batch", "--yes", "--no-tty", "--pinentry-mode", "loopback", "--trust-model", "always"]
    }

    /// Runs gpg with a status file and returns the result and its status lines.
    func runWithStatus(_ arguments: [String], input: Data? = nil, accept: Set<Int32> = [0]) async throws -> (CLIResult, [String]) {
        let status = files.path("status")
        let result = try await gpg.run(base + ["--status-file", status] + arguments, input: input, accept: accept)
        let lines = ((try? String(contentsOfFile: status, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        return (result, lines)
    }

    func exportPublicKey() async throws -> String {
        try await gpg.run(base + ["--armor", "--export", fingerprint]).stdout
    }

    func importPublicKey(_ key: PGPPublicKey) async throws -> String {
        let (_, status) = try await runWithStatus(["--import", try files.write(key.binary, "rampart.pub")])
        // IMPORT_OK <reason> <fingerprint>
        guard let line = status.first(where: { $0.hasPrefix("[GNUPG:] IMPORT_OK ") }),
              let fpr = line.split(separator: " ").last else {
            throw PeerError.unexpectedOutput(peer: "gpg", detail: "no IMPORT_OK in \(status)")
        }
        return String(fpr)
    }

    func encryptAndSign(_ data: Data, to recipient: PGPPublicKey) async throws -> Data {
        let recipientFingerprint = try await importPublicKey(recipient)
        let input = try files.write(data, "plain")
        let output = files.path("message.asc")
        try await gpg.run(base + ["--armor", "--local-user", fingerprint, "--recipient", recipientFingerprint,
                            "--sign", "--encrypt", "--output", output, input])
        return try Data(contentsOf: URL(fileURLWithPath: output))
    }

    /// gpg's armored message compressed with `algorithm` ("zip", "zlib", "bzip2") at level 9,
    /// encrypted to `recipient` and signed: what a compression bomb looks like from gpg.
    func encryptCompressed(_ data: Data, to recipient: PGPPublicKey, algorithm: String) async throws -> Data {
        let recipientFingerprint = try await importPublicKey(recipient)
        let input = try files.write(data, "plain")
        let output = files.path("bomb.gpg")
        try await gpg.run(base + ["--compress-algo", algorithm, "-z", "9", "--local-user", fingerprint,
                            "--recipient", recipientFingerprint, "--sign", "--encrypt", "--output", output, input])
        return try Data(contentsOf: URL(fileURLWithPath: output))
    }

    /// A signed-only (not encrypted) message, compressed with `algorithm` at level 9.
    func signCompressed(_ data: Data, algorithm: String) async throws -> Data {
        let input = try files.write(data, "plain")
        let output = files.path("signed.gpg")
        try await gpg.run(base + ["--compress-algo", algorithm, "-z", "9", "--local-user", fingerprint, "--sign", "--output", output, input])
        return try Data(contentsOf: URL(fileURLWithPath: output))
    }

    func decryptAndVerify(_ message: Data, signer: PGPPublicKey) async throws -> PeerVerification {
        _ = try await importPublicKey(signer)
        let output = files.path("decrypted")
        // Status 1 also for a bad signature: the status lines decide.
        let (result, status) = try await runWithStatus(["--output", output, "--decrypt", try files.write(message, "message")],
                                                 accept: [0, 1, 2])
        guard status.contains(where: { $0.hasPrefix("[GNUPG:] DECRYPTION_OKAY") }),
              !status.contains(where: { $0.hasPrefix("[GNUPG:] DECRYPTION_FAILED") }) else {
            throw PeerError.failed(peer: "gpg", command: "gpg --decrypt", status: result.status,
                                   stderr: result.stderr + "\n" + status.joined(separator: "\n"))
        }
        return PeerVerification(output: (try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data(),
                                verifiedSigner: Self.validSigner(status, expected: signer), log: status.joined(separator: "\n"))
    }

    func detachedSignature(for data: Data) async throws -> Data {
        let output = files.path("signature.asc")
        try await gpg.run(base + ["--armor", "--local-user", fingerprint, "--detach-sign", "--output", output, try files.write(data, "data")])
        return try Data(contentsOf: URL(fileURLWithPath: output))
    }

    func verifyDetached(_ data: Data, signature: Data, signer: PGPPublicKey) async throws -> PeerVerification {
        _ = try await importPublicKey(signer)
        let (_, status) = try await runWithStatus(["--verify", try files.write(signature, "signature"), try files.write(data, "data")],
                                            accept: [0, 1, 2])
        return PeerVerification(output: data, verifiedSigner: Self.validSigner(status, expected: signer), log: status.joined(separator: "\n"))
    }

    func cleartextSign(_ text: String) async throws -> String {
        let output = files.path("signed.asc")
        try await gpg.run(base + ["--local-user", fingerprint, "--clearsign", "--output", output, try files.write(Data(text.utf8), "text")])
        return try String(contentsOfFile: output, encoding: .utf8)
    }

    func verifyCleartext(_ message: String, signer: PGPPublicKey) async throws -> PeerVerification {
        _ = try await importPublicKey(signer)
        let output = files.path("text")
        let (_, status) = try await runWithStatus(["--output", output, "--decrypt", try files.write(Data(message.utf8), "signed.asc")],
                                            accept: [0, 1, 2])
        return PeerVerification(output: (try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data(),
                                verifiedSigner: Self.validSigner(status, expected: signer), log: status.joined(separator: "\n"))
    }

    /// The primary key fingerprint of `VALIDSIG` (its last field) when it is `expected`'s, gpg
    /// also said `GOODSIG` and reported no bad or unknown-key signature. (The GNUPGHOME holds
    /// every key imported so far, so a good signature by another imported key must not count.)
    static func validSigner(_ status: [String], expected: PGPPublicKey) -> String? {
        guard status.contains(where: { $0.hasPrefix("[GNUPG:] GOODSIG ") }),
              !status.contains(where: { $0.hasPrefix("[GNUPG:] BADSIG ") || $0.hasPrefix("[GNUPG:] ERRSIG ") }),
              let line = status.first(where: { $0.hasPrefix("[GNUPG:] VALIDSIG ") }),
              let primary = line.split(separator: " ").last,
              primary.uppercased() == expected.fingerprint.hex.uppercased() else { return nil }
        return String(primary)
    }
}
