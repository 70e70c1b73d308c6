import Foundation
import OpenPGP
import RampartAPI
import RampartCore

/// A correspondent's key changed since this device pinned it from the server (trust on first use):
/// the server's key directory now offers another key. Nothing is encrypted to either key until
/// the user decides.
///
/// Trust-model row **inbox (low)** and **the user's private and public keys (critical when
/// modified: impersonation)**: a new key is what a reset account looks like (the peer lost their
/// password and recovery phrase and got new keys) and also what a server substituting a key looks
/// like; only the person can tell, by comparing the fingerprint with the correspondent out of band.
public struct ContactKeyChanged: DescribedRampartError, Equatable {
    /// The correspondent's address, the fingerprint pinned on this device and the one the server
    /// offers now.
    public let address, pinned, offered: String
    /// When the old key was pinned (Unix seconds).
    public let pinnedSince: Int64

    /// A key change of `address`.
    public init(address: String, pinned: String, offered: String, pinnedSince: Int64) {
        (self.address, self.pinned, self.offered, self.pinnedSince) = (address, pinned, offered, pinnedSince)
    }

    /// The code, category (exit status 1) and the sentence.
    public var info: RampartErrorInfo {
        let since = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(pinnedSince)))
        return RampartErrorInfo(code: "contacts.keyChanged", kind: .failure, message: """
            The key of \(address) has changed: this device pinned \(pinned) on \(since), and the server now offers \(offered). \
            \(address) may have reset their account (new keys after a lost password and recovery phrase), or someone may be \
            substituting a key. Nothing was sent. Ask \(address), by another channel, for their key's fingerprint; if it is \
            \(offered), run `rampart contacts accept-key \(address) --fingerprint \(offered)` and send again.
            """)
    }
}

extension ContactKeys {
    /// Pins the key the server's key directory offers now for `address`, replacing the pin, once
    /// the user compared its fingerprint out of band (`rampart contacts accept-key`). With a key
    /// log pinned, the key must be the address's newest logged key. `fingerprint` is what the
    /// correspondent said (any case, spaces allowed); `api` reaches the key directory.
    /// - Throws: ``ClientError/badInput(_:)`` when the offered key has another fingerprint (nothing
    ///   pinned), ``ClientError/notFound(kind:id:)`` when the directory has no key for the address,
    ///   ``KeyTransparencyFailure``.
    @discardableResult
    public func acceptOffered(_ address: String, fingerprint: String, api: APIClient) async throws -> PinnedKey {
        let address = address.lowercased()
        let served: PublicKeyResponse
        do { served = try await api.publicKey(of: address) } catch ClientError.http(404, _) {
            throw ClientError.notFound(kind: "key in this server's directory for", id: address)
        }
        let key: PGPPublicKey
        do { key = try PGPPublicKey(armored: served.publicKey) } catch {
            throw ClientError.malformedResponse("the key directory's key for \(address) is not an OpenPGP key")
        }
        let expected = fingerprint.filter { !$0.isWhitespace }.uppercased()
        guard key.fingerprint.hex == expected, key.addresses.contains(address) else {
            throw ClientError.badInput("The server offers \(key.fingerprint.hex) for \(address), not \(expected); nothing was pinned.")
        }
        if let pins = api.endpoint.keyLog, case .failed(let reason) = try await KeyTransparency(account: account, pins: pins)
            .status(of: key, address: address, api: api) {
            throw KeyTransparencyFailure(address: address, reason: reason)
        }
        return try pin(key, address: address, source: .server)
    }
}
