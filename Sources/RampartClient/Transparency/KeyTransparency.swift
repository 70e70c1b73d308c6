import Foundation
import OpenPGP
import RampartAPI
import RampartCore
import SealedStore
import TransparencyLog

/// A directory key that the key log does not prove: `rampart send` refuses with its own exit
/// status (11), `rampart read` shows `Signature: verified (key not in the transparency log)`.
///
/// Trust-model row **the user's private and public keys (critical when modified: impersonation)**.
public struct KeyTransparencyFailure: DescribedRampartError, Equatable {
    /// The address whose key was checked.
    public var address: String
    /// Why the check failed (a proof, a signature, a cosignature, a rollback, the key itself).
    public var reason: String

    public init(address: String, reason: String) { self.address = address; self.reason = reason }

    public var info: RampartErrorInfo {
        RampartErrorInfo(code: "keylog.unproven", kind: .tampered,
                         message: "The key of \(address) is not proven by the server's key transparency log (\(reason)); nothing was encrypted to it. The server may be showing you a key that others do not see. Compare safety numbers with \(address) (rampart contacts verify \(address)) or import their key (rampart contacts import-key).")
    }
}

/// What the key-transparency check said about the key used for an address.
public enum KeyTransparencyStatus: Sendable, Equatable {
    /// The server pins no key log (an older `server.json`), or the key was imported or verified
    /// by the user (out of band), so the log is not what vouches for it.
    case notChecked
    /// The key is in the address's newest entry of a witnessed head consistent with the last head
    /// this device accepted.
    case proven
    /// The check failed: the key must not be used as the directory's.
    case failed(String)
}

/// The client's key-transparency checks: before it encrypts to or verifies with a directory key,
/// the key must be in the address's newest log entry (inclusion proof), in a head signed by the
/// pinned log key and cosigned by a pinned witness, at most 72 hours old, consistent with the
/// last head this device accepted (kept in the sealed store; an older head is a rollback).
///
/// Trust-model row **the user's private and public keys (critical when modified: impersonation)**:
/// a server that hands out a key without logging it fails the inclusion proof; one that logs a
/// key for some clients only must fork its log, which the witness refuses to cosign and the
/// device's stored head refuses to follow; one that rolls back to an older head is refused.
/// What remains trusted: the pins (log key, witness keys, from `server.json` or the login), the
/// witness's independence from the server, and the server's keyed index (a client cannot check
/// that an index is its address's; the owner's audit, ``KeyTransparency/audit(api:ownKeys:)``,
/// sees only the entries filed under its own index).
public struct KeyTransparency: Sendable {
    public let account: ClientAccount
    public let pins: KeyLogPins
    /// The oldest witness cosignature accepted (72 hours).
    public var maxAge: UInt64 = 72 * 3600

    public init(account: ClientAccount, pins: KeyLogPins) { self.account = account; self.pins = pins }

    static let headRecordID = "keylog_head"

    /// The policy the pins give: the log's key, the witnesses (one cosignature required when any
    /// is pinned).
    /// - Throws: TransparencyLog's `TransparencyLogError.badKey` for an unusable pinned key.
    public func policy() throws -> HeadPolicy {
        let witnesses = try pins.witnesses.map(NoteVerifier.init(keyString:))
        return HeadPolicy(logKey: try NoteVerifier(keyString: pins.logKey), witnesses: witnesses,
                          requiredCosignatures: witnesses.isEmpty ? 0 : 1, maxAge: maxAge)
    }

    /// The head this device accepted last (sealed store), if any.
    public func storedHead() throws -> AcceptedHead? {
        let contact: Contact
        do { contact = try account.store().mail.contact(id: Self.headRecordID) } catch SealedStoreError.notFound {
            return nil
        }
        do { return try JSONDecoder().decode(AcceptedHead.self, from: Data(contact.card.utf8)) } catch {
            throw ClientError.tampered("The stored key log head")
        }
    }

    func store(_ head: AcceptedHead) throws {
        let card = String(decoding: try JSONEncoder().encode(head), as: UTF8.self)
        try account.store().mail.save(contact: Contact(id: Self.headRecordID, modified: Int64(account.clock.now.timeIntervalSince1970),
                                                       name: "key log head", emails: [], card: card))
    }

    /// Checks a served head against the pins and the stored head, fetching the consistency proof
    /// from the stored head, and stores it when it is newer. Returns its checkpoint.
    /// - Throws: TransparencyLog's `TransparencyLogError` (signature, cosignature, age, rollback, fork).
    public func accept(head serialized: String, api: APIClient) async throws -> Checkpoint {
        let note = try SignedNote(serialized: serialized)
        let offered = try Checkpoint(text: note.text)
        let previous = try storedHead().flatMap { $0.size == 0 ? nil : $0 }
        var proof: [LogHash] = []
        if let previous, previous.size < offered.size {
            let response = try await api.keyLogConsistency(from: previous.size, to: offered.size)
            proof = try response.proof.map(LogHash.init(base64:))
        }
        let (checkpoint, head) = try policy().accept(note, previous: previous, consistency: proof,
                                                     now: UInt64(max(0, account.clock.now.timeIntervalSince1970)))
        if previous == nil || head.size > previous!.size || (head.witnessedAt ?? 0) > (previous!.witnessedAt ?? 0) {
            try store(head)
        }
        return checkpoint
    }

    /// Checks one proven entry against a checkpoint and returns its leaf.
    static func check(_ entry: KeyLogProvenEntry, in checkpoint: Checkpoint) throws -> KeyLogLeaf {
        guard let bytes = Data(base64Encoded: entry.leaf) else { throw TransparencyLogError.inclusionProofFailed("the leaf is not base64") }
        let leaf = try KeyLogLeaf(encoded: Array(bytes))
        try MerkleProof.verifyInclusion(leafHash: leaf.leafHash, index: entry.leafIndex, size: checkpoint.size,
                                        proof: try entry.proof.map(LogHash.init(base64:)), root: checkpoint.rootHash)
        return leaf
    }

    /// The keys the log proves for `address` (SHA-256 digests of the binary keys in its newest
    /// entry), after every check of the entry and its head.
    /// - Throws: ``KeyTransparencyFailure`` for any failed check; transport errors as they come.
    public func provenKeyDigests(of address: String, api: APIClient) async throws -> Set<String> {
        do {
            let lookup = try await api.keyLogLookup(address)
            let checkpoint = try await accept(head: lookup.head, api: api)
            return Set(try Self.check(lookup.entry, in: checkpoint).keyDigests)
        } catch let error as KeyTransparencyFailure {
            throw error
        } catch let error as TransparencyLogError {
            throw KeyTransparencyFailure(address: address, reason: error.description)
        } catch ClientError.http(let status, let body) {
            throw KeyTransparencyFailure(address: address, reason: "the log answered \(status) \(body?.error.message ?? "")")
        }
    }

    /// The status of `key` as `address`'s directory key.
    /// - Parameters:
    ///   - key: the key about to be used (the pinned one, or the directory's on first use).
    ///   - address: the address it is used for.
    ///   - api: the session's client (the lookup needs a session).
    public func status(of key: PGPPublicKey, address: String, api: APIClient) async throws -> KeyTransparencyStatus {
        do {
            let proven = try await provenKeyDigests(of: address, api: api)
            return proven.contains(KeyLogLeaf.digest(key.binary)) ? .proven
                : .failed("the key \(key.fingerprint.hex) is not in the newest log entry of \(address)")
        } catch let error as KeyTransparencyFailure {
            return .failed(error.reason)
        }
    }

    /// One line of a self-audit.
    public struct AuditFinding: Sendable, Equatable, Codable {
        public var address: String
        public var leafIndex: UInt64
        public var time: Int64
        /// Digests of keys in the entry that are not the user's.
        public var foreignKeys: [String]
    }

    /// The self-audit: every log entry of the user's own addresses (proofs checked in a witnessed
    /// head) must hold only keys the user made (`ownKeys`: every address key the account has had,
    /// active or not). Returns the entries checked and the alarms (entries with a foreign key).
    /// - Throws: ``KeyTransparencyFailure`` when a proof or the head fails.
    public func audit(api: APIClient, ownKeys: [PGPPublicKey]) async throws -> (entries: Int, alarms: [AuditFinding]) {
        let own = Set(ownKeys.map { KeyLogLeaf.digest($0.binary) })
        let response = try await api.keyLogOwnEntries()
        let checkpoint: Checkpoint
        do { checkpoint = try await accept(head: response.head, api: api) } catch let error as TransparencyLogError {
            throw KeyTransparencyFailure(address: "this account", reason: error.description)
        }
        var count = 0
        var alarms: [AuditFinding] = []
        for (address, entries) in response.addresses.sorted(by: { $0.key < $1.key }) {
            for entry in entries {
                let leaf: KeyLogLeaf
                do { leaf = try Self.check(entry, in: checkpoint) } catch let error as TransparencyLogError {
                    throw KeyTransparencyFailure(address: address, reason: error.description)
                }
                count += 1
                let foreign = leaf.keyDigests.filter { !own.contains($0) }
                if !foreign.isEmpty { alarms.append(AuditFinding(address: address, leafIndex: entry.leafIndex, time: leaf.time, foreignKeys: foreign)) }
            }
        }
        return (count, alarms)
    }
}

extension APIClient {
    /// `GET /v1/keylog/lookup?address=A`.
    public func keyLogLookup(_ address: String) async throws -> KeyLogLookupResponse {
        try await json(.GET, KeyLogRoute.lookup.path + "?address=\(Self.escape(address))")
    }

    /// `GET /v1/keylog/own`.
    public func keyLogOwnEntries() async throws -> KeyLogEntriesResponse { try await json(.GET, KeyLogRoute.own.path) }

    /// `GET /v1/keylog/consistency?from=M&to=N` (public).
    public func keyLogConsistency(from: UInt64, to: UInt64) async throws -> KeyLogConsistencyResponse {
        try await json(.GET, KeyLogRoute.consistency.path + "?from=\(from)&to=\(to)", authenticated: false)
    }

    /// `GET /v1/keylog/checkpoint` (public): the newest head the log signed.
    public func keyLogCheckpoint() async throws -> KeyLogHeadNote { try await json(.GET, KeyLogRoute.checkpoint.path, authenticated: false) }

    /// `GET /v1/keylog/head` (public): the newest witnessed head.
    public func keyLogHead() async throws -> KeyLogHeadNote { try await json(.GET, KeyLogRoute.head.path, authenticated: false) }

    /// `POST /v1/keylog/cosignature` (public).
    public func postKeyLogCosignature(_ head: String) async throws {
        let _: OKResponse = try await json(.POST, KeyLogRoute.cosignature.path, body: KeyLogHeadNote(head: head), authenticated: false)
    }
}
