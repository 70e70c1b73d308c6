import Foundation
import X509

/// The certificates chain validation anchors to, before any pin is looked at.
///
/// Trust-model row: **transport (network), low trust**. For the public backend use ``system``;
/// for the embedded local backend (`rampart server`) give its self-signed certificate or its private CA
/// as the only root, so that no public CA can vouch for `localhost`.
public enum PinnedTrustRoots: Sendable {
    /// The operating system's bundle (`/etc/ssl/certs/ca-certificates.crt` and friends on Linux).
    case system
    /// Only these certificates.
    case certificates([Certificate])

    /// Only the certificates of a PEM file.
    /// - Throws: ``PinnedTransportError/certificateUnreadable(_:)``.
    public static func pemFile(_ path: String) throws -> PinnedTrustRoots {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw PinnedTransportError.certificateUnreadable("cannot read \(path): \(error.localizedDescription)")
        }
        return .certificates(try SPKIPin.pins(fromPEM: text).map(\.certificate))
    }

    var store: CertificateStore {
        switch self {
        case .system: CertificateStore.systemTrustRoots
        case .certificates(let certificates): CertificateStore(certificates)
        }
    }
}
