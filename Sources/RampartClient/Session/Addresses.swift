import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore

/// The account's addresses (`rampart account address add|list|remove`), each with its own key
/// made on this device.
///
/// - ``add(_:account:)``: a new OpenPGP key for the address, locked with a fresh token that is
///   encrypted to and signed by the user key (MailboxCrypto's `AddressKeys`); the server checks its structure and
///   that the address is in its domain and free, then mail to the address reaches the account and
///   the key directory answers for it.
/// - ``remove(_:account:)``: mail to the address is no longer delivered and the key directory stops
///   answering; the key stays in the key ring, so the mail it received still opens.
///
/// Trust-model rows **the user's private and public keys (critical)** (keys made and opened only
/// here) and **username (critical)** (an address names the person: only the server's domain, the
/// username rules and a free address are accepted).
public enum AddressFlow {
    /// The account's addresses on the server, primary first.
    public static func list(account: ClientAccount) async throws -> [String] {
        let answer: AddressListResponse = try await account.api().closing { api in try await api.json(.GET, APIRoute.addresses) }
        try remember(answer, account: account, newKey: nil)
        return answer.addresses
    }

    /// Adds `address` with a new key; returns the account's addresses.
    /// - Throws: ``ClientError/addressRefused(code:message:)`` (another domain, taken, reserved,
    ///   too many), `LockedError`, transport errors.
    public static func add(_ address: String, account: ClientAccount) async throws -> [String] {
        let ring = try account.keyring()
        defer { ring.wipe() }
        let record = try account.session()
        let made = try AddressKeys.make(name: record.displayName, address: address.trimmingCharacters(in: .whitespaces), userKey: ring.userKey)
        defer { made.key.wipe() }
        let answer: AddressListResponse = try await refusals {
            try await account.api().closing { api in try await api.json(.POST, APIRoute.addresses, body: made.upload) }
        }
        try remember(answer, account: account, newKey: made)
        return answer.addresses
    }

    /// Removes `address` (not the primary one); returns the account's addresses.
    public static func remove(_ address: String, account: ClientAccount) async throws -> [String] {
        let answer: AddressListResponse = try await refusals {
            try await account.api().closing { api in try await api.json(.DELETE, APIRoute.addresses + "?address=\(APIClient.escape(address.lowercased()))") }
        }
        try remember(answer, account: account, newKey: nil)
        return answer.addresses
    }

    /// Keeps the server's address list in the sealed session and store, and the key ring's
    /// active flags (and a key just made) in step with it.
    static func remember(_ answer: AddressListResponse, account: ClientAccount, newKey: (key: PGPPrivateKey, upload: AddressKey)?) throws {
        try account.keys.withMainKey { mainKey in
            var record = try account.vault.session(with: mainKey)
            record.addresses = answer.addresses
            try account.vault.saveSession(record, with: mainKey)
            if var ring = try account.vault.keyring(with: mainKey) {
                defer { ring.wipe() }
                if let newKey { ring.addressKeys.append((newKey.upload.address, newKey.key, true)) }
                let active = Set(answer.keys.filter { $0.active ?? true }.compactMap { try? PGPPublicKey(armored: $0.publicKey).fingerprint })
                ring.addressKeys = ring.addressKeys.map { ($0.address, $0.key, active.contains($0.key.fingerprint)) }
                try account.vault.saveKeyring(ring, with: mainKey)
            }
        }
        let store = try account.store()
        var stored = try store.mail.account(id: try account.session().serverUserID)
        stored.addresses = answer.addresses
        try store.mail.save(account: stored)
    }

    static func refusals<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch ClientError.http(let status, let body?) where (400..<500).contains(status) && status != 401 {
            throw ClientError.addressRefused(code: body.error.code, message: body.error.message)
        }
    }
}

extension ClientAccount {
    /// The sender of a new message and the key that signs it: `address` (one of the account's,
    /// any case) or the primary address, with that address's key.
    /// - Throws: ``ClientError/badInput(_:)`` for an address that is not the account's.
    public func sender(from address: String?) throws -> (sender: Correspondent, signer: PGPPrivateKey) {
        let record = try session()
        guard let address else { return (Correspondent(name: record.displayName, address: record.addresses.first ?? record.username), try mailboxKey()) }
        let lower = address.lowercased()
        guard record.addresses.contains(where: { $0.lowercased() == lower }) else {
            throw ClientError.badInput("\(address) is not one of your addresses (\(record.addresses.joined(separator: ", "))); add it with `rampart account address add`.")
        }
        let ring = try keyring()
        ring.userKey.wipe()
        guard let key = ring.key(for: lower) else { throw ClientError.badInput("This device has no key for \(address); log in again.") }
        ring.addressKeys.filter { $0.key.fingerprint != key.fingerprint }.forEach { $0.key.wipe() }
        return (Correspondent(name: record.displayName, address: lower), key)
    }
}
