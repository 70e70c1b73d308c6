// Fuzz target: what a key-transparency client reads from a server: signed notes, checkpoints,
// verifier keys, proofs, key log leaves (trust-model row: the user's private and public keys,
// modified: critical).
//
// Oracles: a key log leaf that parses encodes back to the same bytes; a checkpoint that parses
// prints back to the same text and parses to the same value; a
// note that parses keeps its text; no proof made of the input's bytes verifies against a root it
// does not lead to (each check runs without a crash and gives a typed answer).
import FuzzSupport
import TransparencyLog

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTLog(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = Fuzz.bytes(data, size)
    let text = String(decoding: bytes, as: UTF8.self)
    if let checkpoint = try? Checkpoint(text: text) {
        precondition(checkpoint.text == text, "a checkpoint does not print back as read")
        precondition((try? Checkpoint(text: checkpoint.text)) == checkpoint, "a checkpoint does not parse back")
    }
    if let note = try? SignedNote(serialized: text) {
        precondition(text.hasPrefix(note.text), "a note's text is not the start of the note")
        _ = try? Checkpoint(text: note.text)
    }
    _ = try? NoteVerifier(keyString: text)
    if let leaf = try? KeyLogLeaf(encoded: bytes) {
        precondition(leaf.encoded == bytes, "a key log leaf does not encode back to its bytes")
        precondition(leaf.keyDigests == leaf.keyDigests.sorted(), "a key log leaf's digests are not sorted")
    }
    // Proofs from the bytes: 32-byte hashes, sizes from the first bytes.
    guard bytes.count >= 4 else { return 0 }
    let hashes = stride(from: 4, to: bytes.count - 31, by: 32).compactMap { try? LogHash(bytes: Array(bytes[$0..<$0 + 32])) }
    guard let root = hashes.first else { return 0 }
    let size = UInt64(bytes[0]) << 8 | UInt64(bytes[1])
    let index = UInt64(bytes[2]) << 8 | UInt64(bytes[3])
    _ = try? MerkleProof.verifyInclusion(leafHash: LogHash.leaf(bytes), index: index, size: size, proof: Array(hashes.dropFirst()), root: root)
    _ = try? MerkleProof.verifyConsistency(oldSize: index, newSize: size, oldRoot: root, newRoot: hashes.last ?? root,
                                           proof: Array(hashes.dropFirst()))
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_tlog_main")
public func fuzzTLogMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzTLog)
}
