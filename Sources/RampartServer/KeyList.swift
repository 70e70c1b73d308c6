import Foundation
import OpenPGP
import RampartAPI
import RampartCore

/// An address key whose every field was checked (``KeyList/check(_:userKey:domain:)``).
struct CheckedAddressKey {
    let address: String
    let publicKey: PGPPublicKey
    let lockedPrivateKey: String
    let token: String
    let signature: String
}

/// A change of an account's published key list: what the key directory answers for its addresses.
enum KeyListChange {
    /// A new address with its key (sign-up's first address, `account address add`).
    case published(userID: String, key: CheckedAddressKey)
    /// An address leaves the account and the key directory; its key stays in the key ring (old mail).
    case removed(userID: String, address: String)
    /// A reset: every address key replaced by a new one (old mail no longer opens).
    case replaced(userID: String, keys: [CheckedAddressKey])
    /// The account is deleted: every address and key goes.
    case erased(userID: String)

    /// The account the change is about.
    var userID: String {
        switch self {
        case .published(let id, _), .removed(let id, _), .replaced(let id, _), .erased(let id): id
        }
    }
}

/// The account's address keys (Proton's key model) and the ONE place their published list
/// changes: ``apply(_:_:now:)``. Sign-up, `account address add|remove`, a reset and a deletion
/// all go through it, inside their own transaction, so a key-transparency log can append one leaf
/// per change here (and nowhere else).
///
/// The `addressKeys` table: per key the address, the binary public key, the private key locked
/// with the token, the token (an OpenPGP message to the user key) and the user key's detached
/// signature over it, whether the address is still the account's, and when it was made.
///
/// Trust-model rows **the user's private and public keys (critical)** and **server (zero
/// access)**: the server cannot open a token or a key; it checks their OpenPGP structure (a locked
/// key naming the address, a token of encrypted-session-key packets then encrypted data, a
/// signature packet) and the device checks the rest (``AddressKeys`` in MailboxCrypto).
enum KeyList {
    /// The most active addresses an account may have.
    static let maximumAddresses = 20

    /// Applies `change` in the caller's transaction: the `addresses` routing rows, the account's
    /// address list and the `addressKeys` rows.
    ///
    /// Key transparency: this is where a log leaf for the change belongs.
    static func apply(_ db: any StorageConnection, _ change: KeyListChange, now: Int64) throws {
        // Key transparency: the addresses this change touches (read before it: a deletion's are gone after).
        let logged: [String] = switch change {
        case .published(_, let key): [key.address]
        case .removed(_, let address): [address]
        case .replaced(let userID, let keys): Array(Set(try activeAddresses(db, userID: userID) + keys.map(\.address))).sorted()
        case .erased(let userID): try activeAddresses(db, userID: userID)
        }
        switch change {
        case .published(let userID, let key):
            try publish(db, userID: userID, key: key, now: now)
        case .removed(let userID, let address):
            try db.execute(sql: "DELETE FROM addresses WHERE userId = ? AND address = ?", arguments: [userID, address])
            try db.execute(sql: "UPDATE addressKeys SET active = 0 WHERE userId = ? AND address = ?", arguments: [userID, address])
        case .replaced(let userID, let keys):
            try db.execute(sql: "DELETE FROM addressKeys WHERE userId = ?", arguments: [userID])
            for key in keys { try publish(db, userID: userID, key: key, now: now) }
        case .erased(let userID):
            try db.execute(sql: "DELETE FROM addressKeys WHERE userId = ?", arguments: [userID])
            try db.execute(sql: "DELETE FROM addresses WHERE userId = ?", arguments: [userID])
        }
        // Key transparency: one leaf per address touched, with its key list after the change.
        try KeyLogEntries.record(db, addresses: logged, time: now)
        if case .erased = change { return }
        let active = try activeAddresses(db, userID: change.userID)
        try db.execute(sql: "UPDATE users SET addresses = ? WHERE id = ?",
                       arguments: [String(decoding: try JSONEncoder().encode(active), as: UTF8.self), change.userID])
    }

    static func publish(_ db: any StorageConnection, userID: String, key: CheckedAddressKey, now: Int64) throws {
        if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM addresses WHERE address = ? COLLATE NOCASE AND userId != ?)",
                             arguments: [key.address, userID]) == true {
            throw SignupRefusal.addressTaken(key.address)
        }
        do {
            try db.execute(sql: "INSERT OR IGNORE INTO addresses (address, userId) VALUES (?, ?)", arguments: [key.address, userID])
        } catch StorageError.uniqueViolation {
            throw SignupRefusal.addressTaken(key.address)
        }
        try db.execute(sql: "UPDATE addressKeys SET active = 0 WHERE userId = ? AND address = ?", arguments: [userID, key.address])
        try db.execute(sql: """
            INSERT INTO addressKeys (userId, address, publicKey, privateKey, token, signature, active, created)
            VALUES (?, ?, ?, ?, ?, ?, 1, ?)
            """, arguments: [userID, key.address, key.publicKey.binary, Data(key.lockedPrivateKey.utf8), Data(key.token.utf8),
                             Data(key.signature.utf8), now])
    }

    /// The account's active addresses, the primary (oldest key) first.
    static func activeAddresses(_ db: any StorageConnection, userID: String) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT address FROM addressKeys WHERE userId = ? AND active = 1 ORDER BY id", arguments: [userID])
    }

    /// Every address key of the account (active and removed), oldest first, as a login hands them out.
    static func records(_ db: any StorageConnection, userID: String) throws -> [AddressKey] {
        try StorageRow.fetchAll(db, sql: "SELECT * FROM addressKeys WHERE userId = ? ORDER BY active DESC, id", arguments: [userID]).map { row in
            let publicKey: PGPPublicKey
            do { publicKey = try PGPPublicKey(binary: row.data("publicKey")) } catch {
                throw ServerError.storage("an address key of the account is unreadable")
            }
            return AddressKey(address: row["address"], publicKey: publicKey.armored(),
                              privateKey: String(decoding: row.data("privateKey"), as: UTF8.self),
                              token: String(decoding: row.data("token"), as: UTF8.self),
                              signature: String(decoding: row.data("signature"), as: UTF8.self), active: (row["active"] as Int) != 0)
        }
    }

    /// The key mail to `address` is encrypted to (what the key directory serves), or nil.
    static func activeKey(_ db: any StorageConnection, address: String) throws -> PGPPublicKey? {
        try key(Data.fetchOne(db, sql: "SELECT publicKey FROM addressKeys WHERE address = ? COLLATE NOCASE AND active = 1 ORDER BY id DESC LIMIT 1",
                              arguments: [address]))
    }

    /// The primary address's key of an account, or nil.
    static func primaryKey(_ db: any StorageConnection, userID: String) throws -> PGPPublicKey? {
        try key(Data.fetchOne(db, sql: "SELECT publicKey FROM addressKeys WHERE userId = ? AND active = 1 ORDER BY id LIMIT 1",
                              arguments: [userID]))
    }

    static func key(_ data: Data?) throws -> PGPPublicKey? {
        guard let data else { return nil }
        do { return try PGPPublicKey(binary: data) } catch { throw ServerError.storage("the recipient's public key is unreadable") }
    }

    /// Checks an uploaded address key against the account's user key: the address (form, domain,
    /// not reserved), one armored public key that can encrypt, a complete private key with every
    /// secret part locked, the same fingerprint, user ids naming exactly the address, a key other
    /// than the user key; the token one or more public-key encrypted session keys followed by
    /// encrypted data, the signature one signature packet. Nothing is written.
    /// - Throws: ``SignupRefusal``.
    static func check(_ upload: AddressKey, userKey: PGPPublicKey, domain: String) throws -> CheckedAddressKey {
        let address = try Signups.checkAddress(upload.address, domain: domain)
        let field = "AddressKey"
        let publicKey = try Signups.checkLockedKey(publicKey: upload.publicKey, privateKey: upload.privateKey, address: address, field: field)
        guard publicKey.fingerprint != userKey.fingerprint else {
            throw SignupRefusal.keyMismatch("the address key must be a key of its own, not the user key")
        }
        let limit = 16 * 1024
        guard upload.token.utf8.count <= limit, OpenPGP.isArmored(Data(upload.token.utf8)),
              let tokenTags = try? OpenPGP.packetTags(Data(upload.token.utf8)),
              tokenTags.count >= 2, tokenTags.dropLast().allSatisfy({ $0 == 1 }), [18, 20].contains(tokenTags.last) else {
            throw SignupRefusal.malformed(field: "\(field).Token", why: "it must be an armored OpenPGP message encrypted to the user key")
        }
        guard upload.signature.utf8.count <= limit, OpenPGP.isArmored(Data(upload.signature.utf8)),
              let signatureTags = try? OpenPGP.packetTags(Data(upload.signature.utf8)), signatureTags == [2] else {
            throw SignupRefusal.malformed(field: "\(field).Signature", why: "it must be one armored OpenPGP signature by the user key")
        }
        return CheckedAddressKey(address: address, publicKey: publicKey, lockedPrivateKey: upload.privateKey,
                                 token: upload.token, signature: upload.signature)
    }

    /// The `addressKeys` table.
    static func registerMigration(_ migrator: inout StorageMigrator) {
        migrator.registerMigration("address-keys-v1") { db in
            try db.execute(sql: """
                CREATE TABLE addressKeys (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    userId TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                    address TEXT NOT NULL,
                    publicKey BLOB NOT NULL,
                    privateKey BLOB NOT NULL,
                    token BLOB NOT NULL,
                    signature BLOB NOT NULL,
                    active INTEGER NOT NULL,
                    created INTEGER NOT NULL);
                CREATE INDEX addressKeys_user ON addressKeys(userId, id);
                CREATE INDEX addressKeys_address ON addressKeys(address COLLATE NOCASE, active);
                """)
        }
    }
}

extension Accounts {
    /// The account's active addresses (primary first) and every key of its key ring.
    func addressList(userID: String) throws -> AddressListResponse {
        try store.read { db in
            AddressListResponse(addresses: try KeyList.activeAddresses(db, userID: userID), keys: try KeyList.records(db, userID: userID))
        }
    }

    /// Adds an address with its key, made on the device: checked against the account's user key
    /// (``KeyList/check(_:userKey:domain:)``), then published through ``KeyList/apply(_:_:now:)``.
    /// - Throws: ``SignupRefusal`` (another domain, a taken or reserved address, a key or token
    ///   that is not right), ``ServerError/conflict(_:)`` past ``KeyList/maximumAddresses``.
    func addAddress(_ upload: AddressKey, userID: String, domain: String) throws -> AddressListResponse {
        let userKey: PGPPublicKey
        do { userKey = try PGPPublicKey(binary: try userRow(userID).data("publicKey")) } catch let error as ServerError { throw error } catch {
            throw ServerError.storage("the account's user key is unreadable")
        }
        let checked = try KeyList.check(upload, userKey: userKey, domain: domain)
        let now = Int64(clock.now.timeIntervalSince1970)
        try store.write { db in
            let active = try KeyList.activeAddresses(db, userID: userID)
            guard !active.contains(checked.address) else { throw SignupRefusal.addressTaken(checked.address) }
            guard active.count < KeyList.maximumAddresses else {
                throw ServerError.conflict("an account has at most \(KeyList.maximumAddresses) addresses; remove one first")
            }
            try KeyList.apply(db, .published(userID: userID, key: checked), now: now)
        }
        return try addressList(userID: userID)
    }

    /// Removes an address: mail to it is no longer delivered and the key directory stops answering
    /// for it; its key stays in the key ring, so mail it received still opens.
    /// - Throws: ``ServerError/notFound(_:)`` (not the account's), ``ServerError/badRequest(_:)``
    ///   (the primary address, made at sign-up, stays).
    func removeAddress(_ address: String, userID: String) throws -> AddressListResponse {
        let lower = address.lowercased()
        let now = Int64(clock.now.timeIntervalSince1970)
        try store.write { db in
            let active = try KeyList.activeAddresses(db, userID: userID)
            guard active.contains(lower) else { throw ServerError.notFound("The address \(lower.prefix(254)) of this account") }
            guard active.first != lower else {
                throw ServerError.badRequest("\(lower) is the account's primary address (made at sign-up); it cannot be removed")
            }
            try KeyList.apply(db, .removed(userID: userID, address: lower), now: now)
        }
        return try addressList(userID: userID)
    }
}
