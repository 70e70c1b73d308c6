import Foundation
import OpenPGP
import RampartTestSupport

/// GopenPGP v2, the OpenPGP library of Proton's own clients, through the small Go program in
/// scripts/openpgp/gopenpgp-peer (built once per test run from Debian's
/// golang-github-protonmail-gopenpgp-dev in GOPATH mode; nothing is downloaded). Its key is
/// GopenPGP's `x25519` default (Ed25519 primary, Curve25519 encryption subkey), locked with a
/// passphrase as Proton stores keys. The helper reports a good signature as
/// "SIGNATURE: verified FINGERPRINT" on standard error (exit 0) and a bad one with exit 3.
final class GopenPGPPeer: Peer, @unchecked Sendable {
    let name = "GopenPGP"
    let fingerprint: String
    let files: PeerFiles
    let helper: PeerCommand
    let privateKeyFile: String
    let publicKeyFile: String
    /// The passphrase the peer's own key is locked with.
    static let passphrase = "interop passphrase"

    init(name: String, address: String) async throws {
        files = try PeerFiles("gopenpgp")
        helper = PeerCommand(peer: "GopenPGP", executable: try GopenPGPHelper.executable(),
                             environment: ["GOPENPGP_PEER_PASSPHRASE": Self.passphrase])
        privateKeyFile = files.path("peer.sec.asc")
        publicKeyFile = files.path("peer.pub.asc")
        fingerprint = try await helper.run(["gen-key", name, address, privateKeyFile, publicKeyFile]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func exportPublicKey() async throws -> String { try String(contentsOfFile: publicKeyFile, encoding: .utf8) }

    /// The peer's private key as GopenPGP armors it, locked with ``passphrase``.
    func exportLockedPrivateKey() throws -> String { try String(contentsOfFile: privateKeyFile, encoding: .utf8) }

    func importPublicKey(_ key: PGPPublicKey) async throws -> String {
        try await helper.run(["fingerprint", try files.write(Data(key.armored().utf8), "rampart.pub.asc")]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func encryptAndSign(_ data: Data, to recipient: PGPPublicKey) async throws -> Data {
        try await helper.run(["encrypt-sign", try files.write(recipient.binary, "recipient.pub"), privateKeyFile,
                        try files.write(data, "plain")]).output
    }

    private func verification(_ result: CLIResult) -> PeerVerification {
        let line = result.stderr.split(separator: "\n").first { $0.hasPrefix("SIGNATURE: verified ") }
        let signer = result.status == 0 ? line.flatMap { $0.split(separator: " ").last.map(String.init) } : nil
        return PeerVerification(output: result.status == 0 ? result.output : Data(), verifiedSigner: signer, log: result.stderr)
    }

    func decryptAndVerify(_ message: Data, signer: PGPPublicKey) async throws -> PeerVerification {
        verification(try await helper.run(["decrypt-verify", privateKeyFile, try files.write(signer.binary, "signer.pub"),
                                     try files.write(message, "message")], accept: [0, 3]))
    }

    /// Decrypts with another private key (armored, locked with ``passphrase``), e.g. one Rampart
    /// exported with `PGPPrivateKey.locked(passphrase:)`.
    func decryptAndVerify(_ message: Data, withPrivateKey armored: String, signer: PGPPublicKey) async throws -> PeerVerification {
        verification(try await helper.run(["decrypt-verify", try files.write(Data(armored.utf8), "other.sec.asc"),
                                     try files.write(signer.binary, "signer.pub"), try files.write(message, "message")],
                                    accept: [0, 3]))
    }

    func detachedSignature(for data: Data) async throws -> Data {
        try await helper.run(["sign-detached", privateKeyFile, try files.write(data, "data")]).output
    }

    func verifyDetached(_ data: Data, signature: Data, signer: PGPPublicKey) async throws -> PeerVerification {
        var result = verification(try await helper.run(["verify-detached", try files.write(signer.binary, "signer.pub"),
                                                  try files.write(data, "data"), try files.write(signature, "signature")],
                                                 accept: [0, 3]))
        result.output = data
        return result
    }

    /// `helper.SignCleartextMessage` writes the text as it is: a line starting with "-" is not
    /// dash-escaped, so a verifier strips it as an escape and the signature fails (sq 0.27 says
    /// "Message has been manipulated" too).
    var dashEscapesCleartext: Bool { false }

    func cleartextSign(_ text: String) async throws -> String {
        try await helper.run(["sign-cleartext", privateKeyFile, try files.write(Data(text.utf8), "text")]).stdout
    }

    func verifyCleartext(_ message: String, signer: PGPPublicKey) async throws -> PeerVerification {
        verification(try await helper.run(["verify-cleartext", try files.write(signer.binary, "signer.pub"),
                                     try files.write(Data(message.utf8), "signed.asc")], accept: [0, 3]))
    }
}

/// scripts/openpgp/gopenpgp-peer, built once per test run against Debian's GopenPGP sources
/// (RampartTestSupport's `GoProgram`).
enum GopenPGPHelper {
    static func executable() throws -> URL {
        do {
            return try GoProgram.executable(folder: "openpgp/gopenpgp-peer",
                                            requires: ("github.com/ProtonMail/gopenpgp/crypto", "golang-github-protonmail-gopenpgp-dev"))
        } catch let error as TestSupportError {
            throw PeerError.notInstalled(peer: "GopenPGP", detail: error.description)
        }
    }
}
