import RampartCore

/// Why a log's proof, tree head or signed note was refused.
///
/// Trust-model row **the user's private and public keys (critical when modified: impersonation)**:
/// a key the server hands out is trusted only with a proof that it is in the one log everybody
/// sees; every refusal here means "do not use this key", never "use it anyway".
public enum TransparencyLogError: DescribedRampartError, Equatable {
    /// An inclusion proof does not lead from the leaf to the signed root (a key not in the log,
    /// or shown differently to this client).
    case inclusionProofFailed(String)
    /// A consistency proof does not lead from the older root to the newer one: the log was
    /// rewritten or forked.
    case consistencyProofFailed(String)
    /// A tree head smaller than one seen before (a rollback of the log).
    case rollback(seen: UInt64, offered: UInt64)
    /// A checkpoint (tree head) whose text is not the C2SP `tlog-checkpoint` form.
    case malformedCheckpoint(String)
    /// A signed note whose text or signature lines are not the C2SP `signed-note` form.
    case malformedNote(String)
    /// A note that no known key signed (or whose signature does not verify).
    case unverifiedNote(String)
    /// A key name or key string that cannot be used.
    case badKey(String)
    /// An index or size outside the tree.
    case outOfRange(String)
    /// The newest witness cosignature of a tree head is older than the policy accepts.
    case stale(ageSeconds: UInt64)

    public var info: RampartErrorInfo {
        switch self {
        case .inclusionProofFailed(let why):
            RampartErrorInfo(code: "tlog.inclusion", kind: .tampered, message: "The key directory's proof that this key is in the log does not hold (\(why)); the key is not used.")
        case .consistencyProofFailed(let why):
            RampartErrorInfo(code: "tlog.consistency", kind: .tampered, message: "The key log is not an extension of the one seen before (\(why)): it was rewritten or forked.")
        case .rollback(let seen, let offered):
            RampartErrorInfo(code: "tlog.rollback", kind: .tampered, message: "The key log offered a tree of \(offered) entries after one of \(seen) was seen: a rollback, refused.")
        case .malformedCheckpoint(let why):
            RampartErrorInfo(code: "tlog.checkpoint", kind: .tampered, message: "The key log's tree head is malformed: \(why).")
        case .malformedNote(let why):
            RampartErrorInfo(code: "tlog.note", kind: .tampered, message: "The key log's signed note is malformed: \(why).")
        case .unverifiedNote(let why):
            RampartErrorInfo(code: "tlog.unverified", kind: .tampered, message: "The key log's tree head is not signed by a pinned key: \(why).")
        case .badKey(let why):
            RampartErrorInfo(code: "tlog.badKey", kind: .badInput, message: "Unusable log key: \(why).")
        case .outOfRange(let why):
            RampartErrorInfo(code: "tlog.range", kind: .badInput, message: "Outside the log: \(why).")
        case .stale(let age):
            RampartErrorInfo(code: "tlog.stale", kind: .tampered, message: "The key log's newest witnessed tree head is \(age / 3600) hours old (at most 72 are accepted): the server may be hiding newer changes.")
        }
    }
}
