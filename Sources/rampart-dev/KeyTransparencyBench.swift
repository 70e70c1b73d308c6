import Crypto
import Foundation
import GRDB
import RampartCore
import TransparencyLog

/// The work of key transparency per key change and per lookup at the size of a real directory,
/// as the server and the client do it, without the network:
///
/// - server, per key change: the leaf (keyed index HMAC-SHA256, SHA-256 of the binary key, the
///   canonical text) inserted in its own SQLite transaction (WAL, the server's table and index),
///   the in-memory tree's append, and a new checkpoint signed (Ed25519);
/// - client, per lookup: the server's inclusion and consistency proofs made, then the client's
///   checks: the signed note parsed, the log's signature and the witness's cosignature verified,
///   the consistency proof from the head it stored (1,000 changes earlier), the leaf parsed and its
///   inclusion proof checked, the key's digest compared.
///
/// Trust-model row **the user's private and public keys**: targets ≤ 10 ms per key change on the
/// server and ≤ 5 ms per lookup on the client at 100,000 addresses.
enum KeyTransparencyBench {
    struct Figures {
        var changeMs: Double
        var lookupMs: Double
    }

    static func run(addresses: Int, changes: Int, lookups: Int) throws -> Figures {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-kt-bench-\(UUID().uuidString)")
        try PrivateFiles.ensurePrivateDirectory(folder)
        defer { try? FileManager.default.removeItem(at: folder) }
        let pool = try DatabasePool(path: folder.appendingPathComponent("keylog.sqlite").path)
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE keyLogLeaves (id INTEGER PRIMARY KEY NOT NULL, indexKey TEXT NOT NULL, leaf BLOB NOT NULL, leafHash BLOB NOT NULL);
                CREATE INDEX keyLogLeaves_index ON keyLogLeaves(indexKey, id);
                """)
        }
        let secret = SymmetricKey(size: .bits256)
        let key = Data((0..<1_200).map { UInt8(truncatingIfNeeded: $0 &* 31) })   // about an Ed25519 + X25519 OpenPGP key
        let signer = try NoteSigner(name: "rampart.test/keylog", key: Curve25519.Signing.PrivateKey())
        let witness = try NoteSigner(name: "rampart-witness", key: Curve25519.Signing.PrivateKey())
        var tree = MerkleTree()
        var leaves: [KeyLogLeaf] = []
        // The directory: one entry per address (not timed).
        try pool.write { db in
            for n in 0..<addresses {
                let leaf = try entry(n, secret: secret, key: key)
                try insert(db, leaf, id: n)
                tree.append(leafHash: leaf.leafHash)
                leaves.append(leaf)
            }
        }

        // Server: key changes, each in its own transaction, then the tree and a signed checkpoint.
        let changeStart = ContinuousClock.now
        for c in 0..<changes {
            let leaf = try entry(c, secret: secret, key: key + [UInt8(truncatingIfNeeded: c)])
            try pool.write { db in
                let next = try Int.fetchOne(db, sql: "SELECT COALESCE(MAX(id) + 1, 0) FROM keyLogLeaves") ?? 0
                try insert(db, leaf, id: next)
            }
            tree.append(leafHash: leaf.leafHash)
            leaves.append(leaf)
            _ = try signer.sign(Checkpoint(origin: signer.name, size: tree.size, rootHash: try tree.root()).text)
        }
        let changeMs = BenchKeyLog.nanoseconds(ContinuousClock.now - changeStart) / Double(changes) / 1e6

        // Client: the head it stored is 1,000 changes old; the server's current head is witnessed.
        let size = tree.size
        let storedSize = size - min(1_000, size - 1)
        let stored = AcceptedHead(origin: signer.name, size: storedSize, rootHash: try tree.root(size: storedSize).base64)
        let now = UInt64(Date().timeIntervalSince1970)
        let checkpoint = Checkpoint(origin: signer.name, size: size, rootHash: try tree.root())
        var note = try signer.sign(checkpoint.text)
        note.signatures.append(try witness.cosign(checkpoint, time: now))
        let served = note.serialized
        let policy = HeadPolicy(logKey: signer.verifier, witnesses: [witness.cosignatureVerifier])
        let lookupStart = ContinuousClock.now
        for j in 0..<lookups {
            let index = UInt64((j * 7919) % Int(size))
            // The server's part: both proofs.
            let inclusion = try tree.inclusionProof(index: index, size: size).map(\.base64)
            let consistency = try tree.consistencyProof(from: storedSize, to: size).map(\.base64)
            let encoded = leaves[Int(index)].encoded
            // The client's part.
            let (accepted, _) = try policy.accept(try SignedNote(serialized: served), previous: stored,
                                                  consistency: try consistency.map(LogHash.init(base64:)), now: now)
            let leaf = try KeyLogLeaf(encoded: encoded)
            try MerkleProof.verifyInclusion(leafHash: leaf.leafHash, index: index, size: accepted.size,
                                            proof: try inclusion.map(LogHash.init(base64:)), root: accepted.rootHash)
            guard leaf.keyDigests.contains(KeyLogLeaf.digest(key)) || index >= UInt64(addresses) else {
                throw ValidationErrorText("the benchmark's leaf lost its key")
            }
        }
        let lookupMs = BenchKeyLog.nanoseconds(ContinuousClock.now - lookupStart) / Double(lookups) / 1e6
        return Figures(changeMs: changeMs, lookupMs: lookupMs)
    }

    static func entry(_ n: Int, secret: SymmetricKey, key: Data) throws -> KeyLogLeaf {
        try KeyLogLeaf(index: KeyLogLeaf.index(of: "user\(n)@rampart.test", secret: secret), time: 1_800_000_000 + Int64(n), keys: [key])
    }

    static func insert(_ db: Database, _ leaf: KeyLogLeaf, id: Int) throws {
        try db.execute(sql: "INSERT INTO keyLogLeaves (id, indexKey, leaf, leafHash) VALUES (?, ?, ?, ?)",
                       arguments: [id, leaf.index, Data(leaf.encoded), Data(leaf.leafHash.bytes)])
    }

    struct ValidationErrorText: Error, CustomStringConvertible {
        let description: String
        init(_ text: String) { description = text }
    }
}
