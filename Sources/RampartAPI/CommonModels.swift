import Foundation

// Bodies every area shares: errors, the empty success, and the server's description.

/// Every error body: `{"error": {"code": "...", "message": "..."}}`.
///
/// Trust-model row **transport (network), low trust**: a refused request gets a precise code and
/// a message a person can act on, never an echo of a secret.
public struct APIErrorBody: Codable, Sendable, Equatable {
    /// The inside of an error body.
    public struct Detail: Codable, Sendable, Equatable {
        /// A stable, machine-readable code (`auth.expired`, `notFound`, …).
        public var code: String
        /// What went wrong, for a person.
        public var message: String
    }
    /// The error.
    public var error: Detail
    /// An error body.
    public init(code: String, message: String) { error = Detail(code: code, message: message) }
}

/// `{"ok": true}`, the body of calls that return nothing else (logout, push registration).
public struct OKResponse: Codable, Sendable {
    /// Always `true`.
    public var ok: Bool
    /// The success body.
    public init() { ok = true }
}

/// What `rampart server start` writes to `<home>/server.json` once it listens.
///
/// Trust-model row **transport (network), low trust**: ``pins`` and ``certificatePEM`` are what
/// the client pins and trusts, nothing else.
public struct ServerInfo: Codable, Sendable {
    /// The TCP port on 127.0.0.1.
    public var port: Int
    /// SPKI pins (base64 SHA-256): the live key's first, then the backup key's.
    public var pins: [String]
    /// PEM of the self-signed CA certificate the client trusts as the only root.
    public var certificatePEM: String
    /// The server process's id.
    public var pid: Int32
    /// The host name the certificate is issued for (`localhost`; `127.0.0.1` is in it too).
    public var host: String?
    /// The folder holding one push inbox per session: `<pushDirectory>/<sessionId>/*.push`, each
    /// file one RFC 8291 `aes128gcm` body (what a push service would deliver).
    public var pushDirectory: String?
    /// The Maildir folder (`tmp/`, `new/`, `cur/`) where mail to recipients outside this server is
    /// written as RFC 5322 files: the hand-off point for an MTA.
    public var outbox: String?
    /// The fingerprint (40 hex) of the OpenPGP key that signs the SRP modulus: pinned like
    /// ``pins`` (trust-model row **transport (network), low trust**).
    public var modulusKeyFingerprint: String?
    /// That key's public key, armored (the client checks it against ``modulusKeyFingerprint``).
    public var modulusPublicKey: String?
    /// The key log's origin, its signing key and the witnesses whose cosignature a head needs:
    /// pinned like ``modulusKeyFingerprint`` (trust-model row **the user's private and public
    /// keys, critical when modified**).
    public var keyLog: KeyLogPins?
    /// A server description.
    public init(port: Int, pins: [String], certificatePEM: String, pid: Int32, host: String? = nil, pushDirectory: String? = nil,
                outbox: String? = nil, modulusKeyFingerprint: String? = nil, modulusPublicKey: String? = nil, keyLog: KeyLogPins? = nil) {
        self.port = port; self.pins = pins; self.certificatePEM = certificatePEM; self.pid = pid
        self.host = host; self.pushDirectory = pushDirectory; self.outbox = outbox
        self.modulusKeyFingerprint = modulusKeyFingerprint; self.modulusPublicKey = modulusPublicKey; self.keyLog = keyLog
    }
    /// The base URL of the API (`https://localhost:<port>`).
    public var baseURL: URL { URL(string: "https://\(host ?? "localhost"):\(port)")! }
}

/// The shape of the ids the server and client choose: a prefix and lower-case hex digits.
///
/// Trust-model row **transport (network), low trust**: the server refuses an id of another shape
/// before it looks anything up.
public enum WireID {
    /// Whether `id` is `prefix` followed by exactly `hexDigits` lower-case hex digits.
    public static func hasShape(_ id: String, prefix: String, hexDigits: Int) -> Bool {
        guard id.hasPrefix(prefix) else { return false }
        let rest = id.dropFirst(prefix.count)
        return rest.count == hexDigits && rest.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }
}
