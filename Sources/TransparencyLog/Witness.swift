import Foundation
import RampartCore

/// The tree head a client or a witness last accepted from a log: what the next head must extend.
///
/// Trust-model row **the user's private and public keys (critical when modified)**: a client
/// keeps it (in its sealed store) and refuses an older or diverging head, so a server cannot roll
/// the directory back to a key it replaced, or show this client a history it does not show others
/// without one of the two noticing.
public struct AcceptedHead: Sendable, Equatable, Codable {
    /// The log's origin line.
    public var origin: String
    /// Leaves in the accepted tree.
    public var size: UInt64
    /// The accepted root, base64.
    public var rootHash: String
    /// When a witness cosigned it (seconds since 1970), when known.
    public var witnessedAt: UInt64?

    public init(origin: String, size: UInt64, rootHash: String, witnessedAt: UInt64? = nil) {
        self.origin = origin
        self.size = size
        self.rootHash = rootHash
        self.witnessedAt = witnessedAt
    }

    init(_ checkpoint: Checkpoint, witnessedAt: UInt64?) {
        self.init(origin: checkpoint.origin, size: checkpoint.size, rootHash: checkpoint.rootHash.base64, witnessedAt: witnessedAt)
    }
}

/// What a client requires of a tree head before it uses a key the head commits to: the log's
/// signature, cosignatures of enough of the pinned witnesses, a recent cosignature, and a
/// consistency proof from the head it accepted last.
///
/// Trust-model row **the user's private and public keys (critical when modified)**: with one
/// independent witness required, a compromised server alone cannot fork the log (show two
/// clients different trees), because the witness cosigns only heads that extend the last one it
/// cosigned; what remains trusted is the witness's independence and the keys pinned here.
public struct HeadPolicy: Sendable {
    /// The log's key (pinned, as the SRP modulus key is).
    public var logKey: NoteVerifier
    /// The witnesses' cosignature keys.
    public var witnesses: [NoteVerifier]
    /// How many of them must have cosigned.
    public var requiredCosignatures: Int
    /// The oldest cosignature accepted, in seconds (72 hours, as Proton's clients accept epochs).
    public var maxAge: UInt64

    public init(logKey: NoteVerifier, witnesses: [NoteVerifier], requiredCosignatures: Int = 1, maxAge: UInt64 = 72 * 3600) {
        self.logKey = logKey
        self.witnesses = witnesses
        self.requiredCosignatures = requiredCosignatures
        self.maxAge = maxAge
    }

    /// Checks a signed head and returns the checkpoint and the head to remember.
    /// - Parameters:
    ///   - note: the signed head, with the witnesses' cosignatures.
    ///   - previous: the head accepted last, or nil for the first one.
    ///   - consistency: the proof from `previous` to this head (empty when the size is the same).
    ///   - now: the current time in seconds since 1970.
    /// - Throws: ``TransparencyLogError/unverifiedNote(_:)`` (no log signature, too few
    ///   cosignatures), ``TransparencyLogError/stale(ageSeconds:)``,
    ///   ``TransparencyLogError/malformedCheckpoint(_:)`` (another origin),
    ///   ``TransparencyLogError/rollback(seen:offered:)``,
    ///   ``TransparencyLogError/consistencyProofFailed(_:)`` (a fork or a rewritten history).
    public func accept(_ note: SignedNote, previous: AcceptedHead?, consistency: [LogHash], now: UInt64)
        throws -> (checkpoint: Checkpoint, head: AcceptedHead) {
        guard note.signatures.contains(where: { logKey.verifies($0, of: note.text).valid }) else {
            throw TransparencyLogError.unverifiedNote("the log's key \(logKey.name) did not sign it")
        }
        let checkpoint = try Checkpoint(text: note.text)
        var times: [UInt64] = []
        for witness in witnesses {
            let valid = note.signatures.compactMap { signature -> UInt64? in
                let result = witness.verifies(signature, of: note.text)
                return result.valid ? result.time : nil
            }
            if let time = valid.max() { times.append(time) }
        }
        guard times.count >= requiredCosignatures else {
            throw TransparencyLogError.unverifiedNote("\(times.count) of the \(requiredCosignatures) required witness cosignatures")
        }
        // The newest cosignature counts: a witness that saw this head recently vouches that it
        // was the log's head then.
        let newest = times.max() ?? 0
        if requiredCosignatures > 0 {
            guard newest <= now + 300 else { throw TransparencyLogError.malformedCheckpoint("a cosignature from the future") }
            guard now - min(now, newest) <= maxAge else { throw TransparencyLogError.stale(ageSeconds: now - newest) }
        }
        if let previous {
            guard previous.origin == checkpoint.origin else {
                throw TransparencyLogError.malformedCheckpoint("the origin changed from \(previous.origin) to \(checkpoint.origin)")
            }
            let oldRoot = try LogHash(bytes: Array(Data(base64Encoded: previous.rootHash) ?? Data()))
            try MerkleProof.verifyConsistency(oldSize: previous.size, newSize: checkpoint.size, oldRoot: oldRoot,
                                              newRoot: checkpoint.rootHash, proof: consistency)
        }
        return (checkpoint, AcceptedHead(checkpoint, witnessedAt: times.isEmpty ? nil : newest))
    }
}

/// A witness: it cosigns a log's new head only if the log signed it and it extends the last head
/// the witness cosigned, and it remembers that head in a file before it answers (C2SP
/// `tlog-witness`' rule), so even a restarted witness never cosigns two diverging histories.
///
/// Trust-model row **the user's private and public keys (critical when modified)**: it runs apart
/// from the server with its own key (`rampart server witness`); a server process that forks its
/// log gets no cosignature for the fork, and clients refuse heads without one.
public final class Witness: @unchecked Sendable {
    /// The witness's key (its cosignature verifier is what clients pin).
    public let signer: NoteSigner
    /// The log it witnesses.
    public let logKey: NoteVerifier
    /// The file that holds the last cosigned head (written atomically, 0600).
    public let stateFile: URL
    private let lock = NSLock()

    public init(signer: NoteSigner, logKey: NoteVerifier, stateFile: URL) {
        self.signer = signer
        self.logKey = logKey
        self.stateFile = stateFile
    }

    /// The head last cosigned, if any.
    public func lastHead() throws -> AcceptedHead? {
        guard FileManager.default.fileExists(atPath: stateFile.path) else { return nil }
        do {
            return try JSONDecoder().decode(AcceptedHead.self, from: Data(contentsOf: stateFile))
        } catch {
            throw TransparencyLogError.malformedCheckpoint("the witness's state file \(stateFile.path) is unreadable: \(error)")
        }
    }

    /// Checks `note` (the log's signature, consistency with the last cosigned head through
    /// `consistency`), records it, and returns the cosignature to add to the note.
    /// - Parameters:
    ///   - note: the head the log signed.
    ///   - consistency: the proof from the head last cosigned (empty for the first one).
    ///   - now: the cosignature's time, in seconds since 1970.
    /// - Throws: as ``HeadPolicy/accept(_:previous:consistency:now:)`` without witnesses; the
    ///   state file is unchanged when it throws.
    public func cosign(_ note: SignedNote, consistency: [LogHash], now: UInt64) throws -> SignedNote.Signature {
        try lock.withLock {
            let previous = try lastHead()
            let policy = HeadPolicy(logKey: logKey, witnesses: [], requiredCosignatures: 0)
            let (checkpoint, _) = try policy.accept(note, previous: previous, consistency: consistency, now: now)
            let head = AcceptedHead(checkpoint, witnessedAt: now)
            try PrivateFiles.ensurePrivateDirectory(stateFile.deletingLastPathComponent())
            try PrivateFiles.writeAtomically(try JSONEncoder().encode(head), to: stateFile)
            return try signer.cosign(checkpoint, time: now)
        }
    }
}
