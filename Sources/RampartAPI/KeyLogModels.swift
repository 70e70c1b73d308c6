/// The key log's routes (key transparency). Lookups and the entries of one's own addresses need a
/// session; the heads and consistency proofs are public, so witnesses and auditors read them.
///
/// Trust-model row **the user's private and public keys (critical when modified: impersonation)**:
/// every key the directory hands out comes with a proof that it is in the one log a witness
/// cosigned.
///
/// - `lookup` `GET ?address=A` → ``KeyLogLookupResponse`` (session): the address's keys, its newest
///   log entry, the inclusion proof in the cosigned head, and that head.
/// - `own` `GET` → ``KeyLogEntriesResponse`` (session): every entry of the caller's own addresses,
///   with proofs in the cosigned head (the self-audit).
/// - `head` `GET` → ``KeyLogHeadNote`` (public): the newest head a pinned witness cosigned.
/// - `checkpoint` `GET` → ``KeyLogHeadNote`` (public): the newest head the log signed (what a
///   witness cosigns next).
/// - `consistency` `GET ?from=M&to=N` → ``KeyLogConsistencyResponse`` (public).
/// - `cosignature` `POST` ``KeyLogHeadNote`` → ``OKResponse`` (public; only a configured witness's
///   valid cosignature of a head of this log is kept).
public enum KeyLogRoute: String, Sendable, CaseIterable {
    case lookup, own, head, checkpoint, consistency, cosignature

    /// The route's path: `/v1/keylog/<name>`.
    public var path: String { "/v1/keylog/" + rawValue }
}

/// What a client pins about a server's key log: in `server.json`, copied into the session at login.
public struct KeyLogPins: Codable, Sendable, Equatable {
    /// The log's origin line (and its key's name).
    public var origin: String
    /// The log key's note verifier (`name+hash+base64`).
    public var logKey: String
    /// The witnesses' cosignature verifiers; a head needs a cosignature of one of them.
    public var witnesses: [String]

    public init(origin: String, logKey: String, witnesses: [String]) {
        self.origin = origin; self.logKey = logKey; self.witnesses = witnesses
    }
}

/// One entry of the key log with its position and inclusion proof.
public struct KeyLogProvenEntry: Codable, Sendable, Equatable {
    /// The leaf's index in the tree.
    public var leafIndex: UInt64
    /// The leaf's bytes (`rampart-key-log/v1` text), base64.
    public var leaf: String
    /// The audit path in the tree of the head's size, base64 hashes, leaf side first.
    public var proof: [String]

    public init(leafIndex: UInt64, leaf: String, proof: [String]) {
        self.leafIndex = leafIndex; self.leaf = leaf; self.proof = proof
    }
}

/// `GET /v1/keylog/lookup?address=A`.
public struct KeyLogLookupResponse: Codable, Sendable {
    public var address: String
    /// The address's public keys, armored (empty when it has none any more).
    public var publicKeys: [String]
    /// Its newest entry in the cosigned head.
    public var entry: KeyLogProvenEntry
    /// The cosigned head (a C2SP signed note with the log's signature and the witnesses').
    public var head: String

    public init(address: String, publicKeys: [String], entry: KeyLogProvenEntry, head: String) {
        self.address = address; self.publicKeys = publicKeys; self.entry = entry; self.head = head
    }
}

/// `GET /v1/keylog/own`.
public struct KeyLogEntriesResponse: Codable, Sendable {
    /// The caller's addresses and, for each, its entries (oldest first).
    public var addresses: [String: [KeyLogProvenEntry]]
    /// The cosigned head the proofs lead to.
    public var head: String

    public init(addresses: [String: [KeyLogProvenEntry]], head: String) { self.addresses = addresses; self.head = head }
}

/// A tree head as a signed note: what `GET /v1/keylog/head` and `/v1/keylog/checkpoint` answer,
/// and what a witness posts to `/v1/keylog/cosignature` (the log's head with its cosignature line
/// added; only a configured witness's valid cosignature of a head of this log is kept).
public struct KeyLogHeadNote: Codable, Sendable {
    /// The signed note.
    public var head: String
    public init(head: String) { self.head = head }
}

/// `GET /v1/keylog/consistency?from=M&to=N`.
public struct KeyLogConsistencyResponse: Codable, Sendable {
    public var from: UInt64
    public var to: UInt64
    /// Base64 hashes (RFC 9162 §2.1.4.1).
    public var proof: [String]
    public init(from: UInt64, to: UInt64, proof: [String]) { self.from = from; self.to = to; self.proof = proof }
}
