import Foundation
import OpenPGP
import RampartTestSupport

/// Sequoia's `sq` 0.27 (stateless: keys and certificates are files). Its key is `sq key generate
/// -c cv25519` (Ed25519 primary for certification, Ed25519 signing and Curve25519 encryption
/// subkeys). A signature check passes only when sq exits 0 with `--signer-cert` naming just the
/// expected certificate (sq's threshold: one good signature) and reports "Good signature from
/// KEYID" on standard error.
final class SequoiaPeer: Peer, @unchecked Sendable {
    let name = "sq"
    let fingerprint: String
    let files: PeerFiles
    let sq: PeerCommand
    let keyFile: String
    let certFile: String

    init(name: String, address: String) async throws {
        files = try PeerFiles("sq")
        sq = try PeerCommand.onPath("sq", peer: "sq")
        keyFile = files.path("peer.key")
        certFile = files.path("peer.cert")
        try await sq.run(["key", "generate", "--userid", "\(name) <\(address)>", "--cipher-suite", "cv25519", "--export", keyFile])
        try await sq.run(["key", "extract-cert", "--output", certFile, keyFile])
        fingerprint = try await Self.inspectFingerprint(sq, certFile)
    }

    /// The "Fingerprint:" line of `sq inspect FILE` (the primary key's).
    static func inspectFingerprint(_ sq: PeerCommand, _ file: String) async throws -> String {
        let lines = try await sq.run(["inspect", file]).lines
        guard let line = lines.first(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("Fingerprint:") }),
              let value = line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) else {
            throw PeerError.unexpectedOutput(peer: "sq", detail: "no Fingerprint line in `sq inspect`: \(lines)")
        }
        return value
    }

    func exportPublicKey() async throws -> String {
        try String(contentsOfFile: certFile, encoding: .utf8)
    }

    func importPublicKey(_ key: PGPPublicKey) async throws -> String {
        try await Self.inspectFingerprint(sq, try files.write(Data(key.armored().utf8), "rampart.cert"))
    }

    func encryptAndSign(_ data: Data, to recipient: PGPPublicKey) async throws -> Data {
        let output = files.path("message.asc")
        try await sq.run(["encrypt", "--recipient-cert", try files.write(recipient.binary, "recipient.cert"), "--signer-key", keyFile,
                    "--output", output, try files.write(data, "plain")])
        return try Data(contentsOf: URL(fileURLWithPath: output))
    }

    /// The key id of "Good signature from KEYID" when sq ended with status 0.
    private func verification(_ result: CLIResult, output: Data) -> PeerVerification {
        let good = result.stderr.split(separator: "\n").first { $0.hasPrefix("Good signature from ") }
        let signer = result.status == 0 ? good.flatMap { $0.split(separator: " ").last.map(String.init) } : nil
        return PeerVerification(output: output, verifiedSigner: signer, log: result.stderr)
    }

    func decryptAndVerify(_ message: Data, signer: PGPPublicKey) async throws -> PeerVerification {
        let output = files.path("decrypted")
        let result = try await sq.run(["decrypt", "--recipient-key", keyFile, "--signer-cert", try files.write(signer.binary, "signer.cert"),
                                 "--output", output, try files.write(message, "message")], accept: [0, 1])
        // sq writes nothing when it refuses the message; when decryption itself failed there is
        // no "Encrypted using" line.
        guard result.stderr.contains("Encrypted using") else {
            throw PeerError.failed(peer: "sq", command: "sq decrypt", status: result.status, stderr: result.stderr)
        }
        return verification(result, output: (try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data())
    }

    func detachedSignature(for data: Data) async throws -> Data {
        let output = files.path("signature.asc")
        try await sq.run(["sign", "--detached", "--signer-key", keyFile, "--output", output, try files.write(data, "data")])
        return try Data(contentsOf: URL(fileURLWithPath: output))
    }

    func verifyDetached(_ data: Data, signature: Data, signer: PGPPublicKey) async throws -> PeerVerification {
        let result = try await sq.run(["verify", "--detached", try files.write(signature, "signature"),
                                 "--signer-cert", try files.write(signer.binary, "signer.cert"), try files.write(data, "data")],
                                accept: [0, 1])
        return verification(result, output: data)
    }

    func cleartextSign(_ text: String) async throws -> String {
        let output = files.path("signed.asc")
        try await sq.run(["sign", "--cleartext-signature", "--signer-key", keyFile, "--output", output, try files.write(Data(text.utf8), "text")])
        return try String(contentsOfFile: output, encoding: .utf8)
    }

    func verifyCleartext(_ message: String, signer: PGPPublicKey) async throws -> PeerVerification {
        let output = files.path("text")
        let result = try await sq.run(["verify", "--signer-cert", try files.write(signer.binary, "signer.cert"), "--output", output,
                                 try files.write(Data(message.utf8), "signed.asc")], accept: [0, 1])
        return verification(result, output: (try? Data(contentsOf: URL(fileURLWithPath: output))) ?? Data())
    }
}
