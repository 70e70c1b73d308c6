/// An append-only Merkle tree of RFC 9162 (Certificate Transparency 2.0) §2.1: its root for any
/// size it has had, an inclusion proof for a leaf, a consistency proof between two sizes.
///
/// Trust-model row **the user's private and public keys (critical when modified)**: every change
/// to an address's keys is a leaf; the tree head commits the server to the whole history, so it
/// cannot show a key to one client and deny it to another, or rewrite the past, without a proof
/// failing somewhere.
///
/// Storage: the hash of every complete, aligned subtree (level `l`, index `i` covers leaves
/// `i·2^l ..< (i+1)·2^l`), as Go's `golang.org/x/mod/sumdb/tlog` keeps them: appending a leaf adds
/// at most log₂ n hashes, and a root or proof reads O(log² n) of them.
public struct MerkleTree: Sendable {
    /// `levels[l][i]`: the hash of the complete subtree of level `l` at index `i`.
    private var levels: [[LogHash]] = [[]]

    public init() {}

    /// Leaves in the tree.
    public var size: UInt64 { UInt64(levels[0].count) }

    /// Appends a leaf (its data, hashed here) and returns its index.
    @discardableResult
    public mutating func append(_ data: some Sequence<UInt8>) -> UInt64 {
        append(leafHash: LogHash.leaf(Array(data)))
    }

    /// Appends a leaf by its hash and returns its index.
    @discardableResult
    public mutating func append(leafHash: LogHash) -> UInt64 {
        let index = levels[0].count
        levels[0].append(leafHash)
        var level = 0
        var position = index
        // Every subtree this leaf completes gets its hash.
        while position % 2 == 1 {
            let combined = LogHash.node(levels[level][position - 1], levels[level][position])
            level += 1
            if levels.count == level { levels.append([]) }
            levels[level].append(combined)
            position /= 2
        }
        return UInt64(index)
    }

    /// The hash of leaf `index`.
    public func leafHash(at index: UInt64) throws -> LogHash {
        guard index < size else { throw TransparencyLogError.outOfRange("leaf \(index) of a tree of \(size)") }
        return levels[0][Int(index)]
    }

    /// The root of the tree as it was at `size` leaves (the current size by default).
    public func root(size: UInt64? = nil) throws -> LogHash {
        let n = size ?? self.size
        guard n <= self.size else { throw TransparencyLogError.outOfRange("a tree of \(n) from one of \(self.size)") }
        return n == 0 ? .emptyTree : hash(0, Int(n))
    }

    /// The audit path of leaf `index` in the tree of `size` leaves (RFC 9162 §2.1.3.1), leaf side
    /// first.
    public func inclusionProof(index: UInt64, size: UInt64) throws -> [LogHash] {
        guard size <= self.size, index < size else {
            throw TransparencyLogError.outOfRange("leaf \(index) in a tree of \(size) (the log has \(self.size))")
        }
        var proof: [LogHash] = []
        path(Int(index), 0, Int(size), into: &proof)
        return proof
    }

    /// The proof that the tree of `oldSize` leaves is a prefix of the tree of `newSize`
    /// (RFC 9162 §2.1.4.1). Empty when the sizes are equal; from the empty tree there is nothing
    /// to prove (``MerkleProof/verifyConsistency(oldSize:newSize:oldRoot:newRoot:proof:)`` refuses it).
    public func consistencyProof(from oldSize: UInt64, to newSize: UInt64) throws -> [LogHash] {
        guard oldSize <= newSize, newSize <= self.size else {
            throw TransparencyLogError.outOfRange("from \(oldSize) to \(newSize) (the log has \(self.size))")
        }
        var proof: [LogHash] = []
        if oldSize > 0 && oldSize < newSize { subproof(Int(oldSize), 0, Int(newSize), complete: true, into: &proof) }
        return proof
    }

    // MARK: The recursions of RFC 9162, over leaves lo..<hi

    /// MTH(D[lo..<hi]); `hi > lo`.
    private func hash(_ lo: Int, _ hi: Int) -> LogHash {
        let count = hi - lo
        // A complete, aligned subtree is stored.
        if count & (count - 1) == 0, lo % count == 0 {
            return levels[count.trailingZeroBitCount][lo / count]
        }
        let k = Self.largestPowerOfTwo(below: count)
        return LogHash.node(hash(lo, lo + k), hash(lo + k, hi))
    }

    /// PATH(m, D[lo..<hi]).
    private func path(_ m: Int, _ lo: Int, _ hi: Int, into proof: inout [LogHash]) {
        guard hi - lo > 1 else { return }
        let k = Self.largestPowerOfTwo(below: hi - lo)
        if m < lo + k {
            path(m, lo, lo + k, into: &proof)
            proof.append(hash(lo + k, hi))
        } else {
            path(m, lo + k, hi, into: &proof)
            proof.append(hash(lo, lo + k))
        }
    }

    /// SUBPROOF(m, D[lo..<hi], complete).
    private func subproof(_ m: Int, _ lo: Int, _ hi: Int, complete: Bool, into proof: inout [LogHash]) {
        if m == hi - lo {
            if !complete { proof.append(hash(lo, hi)) }
            return
        }
        let k = Self.largestPowerOfTwo(below: hi - lo)
        if m <= k {
            subproof(m, lo, lo + k, complete: complete, into: &proof)
            proof.append(hash(lo + k, hi))
        } else {
            subproof(m - k, lo + k, hi, complete: false, into: &proof)
            proof.append(hash(lo, lo + k))
        }
    }

    /// The largest power of two smaller than `n` (`n > 1`).
    static func largestPowerOfTwo(below n: Int) -> Int {
        1 << (Int.bitWidth - (n - 1).leadingZeroBitCount - 1)
    }
}

/// Checking proofs without the tree: what a client does with what the server sends.
public enum MerkleProof {
    /// Checks that `leafHash` is leaf `index` of the tree of `size` leaves whose root is `root`
    /// (RFC 9162 §2.1.3.2).
    /// - Throws: ``TransparencyLogError/inclusionProofFailed(_:)``.
    public static func verifyInclusion(leafHash: LogHash, index: UInt64, size: UInt64, proof: [LogHash], root: LogHash) throws {
        guard index < size else { throw TransparencyLogError.inclusionProofFailed("leaf \(index) is outside a tree of \(size)") }
        var at = ProofWalk(fn: index, sn: size - 1)
        var r = leafHash
        for p in proof {
            guard at.sn != 0 else { throw TransparencyLogError.inclusionProofFailed("the proof is longer than the tree is deep") }
            r = at.siblingIsLeftThenUp() ? LogHash.node(p, r) : LogHash.node(r, p)
        }
        guard at.sn == 0 else { throw TransparencyLogError.inclusionProofFailed("the proof is shorter than the tree is deep") }
        guard r == root else { throw TransparencyLogError.inclusionProofFailed("it leads to another root") }
    }

    /// Checks that the tree of `oldSize` leaves with root `oldRoot` is a prefix of the tree of
    /// `newSize` leaves with root `newRoot` (RFC 9162 §2.1.4.2). `oldSize` must be at least 1.
    /// - Throws: ``TransparencyLogError/consistencyProofFailed(_:)``, and
    ///   ``TransparencyLogError/rollback(seen:offered:)`` when `newSize < oldSize`.
    public static func verifyConsistency(oldSize: UInt64, newSize: UInt64, oldRoot: LogHash, newRoot: LogHash,
                                         proof: [LogHash]) throws {
        guard oldSize <= newSize else { throw TransparencyLogError.rollback(seen: oldSize, offered: newSize) }
        // Every tree extends the empty one: such a "proof" proves nothing, and a client that has
        // no head yet checks the first one it gets by its signatures alone.
        guard oldSize > 0 else { throw TransparencyLogError.consistencyProofFailed("a proof from the empty tree proves nothing") }
        if oldSize == newSize {
            guard proof.isEmpty else { throw TransparencyLogError.consistencyProofFailed("a proof between equal sizes must be empty") }
            guard oldRoot == newRoot else { throw TransparencyLogError.consistencyProofFailed("two roots for one size: a fork") }
            return
        }
        guard !proof.isEmpty else { throw TransparencyLogError.consistencyProofFailed("the proof is empty") }
        var path = proof
        if oldSize & (oldSize - 1) == 0 { path.insert(oldRoot, at: 0) }
        var at = ProofWalk(fn: oldSize - 1, sn: newSize - 1)
        while at.fn & 1 == 1 { at.fn >>= 1; at.sn >>= 1 }
        var fr = path[0]
        var sr = path[0]
        for c in path.dropFirst() {
            guard at.sn != 0 else { throw TransparencyLogError.consistencyProofFailed("the proof is longer than the tree is deep") }
            if at.siblingIsLeftThenUp() {
                fr = LogHash.node(c, fr)
                sr = LogHash.node(c, sr)
            } else {
                sr = LogHash.node(sr, c)
            }
        }
        guard at.sn == 0 else { throw TransparencyLogError.consistencyProofFailed("the proof is shorter than the tree is deep") }
        guard fr == oldRoot else { throw TransparencyLogError.consistencyProofFailed("it does not lead to the older root") }
        guard sr == newRoot else { throw TransparencyLogError.consistencyProofFailed("it does not lead to the newer root") }
    }
}

/// Where a proof check stands in the tree (RFC 9162 §2.1.3.2 and §2.1.4.2): `fn` is the node's
/// index at its level, `sn` the last index at that level.
struct ProofWalk {
    var fn: UInt64
    var sn: UInt64

    /// Whether the next proof hash is the node's left sibling (the node is a right child, or the
    /// last node of its level); then moves up a level, past the levels where the node has no
    /// sibling at all.
    mutating func siblingIsLeftThenUp() -> Bool {
        let left = fn & 1 == 1 || fn == sn
        if left && fn & 1 == 0 {
            while fn & 1 == 0 && fn != 0 { fn >>= 1; sn >>= 1 }
        }
        fn >>= 1
        sn >>= 1
        return left
    }
}
