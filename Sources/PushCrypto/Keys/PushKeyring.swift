import Crypto
import Foundation
import Keychain
import RampartCore

/// The push keys of one user on this device, kept in the keychain's **shared** access group
/// (readable by the push extension, which never sees the app group or the MainKey), with
/// accessibility *after first unlock, this device only*.
///
/// Trust-model row: **push payload key** — "at each login a new key pair is generated, the
/// private key kept in the keychain … deleted at logout; a public key is never reused across
/// sessions". Also **keychain (low)** / **device backups (low)**: the items are this-device-only.
///
/// Lifecycle:
/// - ``subscribe(sessionID:)`` at login: a new pair and auth secret, never a stored one;
/// - ``rotate(sessionID:)`` on the user's request, or ``rotateIfDue(sessionID:)`` on schedule
///   (``RetentionPolicy/rotationInterval``): a new pair for the same session, which the caller
///   registers with the server at once (``discard(_:)`` it if that fails). Never after a push
///   that does not open: anyone can forge one;
/// - previous pairs stay for a grace period (at most ``RetentionPolicy/maximumPreviousKeys``
///   of them, none older than ``RetentionPolicy/gracePeriod`` by the injected clock), so pushes
///   already in flight to them still open;
/// - ``logout()`` deletes every pair and every replay ledger of the user.
///
/// Item layout: account `push.key.<session>.<fingerprint>` under the user's service, value
/// `version (1) ‖ createdAt ms (8, big-endian) ‖ private key (32) ‖ auth secret (16)`.
public final class PushKeyring: Sendable {
    /// How many previous pairs are kept, and for how long.
    public struct RetentionPolicy: Sendable {
        /// Previous pairs kept besides the newest one (the seed app keeps 8).
        public var maximumPreviousKeys: Int
        /// How long a previous pair may still open pushes after it was replaced.
        public var gracePeriod: TimeInterval
        /// The scheduled rotation: a session's newest pair older than this is replaced by
        /// ``rotateIfDue(sessionID:)`` (default 7 days).
        public var rotationInterval: TimeInterval

        public init(maximumPreviousKeys: Int = 8, gracePeriod: TimeInterval = 48 * 3600, rotationInterval: TimeInterval = 7 * 24 * 3600) {
            self.maximumPreviousKeys = max(0, maximumPreviousKeys)
            self.gracePeriod = max(0, gracePeriod)
            self.rotationInterval = max(0, rotationInterval)
        }

        public static let `default` = RetentionPolicy()
    }

    public typealias Dependencies = HasKeychain & HasClock

    static let keyPrefix = "push.key."
    static let ledgerPrefix = "push.salts."
    static let itemVersion: UInt8 = 1
    static let itemLength = 1 + 8 + 32 + 16

    public let keychain: any Keychain
    public let clock: any RampartClock
    public let userID: UserID
    public let policy: RetentionPolicy

    public init(keychain: any Keychain, clock: any RampartClock, userID: UserID, policy: RetentionPolicy = .default) {
        self.keychain = keychain
        self.clock = clock
        self.userID = userID
        self.policy = policy
    }

    /// Builds the keyring from a container that declares ``Dependencies``.
    public convenience init(dependencies: any Dependencies, userID: UserID, policy: RetentionPolicy = .default) {
        self.init(keychain: dependencies.keychain, clock: dependencies.clock, userID: userID, policy: policy)
    }

    /// Finds the user whose push keys belong to `sessionID`, from the shared group alone (the
    /// push process is told only the session id).
    /// - Throws: ``PushCryptoError/noPushKeys(session:)``, keychain errors.
    public static func user(ofSession sessionID: PushSessionID, in keychain: any Keychain) throws -> UserID {
        let prefix = keyPrefix + sessionID.rawValue + "."
        let servicePrefix = KeychainItemID.userService(UserID("x")).dropLast(1)
        for id in try keychain.itemIDs(accessGroup: .shared) where id.account.hasPrefix(prefix) && id.service.hasPrefix(servicePrefix) {
            if let user = try? UserID(validating: String(id.service.dropFirst(servicePrefix.count))) { return user }
        }
        throw PushCryptoError.noPushKeys(session: sessionID.rawValue)
    }

    // MARK: - Lifecycle

    /// Login: generates a new key pair and auth secret, stores them, and returns the registration
    /// record for the push server. Older pairs past the retention policy are deleted.
    @discardableResult
    public func subscribe(sessionID: PushSessionID) throws -> PushRegistration {
        let pair = try PushKeyPair.generate(sessionID: sessionID, now: clock.now)
        try store(pair)
        try prune()
        return try pair.registration()
    }

    /// A new pair for the same session (the old one stays in the grace list), on the user's
    /// request or on schedule; the caller registers the returned record with the server.
    @discardableResult
    public func rotate(sessionID: PushSessionID) throws -> PushRegistration {
        try subscribe(sessionID: sessionID)
    }

    /// The scheduled rotation: a new pair when the newest pair of `sessionID` is older than
    /// ``RetentionPolicy/rotationInterval``; `nil` when none is due (or the session has no pair).
    public func rotateIfDue(sessionID: PushSessionID) throws -> PushRegistration? {
        guard let newest = try keyPairs().first(where: { $0.sessionID == sessionID }),
              clock.now.timeIntervalSince(newest.createdAt) >= policy.rotationInterval else { return nil }
        return try rotate(sessionID: sessionID)
    }

    /// Deletes the pair of `registration` (a rotation the server did not accept: the previous
    /// pair, still registered there, stays the newest). Returns whether a pair was deleted.
    @discardableResult
    public func discard(_ registration: PushRegistration) throws -> Bool {
        let target = try registration.publicKeyBytes()
        for id in try ownItemIDs() where id.account.hasPrefix(Self.keyPrefix) {
            if let pair = try? load(id), pair.publicKeyBytes == target {
                try keychain.deleteIfPresent(id)
                return true
            }
        }
        return false
    }

    /// The registration record of the newest pair of `sessionID` (to register again after a
    /// rotation done by the push process). - Throws: ``PushCryptoError/noPushKeys(session:)``.
    public func currentRegistration(sessionID: PushSessionID) throws -> PushRegistration {
        guard let pair = try keyPairs().first(where: { $0.sessionID == sessionID }) else {
            throw PushCryptoError.noPushKeys(session: sessionID.rawValue)
        }
        return try pair.registration()
    }

    /// Logout: deletes every push key pair and replay ledger of the user.
    public func logout() throws {
        for id in try ownItemIDs() where id.account.hasPrefix(Self.keyPrefix) || id.account.hasPrefix(Self.ledgerPrefix) {
            try keychain.deleteIfPresent(id)
        }
    }

    // MARK: - Reading

    /// The usable pairs, newest first: the newest one, then previous ones within the retention
    /// policy. Pairs past the policy are deleted as they are found.
    public func keyPairs() throws -> [PushKeyPair] {
        try prune()
    }

    @discardableResult
    private func prune() throws -> [PushKeyPair] {
        var pairs: [(KeychainItemID, PushKeyPair)] = []
        for id in try ownItemIDs() where id.account.hasPrefix(Self.keyPrefix) {
            pairs.append((id, try load(id)))
        }
        pairs.sort { $0.1.createdAt > $1.1.createdAt }
        let now = clock.now
        var kept: [PushKeyPair] = []
        for (index, (id, pair)) in pairs.enumerated() {
            // A previous pair's grace period runs from when it was replaced (the next newer
            // pair's creation), so a pair replaced after a week still opens pushes in flight.
            let keep = index == 0
                || (index <= policy.maximumPreviousKeys && now.timeIntervalSince(pairs[index - 1].1.createdAt) <= policy.gracePeriod)
            if keep {
                kept.append(pair)
            } else {
                try keychain.deleteIfPresent(id)
            }
        }
        return kept
    }

    private func ownItemIDs() throws -> [KeychainItemID] {
        let service = KeychainItemID.userService(userID)
        return try keychain.itemIDs(accessGroup: .shared).filter { $0.service == service }
    }

    func itemID(for pair: PushKeyPair) -> KeychainItemID {
        .user(userID, Self.keyPrefix + pair.sessionID.rawValue + "." + pair.fingerprint, accessGroup: .shared)
    }

    func ledgerID(for sessionID: PushSessionID) -> KeychainItemID {
        .user(userID, Self.ledgerPrefix + sessionID.rawValue, accessGroup: .shared)
    }

    private func store(_ pair: PushKeyPair) throws {
        let milliseconds = UInt64(max(0, pair.createdAt.timeIntervalSince1970 * 1000))
        let value = try SecretBytes(count: Self.itemLength) { buffer in
            buffer[0] = Self.itemVersion
            for index in 0..<8 { buffer[1 + index] = UInt8(truncatingIfNeeded: milliseconds >> (8 * UInt64(7 - index))) }
            var raw = pair.privateKey.rawRepresentation
            defer { raw.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
            raw.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[9..<41]).copyMemory(from: $0) }
            try pair.authSecret.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: buffer[41..<57]).copyMemory(from: $0) }
        }
        // `add`, never `set`: a fingerprint collision with a stored pair must not overwrite it.
        try keychain.add(value, for: itemID(for: pair), accessibility: .afterFirstUnlockThisDeviceOnly)
    }

    private func load(_ id: KeychainItemID) throws -> PushKeyPair {
        let parts = id.account.dropFirst(Self.keyPrefix.count).split(separator: ".")
        guard parts.count >= 2, let session = try? PushSessionID(parts.dropLast().joined(separator: ".")) else {
            throw PushCryptoError.corruptKeyItem("unexpected item name \(id.account)")
        }
        let value = try keychain.read(id)
        defer { value.wipe() }
        return try value.withUnsafeBytes { bytes in
            guard bytes.count == Self.itemLength, bytes[0] == Self.itemVersion else {
                throw PushCryptoError.corruptKeyItem("item \(id.account) has \(bytes.count) bytes or an unknown version")
            }
            var milliseconds: UInt64 = 0
            for index in 1...8 { milliseconds = milliseconds << 8 | UInt64(bytes[index]) }
            let privateKey: P256.KeyAgreement.PrivateKey
            do {
                privateKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: UnsafeRawBufferPointer(rebasing: bytes[9..<41]))
            } catch {
                throw PushCryptoError.corruptKeyItem("item \(id.account) does not hold a P-256 private key")
            }
            let pair = try PushKeyPair(
                sessionID: session,
                createdAt: Date(timeIntervalSince1970: Double(milliseconds) / 1000),
                privateKey: privateKey,
                authSecret: SecretBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[41..<57]))
            )
            guard pair.fingerprint == parts.last.map(String.init) else {
                throw PushCryptoError.corruptKeyItem("item \(id.account) holds another key than its name says")
            }
            return pair
        }
    }
}
