import Crypto
import Foundation
import SwiftASN1
import X509

/// One certificate pin: the SHA-256 digest of the DER encoding of a whole SubjectPublicKeyInfo
/// (algorithm identifier included), written in base64 as TrustKit, OkHttp and HPKP write it.
///
/// Trust-model row: **transport (network), low trust — a person in the middle**. The pin names the
/// key the backend must hold; a certificate for the same name issued by any other key (an
/// intercepting proxy's, a mis-issuing CA's) does not match.
///
/// The value is the same as the OpenSSL pipeline
/// `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`.
///
/// ```swift
/// let pin = try SPKIPin(base64: "r/mIkG3eEpVdm+u/ko/cwxzOMo1bk4TyHIlByibiA5E=")
/// let served = try SPKIPin(certificate: leaf)
/// ```
public struct SPKIPin: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The 32 bytes of the SHA-256 digest.
    public let digest: [UInt8]

    /// Parses a pin written as base64 of a 32-byte SHA-256 digest.
    ///
    /// - Throws: ``PinningPolicyError/malformedPin(domain:pin:reason:)`` (with an empty domain) when
    ///   the text is not base64 or does not decode to exactly 32 bytes.
    public init(base64 text: String) throws {
        self.digest = try SPKIPin.parse(text, domain: "")
    }

    /// Wraps a digest computed elsewhere. Returns `nil` unless it is exactly 32 bytes long.
    public init?(digest: [UInt8]) {
        guard digest.count == SHA256.byteCount else { return nil }
        self.digest = digest
    }

    /// The pin of a public key, computed by serializing it as a SubjectPublicKeyInfo with
    /// `DER.Serializer` (use this for a backup key that has no certificate yet).
    ///
    /// `Certificate.PublicKey.subjectPublicKeyInfoBytes` is only the raw key (the BIT STRING's
    /// content) and would give a different, wrong pin.
    /// - Throws: the serializer's `ASN1Error` (not expected for a key swift-certificates built).
    public init(publicKey: Certificate.PublicKey) throws {
        var serializer = DER.Serializer()
        try serializer.serialize(publicKey)
        self.digest = Array(SHA256.hash(data: serializer.serializedBytes))
    }

    /// The pin of the key in a certificate, taken from the certificate's own DER bytes: the
    /// SubjectPublicKeyInfo element exactly as the issuer signed it (so the pin matches what
    /// OpenSSL computes, whatever encoding choices the issuer made). Falls back to serializing
    /// `certificate.publicKey` if the DER cannot be walked.
    public init(certificate: Certificate) throws {
        if let raw = try? SPKIPin.rawSubjectPublicKeyInfo(of: certificate) {
            self.init(uncheckedDigest: Array(SHA256.hash(data: raw)))
        } else {
            try self.init(publicKey: certificate.publicKey)
        }
    }

    private init(uncheckedDigest: [UInt8]) {
        self.digest = uncheckedDigest
    }

    /// The pin in base64 (44 characters).
    public var base64: String { Data(digest).base64EncodedString() }

    public var description: String { base64 }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        self.digest = try SPKIPin.parse(text, domain: "")
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(base64)
    }

    /// Every pin of the certificates in a PEM text, in file order (leaf first for a chain).
    ///
    /// - Throws: ``PinnedTransportError/certificateUnreadable(_:)`` when the text holds no
    ///   certificate or one that does not parse.
    public static func pins(fromPEM text: String) throws -> [(certificate: Certificate, pin: SPKIPin)] {
        let documents: [PEMDocument]
        do {
            documents = try PEMDocument.parseMultiple(pemString: text)
        } catch {
            throw PinnedTransportError.certificateUnreadable("the text is not PEM: \(error)")
        }
        let certificates = documents.filter { $0.discriminator == "CERTIFICATE" }
        guard !certificates.isEmpty else {
            throw PinnedTransportError.certificateUnreadable("no \"BEGIN CERTIFICATE\" block in the text")
        }
        return try certificates.enumerated().map { index, document in
            do {
                let certificate = try Certificate(pemDocument: document)
                return (certificate, try SPKIPin(certificate: certificate))
            } catch {
                throw PinnedTransportError.certificateUnreadable("certificate \(index + 1) does not parse: \(error)")
            }
        }
    }

    // MARK: - Internals

    /// The DER bytes of `tbsCertificate.subjectPublicKeyInfo` as they appear in the certificate.
    static func rawSubjectPublicKeyInfo(of certificate: Certificate) throws -> ArraySlice<UInt8> {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        let root = try DER.parse(serializer.serializedBytes)
        guard case .constructed(let certificateChildren) = root.content,
              let tbs = certificateChildren.first(where: { _ in true }),
              case .constructed(let tbsChildren) = tbs.content
        else { throw ASN1Error.invalidASN1Object(reason: "certificate is not a SEQUENCE of SEQUENCE") }
        // TBSCertificate: [0] version (optional), serialNumber, signature, issuer, validity,
        // subject, subjectPublicKeyInfo, ...
        var elements = Array(tbsChildren)
        if let first = elements.first, first.identifier.tagClass == .contextSpecific, first.identifier.tagNumber == 0 {
            elements.removeFirst()
        }
        guard elements.count > 5, elements[5].identifier == .sequence else {
            throw ASN1Error.invalidASN1Object(reason: "TBSCertificate has no SubjectPublicKeyInfo")
        }
        return elements[5].encodedBytes
    }

    static func parse(_ text: String, domain: String) throws -> [UInt8] {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else {
            throw PinningPolicyError.malformedPin(domain: domain, pin: text, reason: "the pin is empty")
        }
        guard let data = Data(base64Encoded: trimmed) else {
            throw PinningPolicyError.malformedPin(
                domain: domain, pin: text,
                reason: "it is not base64 (a pin is the base64 of a SHA-256 digest, 44 characters ending in '=')")
        }
        guard data.count == SHA256.byteCount else {
            throw PinningPolicyError.malformedPin(
                domain: domain, pin: text,
                reason: "it decodes to \(data.count) bytes, a SHA-256 pin has 32")
        }
        return Array(data)
    }
}

extension SPKIPin {
    /// The DER bytes of a certificate.
    static func derBytes(of certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
