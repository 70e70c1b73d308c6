import Foundation
import OpenPGP
import RampartAPI
import SRP

/// The server's reading of sign-up input, exposed for the fuzz target in `Fuzz/` (SPI `Fuzzing`,
/// not part of the public API): a `POST /v1/signup/accounts` body decoded and checked by every
/// rule of ``Signups`` (nothing is written), an address as sign-up and `address add` check it,
/// and an address key upload as `POST /v1/addresses` checks it.
///
/// Trust-model rows **username (critical)** and **server (zero access)**: hostile bytes end in a
/// typed refusal, and what is accepted is normalized once and for all.
@_spi(Fuzzing)
public enum SignupFuzzing {
    /// What a sign-up check accepted.
    public struct Accepted: Equatable, Sendable {
        public let username: String
        public let address: String
        public let userKey: PGPFingerprint
        public let addressKey: PGPFingerprint
    }

    /// Decodes a sign-up body as the route does and checks it for the server's group and `domain`.
    /// - Throws: ``SignupRefusal``, ``ServerError/malformedJSON(_:)``.
    public static func check(_ body: Data, domain: String = SignupPolicy.defaultDomain) throws -> Accepted {
        let request = try SRPAuthorityFuzzing.decode(SignupRequest.self, body)
        let checked = try Signups.check(request, group: .rampart, domain: domain)
        return Accepted(username: checked.username, address: checked.address, userKey: checked.publicKey.fingerprint,
                        addressKey: checked.addressKey.publicKey.fingerprint)
    }

    /// An address as sign-up checks it (lower case, in `domain`). - Throws: ``SignupRefusal``.
    public static func address(_ text: String, domain: String = SignupPolicy.defaultDomain) throws -> String {
        try Signups.checkAddress(text, domain: domain)
    }

    /// An address key upload checked against `userKey`; returns its address. - Throws: ``SignupRefusal``.
    public static func addressKey(_ upload: AddressKey, userKey: PGPPublicKey, domain: String = SignupPolicy.defaultDomain) throws -> String {
        try KeyList.check(upload, userKey: userKey, domain: domain).address
    }
}
