import Crypto
import Foundation

/// The per-login key that encrypts everything sensitive stored on the device.
///
/// Trust-model rows: **device storage (low)** — "everything sensitive encrypted with the
/// MainKey"; **device memory (moderate)** — the key lives in memory only while unlocked and is
/// zeroized on lock, together with every key derived from it.
///
/// A MainKey is 256 random bits created at login (``generate()``) and destroyed at logout. It
/// never encrypts anything directly: each purpose gets its own sub-key through HKDF-SHA256
/// (``derivedKey(for:byteCount:)``), so a ciphertext made for one purpose can never be opened with the key
/// of another. Derived keys are tracked by the MainKey: ``wipe()`` zeroizes them all, so no
/// component can keep decrypting with an old key after a lock.
public final class MainKey: @unchecked Sendable {
    /// Length of a MainKey in bytes.
    public static let byteCount = 32

    private let secret: SecretBytes
    private let lock = NSLock()
    private var derived: [WeakDerivedKey] = []

    /// A stable, non-secret identifier of this key (the first 8 bytes of an HKDF output,
    /// hex-encoded). Used as the key version in associated data and to tell keys apart in
    /// logs and errors; reveals nothing about the key.
    public let fingerprint: String

    /// Creates a fresh random MainKey.
    public static func generate() -> MainKey {
        MainKey(secret: SecretBytes(randomCount: byteCount))
    }

    /// Adopts existing key material (for example, just unwrapped by a protector).
    /// - Throws: ``MainKeyError/invalidLength(_:)`` if `secret` is not 32 bytes.
    public convenience init(adopting secret: SecretBytes) throws {
        guard secret.count == Self.byteCount else { throw MainKeyError.invalidLength(secret.count) }
        self.init(secret: secret)
    }

    private init(secret: SecretBytes) {
        self.secret = secret
        let id = (try? secret.withSymmetricKey { key in
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: key,
                info: Data("rampart.mainkey.fingerprint.v1".utf8),
                outputByteCount: 8
            ).withUnsafeBytes { Data($0) }
        }) ?? Data()
        self.fingerprint = id.map { String(format: "%02x", $0) }.joined()
    }

    /// Whether the key was wiped (locked or logged out).
    public var isWiped: Bool { secret.wiped }

    /// Calls `body` with the raw key bytes — for protectors that wrap the key, nobody else.
    /// - Throws: ``SecretError/wiped`` after a lock.
    public func withUnsafeKeyBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try secret.withUnsafeBytes(body)
    }

    /// The sub-key for `purpose`, derived with HKDF-SHA256 (salt = purpose domain,
    /// info = purpose name and context). Each call derives afresh; the returned key is wiped
    /// together with this MainKey.
    /// - Throws: ``SecretError/wiped`` after a lock.
    public func derivedKey(for purpose: KeyPurpose, byteCount: Int = 32) throws -> DerivedKey {
        let bytes = try secret.withSymmetricKey { key -> SecretBytes in
            let output = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: key,
                salt: Data("rampart.subkey.v1".utf8),
                info: purpose.info,
                outputByteCount: byteCount
            )
            return output.withUnsafeBytes { SecretBytes(copying: $0) }
        }
        let key = DerivedKey(purpose: purpose, secret: bytes, mainKeyFingerprint: fingerprint)
        lock.lock()
        derived.removeAll { $0.key == nil }
        derived.append(WeakDerivedKey(key: key))
        let alreadyWiped = secret.wiped
        lock.unlock()
        if alreadyWiped { key.wipe(); throw SecretError.wiped }
        return key
    }

    /// Zeroizes the key and every key derived from it. Irreversible for this instance.
    public func wipe() {
        secret.wipe()
        lock.lock()
        let keys = derived.compactMap(\.key)
        derived.removeAll()
        lock.unlock()
        keys.forEach { $0.wipe() }
    }

    /// Constant-time comparison of two MainKeys.
    public func constantTimeEquals(_ other: MainKey) throws -> Bool {
        try secret.constantTimeEquals(other.secret)
    }
}

extension MainKey: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "MainKey(\(fingerprint), redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["fingerprint": fingerprint], displayStyle: .class) }
}

/// Errors about MainKey material itself.
public enum MainKeyError: Error, Equatable, CustomStringConvertible {
    /// Key material of the wrong length was offered as a MainKey.
    case invalidLength(Int)

    public var description: String {
        switch self {
        case .invalidLength(let count):
            "A MainKey is \(MainKey.byteCount) bytes; got \(count). The stored key is corrupt."
        }
    }
}

/// What a sub-key is for. Different purposes (or contexts) always give unrelated keys.
public struct KeyPurpose: Hashable, Sendable, CustomStringConvertible {
    /// A short dotted name, e.g. `store.mail.columns`.
    public let name: String
    /// Extra context bound into the derivation (e.g. a user id). May be empty.
    public let context: String

    public init(_ name: String, context: String = "") {
        self.name = name
        self.context = context
    }

    /// The HKDF `info` for this purpose: length-prefixed name and context, so that
    /// ("a.b", "c") and ("a", "b.c") can never collide.
    public var info: Data {
        var data = Data()
        for part in [name, context] {
            let bytes = Data(part.utf8)
            var length = UInt32(bytes.count).bigEndian
            withUnsafeBytes(of: &length) { data.append(contentsOf: $0) }
            data.append(bytes)
        }
        return data
    }

    public var description: String { context.isEmpty ? name : "\(name)[\(context)]" }
}

/// A key derived from the MainKey for one purpose; zeroized when the MainKey is wiped.
public final class DerivedKey: @unchecked Sendable {
    public let purpose: KeyPurpose
    /// The fingerprint of the MainKey this key came from (its key version).
    public let mainKeyFingerprint: String
    private let secret: SecretBytes

    init(purpose: KeyPurpose, secret: SecretBytes, mainKeyFingerprint: String) {
        self.purpose = purpose
        self.secret = secret
        self.mainKeyFingerprint = mainKeyFingerprint
    }

    public var isWiped: Bool { secret.wiped }
    public var byteCount: Int { secret.count }

    /// Calls `body` with a swift-crypto key over this sub-key.
    /// - Throws: ``SecretError/wiped`` after the MainKey was locked.
    public func withSymmetricKey<R>(_ body: (SymmetricKey) throws -> R) throws -> R {
        try secret.withSymmetricKey(body)
    }

    /// Calls `body` with the raw bytes of this sub-key.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        try secret.withUnsafeBytes(body)
    }

    /// Zeroizes this key.
    public func wipe() { secret.wipe() }
}

extension DerivedKey: CustomStringConvertible, CustomReflectable {
    public var description: String { "DerivedKey(\(purpose), redacted)" }
    public var customMirror: Mirror { Mirror(self, children: ["purpose": purpose.description], displayStyle: .class) }
}

private struct WeakDerivedKey {
    weak var key: DerivedKey?
}
