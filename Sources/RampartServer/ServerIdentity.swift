import Crypto
import Foundation
import NIOSSL
import RampartCore
import SwiftASN1
import X509

/// The server's TLS identity on loopback: a self-signed CA made at first start, a leaf it issues
/// for `localhost` and `127.0.0.1`, and a backup key that is never served (its pin lets the leaf
/// key be rotated without locking clients out).
///
/// Trust-model row **transport (network), low trust — a person in the middle**: the client trusts
/// only this CA and pins the leaf's SubjectPublicKeyInfo (and the backup key's), so neither a
/// public CA nor an intercepting proxy can stand in for the local backend.
///
/// Files, in `<data>/tls/` (folder 0700, files 0600): `ca-key.pem`, `ca.pem`, `leaf-key.pem`,
/// `leaf.pem`, `backup-key.pem`. A leaf close to expiry is re-issued with the same key, so the
/// pins do not change.
public struct ServerIdentity: Sendable {
    /// The CA certificate (the client's only trust root).
    public let caCertificate: Certificate
    /// The certificate served by the TLS listener.
    public let leafCertificate: Certificate
    let leafKey: P256.Signing.PrivateKey
    let backupPublicKey: P256.Signing.PublicKey

    /// The host name the leaf is issued for.
    public static let hostName = "localhost"
    static let day: TimeInterval = 86_400

    /// Base64 SHA-256 SPKI pins: the leaf key's, then the backup key's (the format of
    /// PinnedTransport's `SPKIPin`).
    public var pins: [String] {
        get throws { [try Self.pin(of: .init(leafKey.publicKey)), try Self.pin(of: .init(backupPublicKey))] }
    }

    /// The CA certificate as PEM.
    public var caPEM: String { get throws { try caCertificate.serializeAsPEM().pemString } }

    /// The pin of a public key: base64(SHA-256(DER SubjectPublicKeyInfo)).
    static func pin(of key: Certificate.PublicKey) throws -> String {
        var serializer = DER.Serializer()
        try serializer.serialize(key)
        return Data(SHA256.hash(data: serializer.serializedBytes)).base64EncodedString()
    }

    /// Loads the identity from `folder`, creating what is missing (and re-issuing a leaf that
    /// expires within 7 days).
    /// - Throws: ``ServerError/startFailed(_:)`` when the folder or a file cannot be used.
    public static func loadOrCreate(in folder: URL, now: Date = Date()) throws -> ServerIdentity {
        do {
            try PrivateFiles.ensurePrivateDirectory(folder)
            let caKey = try loadOrCreateKey(folder.appendingPathComponent("ca-key.pem"))
            let leafKey = try loadOrCreateKey(folder.appendingPathComponent("leaf-key.pem"))
            let backupKey = try loadOrCreateKey(folder.appendingPathComponent("backup-key.pem"))

            let caURL = folder.appendingPathComponent("ca.pem")
            let ca: Certificate
            if let existing = try loadCertificate(caURL), existing.publicKey == Certificate.PublicKey(caKey.publicKey),
               existing.notValidAfter > now.addingTimeInterval(7 * day) {
                ca = existing
            } else {
                ca = try makeCA(key: caKey, now: now)
                try PrivateFiles.writeAtomically(Data(try ca.serializeAsPEM().pemString.utf8), to: caURL)
            }

            let leafURL = folder.appendingPathComponent("leaf.pem")
            let leaf: Certificate
            if let existing = try loadCertificate(leafURL), existing.publicKey == Certificate.PublicKey(leafKey.publicKey),
               existing.issuer == ca.subject, existing.notValidAfter > now.addingTimeInterval(7 * day),
               ca.publicKey.isValidSignature(existing.signature, for: existing) {
                leaf = existing
            } else {
                leaf = try makeLeaf(key: leafKey, issuer: ca, issuerKey: caKey, now: now)
                try PrivateFiles.writeAtomically(Data(try leaf.serializeAsPEM().pemString.utf8), to: leafURL)
            }
            return ServerIdentity(caCertificate: ca, leafCertificate: leaf, leafKey: leafKey, backupPublicKey: backupKey.publicKey)
        } catch let error as ServerError {
            throw error
        } catch {
            throw ServerError.startFailed("the TLS identity in \(folder.path) cannot be read or created (\(error))")
        }
    }

    /// NIOSSL's server configuration: the leaf and the CA served, TLS 1.2 at least, HTTP/1.1.
    func tlsConfiguration() throws -> TLSConfiguration {
        func der(_ certificate: Certificate) throws -> [UInt8] {
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
        let chain = try [leafCertificate, caCertificate].map { try NIOSSLCertificate(bytes: der($0), format: .der) }
        let key = try NIOSSLPrivateKey(bytes: Array(leafKey.pemRepresentation.utf8), format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.applicationProtocols = ["http/1.1"]
        return configuration
    }

    // MARK: - Files and certificates

    static func loadOrCreateKey(_ url: URL) throws -> P256.Signing.PrivateKey {
        if FileManager.default.fileExists(atPath: url.path) {
            try PrivateFiles.checkPrivateFile(url)
            let text = try String(contentsOf: url, encoding: .utf8)
            return try P256.Signing.PrivateKey(pemRepresentation: text)
        }
        let key = P256.Signing.PrivateKey()
        try PrivateFiles.writeAtomically(Data(key.pemRepresentation.utf8), to: url)
        return key
    }

    static func loadCertificate(_ url: URL) throws -> Certificate? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let text = try String(contentsOf: url, encoding: .utf8)
        return try? Certificate(pemEncoded: text)
    }

    static func makeCA(key: P256.Signing.PrivateKey, now: Date) throws -> Certificate {
        let subject = try DistinguishedName {
            OrganizationName("Rampart embedded backend")
            CommonName("Rampart local CA")
        }
        return try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-day), notValidAfter: now.addingTimeInterval(3650 * day),
            issuer: subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: .init(key.publicKey))
            },
            issuerPrivateKey: .init(key))
    }

    static func makeLeaf(key: P256.Signing.PrivateKey, issuer: Certificate, issuerKey: P256.Signing.PrivateKey, now: Date) throws -> Certificate {
        let subject = try DistinguishedName { CommonName(hostName) }
        return try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-day), notValidAfter: now.addingTimeInterval(397 * day),
            issuer: issuer.subject, subject: subject, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName(hostName), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(issuerKey))
    }
}
