import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
import SealedStore

/// Verifies message signatures against the claimed sender's pinned key during a sync.
///
/// Trust-model row **inbox (low)** — sender authentication: a message's `From` is only a claim
/// inside the encrypted body; the signature is checked against the key pinned for that address
/// on this device (pinned from the server's key directory on first use, or imported), or the
/// user's own key for their own addresses. A signature by any other key is "unknown key", a
/// signature that does not verify is "bad", an unsigned message is "none"; only "verified"
/// counts for a trusted sender (`MessageReader/remotePolicy(for:requested:)`).
public actor SignatureCheck {
    let contacts: ContactKeys
    let ownKeys: [PGPPublicKey]
    let ownAddresses: Set<String>
    let api: APIClient?
    var cache: [String: PGPPublicKey?] = [:]
    /// Key pinning news collected during the run.
    public private(set) var notices: [String] = []
    /// The addresses whose directory key the key transparency log did not prove.
    public private(set) var unproven: Set<String> = []

    /// - Parameters:
    ///   - api: the key directory to pin unknown senders from; nil consults pins only.
    ///   - account: the account whose contacts' pinned keys are used.
    ///   - ownKeys: the user's own address keys' public halves (their own messages verify with them).
    ///   - ownAddresses: the user's own addresses.
    public init(account: ClientAccount, ownKeys: [PGPPublicKey], ownAddresses: [String], api: APIClient?) {
        contacts = ContactKeys(account: account)
        self.ownKeys = ownKeys
        self.ownAddresses = Set(ownAddresses.map { $0.lowercased() })
        self.api = api
    }

    /// The keys that may vouch for `address`: the user's own key for their own addresses, else
    /// the pinned key (pinned now from the key directory on first use).
    func verifiers(for address: String) async throws -> [PGPPublicKey] {
        let address = address.lowercased()
        if ownAddresses.contains(address) { return ownKeys }
        if let cached = cache[address] { return cached.map { [$0] } ?? [] }
        let lookup = try await contacts.lookup(address, api: api)
        if let notice = lookup.notice { notices.append(notice) }
        if case .failed(let reason) = lookup.transparency {
            unproven.insert(address)
            notices.append("The key of \(address) is not proven by the server's key transparency log (\(reason)).")
        }
        let key = try lookup.pinned?.publicKey()
        cache[address] = .some(key)
        return key.map { [$0] } ?? []
    }

    /// The verdict for a body already decrypted without verifiers (`first`): none stays none;
    /// otherwise the body is verified again against the claimed sender's keys.
    public func status(of first: PGPSignatureStatus, sealed: Data, claimedSender: String, keys: [PGPPrivateKey],
                       messageID: String) async throws -> PGPSignatureStatus {
        if case .none = first { return .none }
        let verifiers = try await verifiers(for: claimedSender)
        guard !verifiers.isEmpty else { return first }
        var again = try MailPart.open(sealed, with: keys, verifyingWith: verifiers, messageID: messageID, part: SealedPartName.body)
        again.data.withUnsafeMutableBytes { SecretBytes.zeroize($0) }
        return again.signature
    }

}

/// What verifying a message's signature found, as `rampart read` reports it.
///
/// Trust-model row **inbox (low)**: only `verified` by the key pinned for the claimed sender (or
/// the user's own key) lets a trusted sender load remote content.
public struct SignatureVerdict: Sendable, Equatable {
    /// `verified`, `none`, `bad` or `unknownKey`.
    public var status: String
    /// The signer's primary key fingerprint (verified, and bad when known).
    public var fingerprint: String?
    /// The signer's key id (unknown key).
    public var keyID: String?
    /// Key pinning news from the check (first-use pins, different keys offered by the server).
    public var notices: [String] = []
    /// Set when the signer's key came from the key directory and the key transparency log did not
    /// prove it (trust-model row **the user's private and public keys**): the signature is the
    /// key's, but the key may be one the server showed only to this device.
    public var notInTransparencyLog = false

    public init(_ status: PGPSignatureStatus, notices: [String] = []) {
        switch status {
        case .verified(let fingerprint): self.status = "verified"; self.fingerprint = fingerprint.hex
        case .none: self.status = "none"
        case .bad(let fingerprint): self.status = "bad"; self.fingerprint = fingerprint?.hex
        case .unknownKey(let keyID): self.status = "unknownKey"; self.keyID = keyID.hex
        }
        self.notices = notices
    }

    /// The one line `rampart read` prints: `Signature: verified <fingerprint>`, `Signature: none`,
    /// `Signature: BAD`, `Signature: unknown key <key id>`.
    public var line: String {
        switch status {
        case "verified" where notInTransparencyLog: "Signature: verified (key not in the transparency log) \(fingerprint ?? "")"
        case "verified": "Signature: verified \(fingerprint ?? "")"
        case "none": "Signature: none"
        case "unknownKey": "Signature: unknown key \(keyID ?? "")"
        default: "Signature: BAD"
        }
    }
}

extension MessageReader {
    /// Decrypts the server's copy of message `message`, checks it is the one synced (sender,
    /// subject, body), and verifies its signature against the claimed sender's pinned key
    /// (pinned now from the key directory on first use).
    /// - Throws: `MailboxCryptoError.tampered` / ``ClientError/tampered(_:)`` for a modified,
    ///   moved or substituted body (nothing is shown); ``ClientError/notFound(kind:id:)`` when the
    ///   server no longer has it.
    public func verify(_ message: MailMessage, api: APIClient) async throws -> SignatureVerdict {
        let response: MessageResponse
        do { response = try await api.message(message.id) } catch ClientError.http(404, _) {
            throw ClientError.notFound(kind: "message on the server (to verify its signature)", id: message.id)
        }
        guard let sealed = Data(base64Encoded: response.sealedBody) else {
            throw ClientError.malformedResponse("the sealed body of message \(message.id) is not base64")
        }
        let keys = try account.mailboxKeys()
        var opened = try MailPart.open(sealed, with: keys, messageID: message.id, part: SealedPartName.body)
        defer { opened.data.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        guard let content = try? JSONDecoder().decode(MessageContent.self, from: opened.data),
              content.sender.address == message.sender.address, content.subject == message.subject, content.html == message.body
        else { throw ClientError.tampered("Message \(message.id) (the server's copy is not the one synced)") }
        let check = SignatureCheck(account: account, ownKeys: keys.map(\.publicKey), ownAddresses: try account.session().addresses, api: api)
        let status = try await check.status(of: opened.signature, sealed: sealed, claimedSender: content.sender.address,
                                            keys: keys, messageID: message.id)
        var verdict = SignatureVerdict(status, notices: await check.notices)
        let unproven = await check.unproven
        verdict.notInTransparencyLog = verdict.status == "verified" && unproven.contains(content.sender.address.lowercased())
        return verdict
    }
}
