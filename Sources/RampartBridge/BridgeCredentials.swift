import Crypto
import Foundation
import NIOSSL
import RampartCore
import SealedStore
import SwiftASN1
import X509

/// The bridge's password and TLS certificate on this device, made at the first start and kept
/// sealed in the account's store (`DeviceItemStore`).
///
/// Trust-model rows **bridge password (moderate)** and **local TLS certificate (low)**: the
/// password is 144 random bits (base64url), one per device, shown only by `rampart bridge info`;
/// the certificate is self-signed for `localhost` and `127.0.0.1` with a P-256 key that never
/// leaves the sealed store, and its SHA-256 fingerprint is what a mail program is told to trust.
public struct BridgeCredentials: Sendable {
    static let kind = "bridge.secret"

    /// The IMAP/SMTP password (base64url, 24 characters).
    public let password: SecretBytes
    /// The certificate, DER.
    public let certificateDER: [UInt8]
    /// The certificate's private key (P-256, DER).
    let keyDER: SecretBytes

    /// The certificate's SHA-256 fingerprint, lower-case hex.
    public var certificateSHA256: String { SHA256.hash(data: certificateDER).map { String(format: "%02x", $0) }.joined() }

    /// The certificate in PEM (what a mail program or `openssl s_client -CAfile` is given).
    public var certificatePEM: String {
        "-----BEGIN CERTIFICATE-----\n"
            + Data(certificateDER).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
            + "\n-----END CERTIFICATE-----\n"
    }

    /// The password as text (for `bridge info`; the caller prints it and drops it).
    public func passwordText() throws -> String { try password.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    /// Loads the device's credentials from `store`, making and sealing them the first time.
    /// - Throws: `SealedStoreError` (locked, tampered), a certificate error.
    public static func loadOrCreate(in store: SealedStore) throws -> BridgeCredentials {
        let items = store.deviceItems
        if let password = try items.value(kind: kind, id: "password"), let certificate = try items.value(kind: kind, id: "certificate"),
           let key = try items.value(kind: kind, id: "key") {
            return BridgeCredentials(password: SecretBytes(copying: password), certificateDER: [UInt8](certificate), keyDER: SecretBytes(copying: key))
        }
        let random = SecretBytes(randomCount: 18)
        defer { random.wipe() }
        let text = try random.withUnsafeBytes { Data($0).base64EncodedString() }
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let key = P256.Signing.PrivateKey()
        let der = try makeCertificate(key: key, now: Date())
        try items.save([(kind, "password", 0, Data(text.utf8)), (kind, "certificate", Int64(der.count), Data(der)),
                        (kind, "key", 0, key.derRepresentation)])
        return BridgeCredentials(password: SecretBytes(copying: Data(text.utf8)), certificateDER: der,
                                 keyDER: SecretBytes(copying: key.derRepresentation))
    }

    /// A self-signed certificate for `localhost` and 127.0.0.1 (server authentication only).
    static func makeCertificate(key: P256.Signing.PrivateKey, now: Date) throws -> [UInt8] {
        let name = try DistinguishedName {
            OrganizationName("Rampart bridge on this device")
            CommonName("localhost")
        }
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-86_400), notValidAfter: now.addingTimeInterval(10 * 365 * 86_400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
                SubjectKeyIdentifier(hash: .init(key.publicKey))
            },
            issuerPrivateKey: .init(key))
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// The TLS context STARTTLS uses (TLS 1.2 at least).
    public func tlsContext() throws -> NIOSSLContext {
        let certificate = try NIOSSLCertificate(bytes: certificateDER, format: .der)
        let key = try keyDER.withUnsafeBytes { try NIOSSLPrivateKey(bytes: Array($0), format: .der) }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: [.certificate(certificate)], privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        return try NIOSSLContext(configuration: configuration)
    }
}
