import _CryptoExtras
import Crypto
import Foundation
import PinnedTransport
import SwiftASN1
import RampartTestSupport
import Testing
import X509

/// Runs the OpenSSL pipeline the pin format is defined by.
enum OpenSSL {
    static let path: String? = ["/usr/bin/openssl", "/usr/local/bin/openssl", "/opt/homebrew/bin/openssl"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    static func pin(ofPEM pem: String) throws -> String {
        let directory = try TemporaryHome("pin")
        let file = directory.child("cert.pem")
        try pem.write(to: file, atomically: true, encoding: .utf8)
        let openssl = path!
        let pipeline = try CLITool(path: URL(fileURLWithPath: "/bin/sh"))
            .run(["-c", "\(openssl) x509 -pubkey -noout -in '\(file.path)' | \(openssl) pkey -pubin -outform der "
                  + "| \(openssl) dgst -sha256 -binary | base64"])
        return pipeline.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

@Suite("SPKI pins")
struct SPKIPinTests {
    static func keyTypes() throws -> [(String, Issued)] {
        [
            ("P-256", try TestPKI.makeSelfSigned(key: .init(P256.Signing.PrivateKey()), algorithm: .ecdsaWithSHA256)),
            ("P-384", try TestPKI.makeSelfSigned(key: .init(P384.Signing.PrivateKey()), algorithm: .ecdsaWithSHA384)),
            ("P-521", try TestPKI.makeSelfSigned(key: .init(P521.Signing.PrivateKey()), algorithm: .ecdsaWithSHA512)),
            ("RSA-2048", try TestPKI.makeSelfSigned(key: .init(_RSA.Signing.PrivateKey(keySize: .bits2048)),
                                                    algorithm: .sha256WithRSAEncryption)),
            ("Ed25519", try TestPKI.makeSelfSigned(key: .init(Curve25519.Signing.PrivateKey()), algorithm: .ed25519)),
        ]
    }

    @Test(.enabled(if: OpenSSL.path != nil, "needs the openssl command"))
    func pinEqualsTheOpenSSLPipelineForEveryKeyType() throws {
        for (name, issued) in try SPKIPinTests.keyTypes() {
            let ours = try #require(try SPKIPin.pins(fromPEM: issued.pem).first).pin.base64
            let openssl = try OpenSSL.pin(ofPEM: issued.pem)
            #expect(ours == openssl, "\(name): ours \(ours), openssl \(openssl)")
            #expect(ours.count == 44)
        }
    }

    @Test(.enabled(if: OpenSSL.path != nil, "needs the openssl command"))
    func pinOfCertificatesMadeByOpenSSLEqualsTheOpenSSLPipeline() throws {
        let directory = try TemporaryHome("openssl")
        for keySpec in ["rsa:2048", "ec", "ed25519"] {
            let cert = directory.child("\(keySpec.prefix(3)).pem").path
            let key = directory.child("\(keySpec.prefix(3)).key").path
            var arguments = ["req", "-x509", "-nodes", "-days", "1", "-subj", "/CN=rampart.test", "-keyout", key, "-out", cert]
            switch keySpec {
            case "ec": arguments += ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
            default: arguments += ["-newkey", keySpec]
            }
            let request = try CLITool(path: URL(fileURLWithPath: OpenSSL.path!)).run(arguments)
            try #require(request.status == 0, "openssl req failed for \(keySpec): \(request.stderr)")
            let pem = try String(contentsOfFile: cert, encoding: .utf8)
            let ours = try #require(try SPKIPin.pins(fromPEM: pem).first).pin.base64
            #expect(ours == (try OpenSSL.pin(ofPEM: pem)), "\(keySpec)")
        }
    }

    @Test func pinOfThePublicKeyEqualsPinTakenFromTheCertificateBytes() throws {
        for (name, issued) in try SPKIPinTests.keyTypes() {
            #expect(try SPKIPin(publicKey: issued.certificate.publicKey) == SPKIPin(certificate: issued.certificate), "\(name)")
        }
    }

    @Test func hashingTheRawKeyBytesWouldGiveAWrongPin() throws {
        let issued = try TestPKI.makeLeaf(names: ["rampart.test"], issuer: nil)
        let rawKeyHash = Data(SHA256.hash(data: Array(issued.certificate.publicKey.subjectPublicKeyInfoBytes))).base64EncodedString()
        #expect(rawKeyHash != issued.pin.base64)
    }

    @Test func pemChainGivesOnePinPerCertificateInOrder() throws {
        let ca = try TestPKI.makeCA("Rampart Test CA")
        let leaf = try TestPKI.makeLeaf(names: ["rampart.test"], issuer: ca)
        let pins = try SPKIPin.pins(fromPEM: leaf.pem + "\n" + ca.pem).map(\.pin)
        #expect(pins == [leaf.pin, ca.pin])
    }

    @Test func textWithoutCertificateIsRefused() throws {
        #expect(throws: PinnedTransportError.certificateUnreadable("no \"BEGIN CERTIFICATE\" block in the text")) {
            try SPKIPin.pins(fromPEM: P256.Signing.PrivateKey().pemRepresentation)
        }
        #expect(throws: PinnedTransportError.self) { try SPKIPin.pins(fromPEM: "hello") }
    }

    @Test func pinRoundTripsThroughBase64() throws {
        let pin = TestPKI.unusedPin()
        #expect(try SPKIPin(base64: pin.base64) == pin)
        #expect(SPKIPin(digest: [1, 2, 3]) == nil)
    }
}
