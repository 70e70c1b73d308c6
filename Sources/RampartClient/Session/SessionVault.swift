import Crypto
import Foundation
import Keychain
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore

/// What the client remembers about a logged-in account: the server, the session and its tokens.
///
/// Trust-model rows **access token (read: high)** and **username (read: critical)**: never on
/// disk in clear; ``SessionVault`` seals it under the MainKey.
public struct SessionRecord: Codable, Sendable, Equatable {
    /// The account's id on the server.
    public var serverUserID: String
    public var username: String
    public var displayName: String
    public var addresses: [String]
    public var endpoint: ServerEndpoint
    public var sessionID: String
    public var accessToken: String
    public var refreshToken: String
    /// Unix seconds when the access token expires (as announced at login or refresh).
    public var accessTokenExpiry: Int64

    public var tokens: SessionTokens {
        let (left, overflow) = accessTokenExpiry.subtractingReportingOverflow(Int64(Date().timeIntervalSince1970))
        return SessionTokens(sessionId: sessionID, accessToken: accessToken, refreshToken: refreshToken,
                             expiresIn: overflow ? 0 : Int(min(max(0, left), Self.maximumTokenLifetime)))
    }

    /// The longest access-token lifetime a server may announce (`expiresIn`): 30 days.
    public static let maximumTokenLifetime: Int64 = 30 * 24 * 3600

    /// Takes the tokens of a login or refresh. - Throws: ``ClientError/tampered(_:)`` when the
    /// server's `expiresIn` is negative or longer than ``maximumTokenLifetime`` (a hostile
    /// value such as `Int.max` must not overflow the expiry).
    mutating func update(_ fresh: SessionTokens, now: Date = Date()) throws {
        guard fresh.expiresIn >= 0, Int64(fresh.expiresIn) <= Self.maximumTokenLifetime else {
            throw ClientError.tampered("The server's token lifetime (expiresIn \(fresh.expiresIn) s; accepted 0 to \(Self.maximumTokenLifetime) s)")
        }
        sessionID = fresh.sessionId
        accessToken = fresh.accessToken
        refreshToken = fresh.refreshToken
        accessTokenExpiry = Int64(now.timeIntervalSince1970) + Int64(fresh.expiresIn)
    }
}

/// The session and the user's private key, sealed under the MainKey and kept in the keychain.
///
/// Trust-model rows **keychain (low)** — what the keychain holds is itself sealed with a
/// sub-key of the MainKey, so a dumped keychain yields nothing without the protector — and
/// **the user's private and public keys (critical)**, **access token (high)**.
///
/// Envelope, version 1: `"RCV1" ‖ nonce (12) ‖ ciphertext ‖ tag (16)`, AES-256-GCM under
/// HKDF(MainKey, "rampart.client.vault" / item name); associated data
/// `"rampart.client.vault.v1" ‖ 0 ‖ local user ‖ 0 ‖ item name`, so an envelope copied to
/// another item or another user does not open.
public struct SessionVault: Sendable {
    public let keychain: any Keychain
    public let userID: UserID

    static let sessionItem = "client.session"
    static let mailboxKeyItem = "client.mailbox-key"
    static let keyringItem = "client.keyring"
    static let magic = Array("RCV1".utf8)

    public init(keychain: any Keychain, userID: UserID) {
        self.keychain = keychain; self.userID = userID
    }

    /// Whether a session is stored (readable without the MainKey: only its presence).
    public func hasSession() throws -> Bool { try keychain.readIfPresent(.user(userID, Self.sessionItem)) != nil }

    public func saveSession(_ record: SessionRecord, with key: MainKey) throws {
        var json = [UInt8](try JSONEncoder().encode(record))
        let secret = SecretBytes(consuming: &json)
        try store(secret, item: Self.sessionItem, key: key)
    }

    /// - Throws: ``ClientError/notLoggedIn(_:)``, ``ClientError/tampered(_:)``.
    public func session(with key: MainKey) throws -> SessionRecord {
        let plain = try load(item: Self.sessionItem, key: key)
        return try plain.withUnsafeBytes { bytes in
            do { return try JSONDecoder().decode(SessionRecord.self, from: Data(bytes)) } catch {
                throw ClientError.tampered("The stored session")
            }
        }
    }

    /// Keeps the unlocked OpenPGP key sealed under the MainKey (its unprotected export inside
    /// the vault envelope): later commands open it with the MainKey, not the mailbox password.
    public func saveMailboxKey(_ key: PGPPrivateKey, with mainKey: MainKey) throws {
        try store(try key.unprotectedExport(), item: Self.mailboxKeyItem, key: mainKey)
    }

    /// The user's private key, opened with the MainKey (its secret material zeroized when the
    /// returned key is released).
    public func mailboxKey(with key: MainKey) throws -> PGPPrivateKey {
        let plain = try load(item: Self.mailboxKeyItem, key: key)
        defer { plain.wipe() }
        do { return try PGPPrivateKey(unprotected: plain) } catch {
            throw ClientError.tampered("The stored private key")
        }
    }

    /// Keeps the unlocked key ring (the user key and every address key, MailboxCrypto's `AccountKeyring`) sealed
    /// under the MainKey: `kind (0 user, 1 address, 2 removed address) ‖ address length (2, big
    /// endian) ‖ address ‖ key length (4) ‖ the key's unprotected export`, one entry after the other.
    public func saveKeyring(_ ring: AccountKeyring, with mainKey: MainKey) throws {
        var bytes: [UInt8] = []
        defer { bytes.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        func append(_ kind: UInt8, _ address: String, _ key: PGPPrivateKey) throws {
            let name = Array(address.utf8), export = try key.unprotectedExport()
            defer { export.wipe() }
            bytes.append(kind)
            bytes += [UInt8(name.count >> 8 & 0xFF), UInt8(name.count & 0xFF)] + name
            let count = export.count
            bytes += [UInt8(count >> 24 & 0xFF), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF)]
            try export.withUnsafeBytes { bytes += $0 }
        }
        try append(0, "", ring.userKey)
        for entry in ring.addressKeys { try append(entry.active ? 1 : 2, entry.address, entry.key) }
        try store(SecretBytes(copying: bytes), item: Self.keyringItem, key: mainKey)
    }

    /// The key ring, opened with the MainKey; nil for an account set up without one.
    /// - Throws: ``ClientError/tampered(_:)`` for a damaged envelope or entry.
    public func keyring(with key: MainKey) throws -> AccountKeyring? {
        guard try keychain.readIfPresent(.user(userID, Self.keyringItem)) != nil else { return nil }
        let plain = try load(item: Self.keyringItem, key: key)
        defer { plain.wipe() }
        return try plain.withUnsafeBytes { bytes -> AccountKeyring in
            var offset = 0, user: PGPPrivateKey?, addresses: [(address: String, key: PGPPrivateKey, active: Bool)] = []
            func take(_ count: Int) throws -> UnsafeRawBufferPointer.SubSequence {
                guard count >= 0, bytes.count - offset >= count else { throw ClientError.tampered("The stored key ring") }
                defer { offset += count }
                return bytes[offset..<(offset + count)]
            }
            while offset < bytes.count {
                let kind = try take(1).first!
                let nameLength = try take(2).reduce(0) { $0 << 8 | Int($1) }
                let name = String(decoding: try take(nameLength), as: UTF8.self)
                let keyLength = try take(4).reduce(0) { $0 << 8 | Int($1) }
                let export = SecretBytes(copying: UnsafeRawBufferPointer(rebasing: try take(keyLength)))
                defer { export.wipe() }
                guard let key = try? PGPPrivateKey(unprotected: export), kind <= 2 else { throw ClientError.tampered("The stored key ring") }
                if kind == 0 { user = key } else { addresses.append((name, key, kind == 1)) }
            }
            guard let user, !addresses.isEmpty else { throw ClientError.tampered("The stored key ring") }
            return AccountKeyring(userKey: user, addressKeys: addresses)
        }
    }

    // MARK: Envelope

    func associatedData(_ item: String) -> Data { Data("rampart.client.vault.v1\u{0}\(userID.rawValue)\u{0}\(item)".utf8) }

    func store(_ plain: SecretBytes, item: String, key: MainKey) throws {
        defer { plain.wipe() }
        let derived = try key.derivedKey(for: KeyPurpose("rampart.client.vault", context: item))
        defer { derived.wipe() }
        let box = try derived.withSymmetricKey { symmetric in
            try plain.withUnsafeBytes { try AES.GCM.seal($0, using: symmetric, authenticating: associatedData(item)) }
        }
        var envelope = Self.magic
        envelope += box.nonce.withUnsafeBytes { Array($0) }
        envelope += box.ciphertext
        envelope += box.tag
        try keychain.set(SecretBytes(consuming: &envelope), for: .user(userID, item))
    }

    func load(item: String, key: MainKey) throws -> SecretBytes {
        guard let stored = try keychain.readIfPresent(.user(userID, item)) else { throw ClientError.notLoggedIn(userID) }
        defer { stored.wipe() }
        let derived = try key.derivedKey(for: KeyPurpose("rampart.client.vault", context: item))
        defer { derived.wipe() }
        return try stored.withUnsafeBytes { bytes -> SecretBytes in
            guard bytes.count >= 4 + 12 + 16, Array(bytes[0..<4]) == Self.magic else {
                throw ClientError.tampered("The stored \(item)")
            }
            do {
                let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: bytes[4..<16]),
                                                ciphertext: bytes[16..<(bytes.count - 16)],
                                                tag: bytes[(bytes.count - 16)...])
                var opened = try derived.withSymmetricKey { try AES.GCM.open(box, using: $0, authenticating: associatedData(item)) }
                defer { opened.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
                return SecretBytes(copying: opened)
            } catch {
                throw ClientError.tampered("The stored \(item)")
            }
        }
    }
}
