import Crypto
import Foundation
import Testing
import TransparencyLog

/// The key log's leaf: one canonical byte form, so that a client recomputes exactly the leaf the
/// server hashed, and the keyed index that keeps addresses out of the log.
@Suite struct KeyLogLeafTests {
    static let digestA = String(repeating: "a", count: 64)
    static let digestB = String(repeating: "0", count: 63) + "1"

    @Test func aLeafHasOneCanonicalFormAndEveryOtherIsRefused() throws {
        let index = String(repeating: "c", count: 64)
        let leaf = try KeyLogLeaf(index: index, time: 1_800_000_000, keyDigests: [Self.digestA, Self.digestB])
        #expect(leaf.keyDigests == [Self.digestB, Self.digestA], "digests are kept sorted")
        let text = "rampart-key-log/v1\nindex \(index)\ntime 1800000000\nkey \(Self.digestB)\nkey \(Self.digestA)\n"
        #expect(leaf.encoded == Array(text.utf8))
        #expect(try KeyLogLeaf(encoded: leaf.encoded) == leaf)
        #expect(leaf.leafHash == LogHash.leaf(Array(text.utf8)))
        // No key: the address is gone.
        let gone = try KeyLogLeaf(index: index, time: 5, keyDigests: [])
        #expect(try KeyLogLeaf(encoded: gone.encoded).keyDigests.isEmpty)
        // Every other spelling of the same content is refused, so no two byte strings (two leaf
        // hashes) stand for one entry.
        for variant in [
            "rampart-key-log/v1\nindex \(index)\ntime 1800000000\nkey \(Self.digestA)\nkey \(Self.digestB)\n",   // unsorted
            "rampart-key-log/v1\nindex \(index.uppercased())\ntime 1800000000\n",                                 // upper case
            "rampart-key-log/v1\nindex \(index)\ntime 01800000000\n",                                             // leading zero
            "rampart-key-log/v1\nindex \(index)\ntime +1800000000\n",                                             // sign
            "rampart-key-log/v1\nindex \(index)\ntime 1800000000",                                                // no newline
            "rampart-key-log/v1\nindex  \(index)\ntime 1800000000\n",                                             // two spaces
            "rampart-key-log/v2\nindex \(index)\ntime 1800000000\n",                                              // another version
            "rampart-key-log/v1\nindex \(index)\ntime 1800000000\nkey \(Self.digestA)\n\n",                       // empty line
            "rampart-key-log/v1\nindex \(index)\ntime -1\n",                                                      // negative
        ] {
            #expect(throws: TransparencyLogError.self, "\(variant)") { try KeyLogLeaf(encoded: Array(variant.utf8)) }
        }
        #expect(throws: TransparencyLogError.self) { try KeyLogLeaf(index: "not hex", time: 1, keyDigests: []) }
    }

    @Test func theIndexIsKeyedAndIgnoresCase() throws {
        let secret = SymmetricKey(size: .bits256)
        let index = KeyLogLeaf.index(of: "Ann@Rampart.test", secret: secret)
        #expect(index == KeyLogLeaf.index(of: "ann@rampart.test", secret: secret))
        #expect(index != KeyLogLeaf.index(of: "ann@rampart.test", secret: SymmetricKey(size: .bits256)), "another secret, another index")
        #expect(index != KeyLogLeaf.index(of: "bob@rampart.test", secret: secret))
        // Without the secret, the address's plain hash is not the index (nothing to test guesses against).
        #expect(index != Array(SHA256.hash(data: Data("ann@rampart.test".utf8))).map { String(format: "%02x", $0) }.joined())
        #expect(KeyLogLeaf.digest(Data([1, 2, 3])) == Array(SHA256.hash(data: Data([1, 2, 3]))).map { String(format: "%02x", $0) }.joined())
    }
}
