import Crypto
import Foundation
import PinnedTransport
import SwiftASN1
import X509

/// A certificate made in the test, with its private key.
struct Issued: Sendable {
    let certificate: Certificate
    let key: Certificate.PrivateKey
    /// PEM of the P-256 private key, for the NIO server (nil for other key types).
    let keyPEM: String?

    var pin: SPKIPin { try! SPKIPin(certificate: certificate) }
    var pem: String { try! certificate.serializeAsPEM().pemString }
    var der: [UInt8] {
        var serializer = DER.Serializer()
        try! serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}

/// Certificates generated with swift-certificates for each test run: no fixture files.
enum TestPKI {
    static let hour: TimeInterval = 3600

    /// A self-signed CA.
    static func makeCA(_ name: String) throws -> Issued {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(name) }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: Date().addingTimeInterval(-hour), notValidAfter: Date().addingTimeInterval(365 * 24 * hour),
            issuer: subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(key))
        return Issued(certificate: certificate, key: .init(key), keyPEM: key.pemRepresentation)
    }

    /// A server certificate for `names`, issued by `issuer` (or self-signed when `issuer` is nil).
    static func makeLeaf(
        names: [String], ipAddresses: [[UInt8]] = [], issuer: Issued?, markedAsCA: Bool = false,
        key: P256.Signing.PrivateKey = P256.Signing.PrivateKey(),
        notValidBefore: Date = Date().addingTimeInterval(-hour),
        notValidAfter: Date = Date().addingTimeInterval(30 * 24 * hour)
    ) throws -> Issued {
        let subject = try DistinguishedName { CommonName(names.first ?? "leaf") }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: notValidBefore, notValidAfter: notValidAfter,
            issuer: issuer?.certificate.subject ?? subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                if markedAsCA {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                    Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
                } else {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                }
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(names.map { .dnsName($0) }
                    + ipAddresses.map { .ipAddress(ASN1OctetString(contentBytes: ArraySlice($0))) })
            },
            issuerPrivateKey: issuer?.key ?? .init(key))
        return Issued(certificate: certificate, key: .init(key), keyPEM: key.pemRepresentation)
    }

    /// A self-signed certificate with any of the key types swift-certificates supports.
    static func makeSelfSigned(key: Certificate.PrivateKey, algorithm: Certificate.SignatureAlgorithm) throws -> Issued {
        let subject = try DistinguishedName { CommonName("key-type-test") }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key.publicKey,
            notValidBefore: Date().addingTimeInterval(-hour), notValidAfter: Date().addingTimeInterval(24 * hour),
            issuer: subject, subject: subject, signatureAlgorithm: algorithm,
            extensions: Certificate.Extensions(), issuerPrivateKey: key)
        return Issued(certificate: certificate, key: key, keyPEM: nil)
    }

    /// A pin no test certificate has (a random backup key's pin).
    static func unusedPin() -> SPKIPin {
        try! SPKIPin(publicKey: .init(P256.Signing.PrivateKey().publicKey))
    }
}
