import Crypto
import Foundation
import OpenPGP
import RampartAPI
import RampartCore
import SealedStore

/// A correspondent's OpenPGP key, pinned on this device.
///
/// Trust-model row **inbox (low)**: the first key seen for an address (from the server's key
/// directory, or imported by the user) is the one used to verify that address's signatures and
/// to encrypt to it; a different key the server offers later is reported, never used.
public struct PinnedKey: Sendable, Equatable, Codable {
    /// Where the pinned key came from.
    public enum Source: String, Sendable, Codable {
        /// The server's key directory, on first use.
        case server
        /// `rampart contacts import-key` (e.g. `gpg --export --armor`).
        case imported
    }
    /// The address (lower case).
    public var address: String
    /// The primary key's fingerprint (40 upper-case hex digits).
    public var fingerprint: String
    /// The armored public key.
    public var armoredKey: String
    public var source: Source
    /// Unix seconds when it was pinned.
    public var firstSeen: Int64
    /// Set by `rampart contacts verify` once the user compared the safety number out of band.
    public var verified: Bool?

    /// The key itself. - Throws: ``ClientError/tampered(_:)`` when the stored key does not parse.
    public func publicKey() throws -> PGPPublicKey {
        do { return try PGPPublicKey(armored: armoredKey) } catch {
            throw ClientError.tampered("The pinned key of \(address)")
        }
    }
}

/// What a key lookup found for one address.
public struct KeyLookup: Sendable {
    /// The pinned key, if there is one (the one to use).
    public var pinned: PinnedKey?
    /// Set when the lookup pinned the key just now (first use).
    public var newlyPinned = false
    /// Set when the server offers another key than the pinned one: what it offered (not used).
    public var offeredFingerprint: String?
    /// Whether the server's key directory knows the address (a user of this server).
    public var inDirectory = false
    /// What the key log says of the pinned key (checked for keys pinned from the directory).
    public var transparency: KeyTransparencyStatus = .notChecked

    /// A line for the user when something happened worth saying (new pin, different key).
    public var notice: String? {
        guard let pinned else { return nil }
        if let offered = offeredFingerprint {
            return "WARNING: the server offers another key for \(pinned.address) (\(offered)) than the one pinned on this device (\(pinned.fingerprint)); the pinned key is used. Check with \(pinned.address) and `rampart contacts import-key` the right one."
        }
        if newlyPinned { return "Pinned the key of \(pinned.address): \(pinned.fingerprint) (from the server, first use)." }
        return nil
    }
}

/// The contacts' keys pinned on this device, in the sealed store's contacts table.
///
/// Trust-model rows **inbox (low)** (sender authentication: signatures are checked against the
/// pinned key of the claimed sender) and **database (critical)**: each pin is a `Contact` record
/// whose name, addresses and card (the pin as JSON: address, fingerprint, armored key, source,
/// first seen) are sealed under the MainKey; its id is a keyed hash of the address (a MainKey
/// sub-key), so the database names no correspondent in clear.
public struct ContactKeys: Sendable {
    public let account: ClientAccount

    public init(account: ClientAccount) { self.account = account }

    static let idPrefix = "pgpkey_"

    /// The contact record id of `address`: `pgpkey_` + 32 hex digits of HMAC(sub-key, address).
    func contactID(_ address: String) throws -> String {
        try account.keys.withMainKey { mainKey in
            let derived = try mainKey.derivedKey(for: KeyPurpose("rampart.client.contact-key-id"))
            defer { derived.wipe() }
            let mac = try derived.withSymmetricKey { HMAC<SHA256>.authenticationCode(for: Data(address.lowercased().utf8), using: $0) }
            return Self.idPrefix + Data(mac).prefix(16).map { String(format: "%02x", $0) }.joined()
        }
    }

    /// The key pinned for `address`, if any.
    public func pinned(_ address: String) throws -> PinnedKey? {
        let id = try contactID(address)
        let contact: Contact
        do { contact = try account.store().mail.contact(id: id) } catch SealedStoreError.notFound {
            return nil
        }
        return try Self.decode(contact)
    }

    /// Every pinned key, by address.
    public func all() throws -> [PinnedKey] {
        try account.store().mail.contacts().filter { $0.id.hasPrefix(Self.idPrefix) }.map(Self.decode).sorted { $0.address < $1.address }
    }

    static func decode(_ contact: Contact) throws -> PinnedKey {
        do { return try JSONDecoder().decode(PinnedKey.self, from: Data(contact.card.utf8)) } catch {
            throw ClientError.tampered("The pinned key record \(contact.id)")
        }
    }

    /// Pins `key` for `address` (replacing any earlier pin: only an explicit user action or a
    /// first use calls this).
    @discardableResult
    public func pin(_ key: PGPPublicKey, address: String, source: PinnedKey.Source) throws -> PinnedKey {
        let address = address.lowercased()
        let now = Int64(account.clock.now.timeIntervalSince1970)
        let pinned = PinnedKey(address: address, fingerprint: key.fingerprint.hex, armoredKey: key.armored(), source: source, firstSeen: now)
        let card = String(decoding: try JSONEncoder().encode(pinned), as: UTF8.self)
        try account.store().mail.save(contact: Contact(id: try contactID(address), modified: now, name: address,
                                                       emails: [address], card: card))
        return pinned
    }

    /// Pins every key of an armored key file (one or several keys, e.g. `gpg --export --armor`)
    /// for each of its addresses. - Throws: ``ClientError/badInput(_:)`` for a file that holds no
    /// usable key.
    public func importKeys(armored: String) throws -> [PinnedKey] {
        let keys: [PGPPublicKey]
        do { keys = try PGPPublicKey.keys(inArmored: armored) } catch {
            throw ClientError.badInput("The file holds no OpenPGP public key that can be read: \(error)")
        }
        var pinned: [PinnedKey] = []
        for key in keys {
            for address in Set(key.addresses) { pinned.append(try pin(key, address: address, source: .imported)) }
        }
        guard !pinned.isEmpty else { throw ClientError.badInput("The keys in the file name no e-mail address to pin them for.") }
        return pinned
    }

    /// The key to use for `address`: the pinned one; else the server's key directory's, pinned
    /// now (first use); a different key from the server is reported in the answer and not used.
    /// With `api` nil only the pin is consulted.
    public func lookup(_ address: String, api: APIClient?) async throws -> KeyLookup {
        let existing = try pinned(address)
        guard let api else { return KeyLookup(pinned: existing) }
        let served: PublicKeyResponse
        do { served = try await api.publicKey(of: address) } catch ClientError.http(404, _) {
            return KeyLookup(pinned: existing)
        }
        let key: PGPPublicKey
        do { key = try PGPPublicKey(armored: served.publicKey) } catch {
            throw ClientError.malformedResponse("the key directory's key for \(address) is not an OpenPGP key")
        }
        guard key.addresses.contains(address.lowercased()) else {
            throw ClientError.tampered("The key the server gave for \(address) (it names other addresses)")
        }
        // Key transparency: a key from the directory is used only with the log's proof that it
        // is the address's newest logged key (an imported or verified key is vouched for by the user).
        var transparency = KeyTransparencyStatus.notChecked
        if let pins = api.endpoint.keyLog, existing.map({ $0.source == .server && $0.verified != true }) ?? true {
            let inUse = try existing?.publicKey() ?? key
            transparency = try await KeyTransparency(account: account, pins: pins).status(of: inUse, address: address, api: api)
        }
        if let existing {
            return KeyLookup(pinned: existing, offeredFingerprint: existing.fingerprint == key.fingerprint.hex ? nil : key.fingerprint.hex,
                             inDirectory: true, transparency: transparency)
        }
        guard case .failed = transparency else {
            return KeyLookup(pinned: try pin(key, address: address, source: .server), newlyPinned: true, inDirectory: true,
                             transparency: transparency)
        }
        // Not pinned: a key the log does not prove is never trusted on first use.
        return KeyLookup(pinned: PinnedKey(address: address.lowercased(), fingerprint: key.fingerprint.hex, armoredKey: key.armored(),
                                           source: .server, firstSeen: Int64(account.clock.now.timeIntervalSince1970)),
                         inDirectory: true, transparency: transparency)
    }

    /// Marks the pinned key of `address` verified by the user (safety numbers compared out of band).
    /// - Throws: ``ClientError/notFound(kind:id:)`` when no key is pinned for it.
    @discardableResult
    public func markVerified(_ address: String) throws -> PinnedKey {
        guard var pinned = try pinned(address) else { throw ClientError.notFound(kind: "pinned key", id: address) }
        pinned.verified = true
        let card = String(decoding: try JSONEncoder().encode(pinned), as: UTF8.self)
        try account.store().mail.save(contact: Contact(id: try contactID(address), modified: Int64(account.clock.now.timeIntervalSince1970),
                                                       name: pinned.address, emails: [pinned.address], card: card))
        return pinned
    }
}

extension APIClient {
    /// `GET /v1/keys?address=A`: the key directory's public key for an address (404 when none).
    public func publicKey(of address: String) async throws -> PublicKeyResponse {
        try await json(.GET, APIRoute.publicKey + "?address=\(Self.escape(address))")
    }
}
