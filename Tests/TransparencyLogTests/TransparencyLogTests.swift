import Crypto
import Foundation
import RampartTestSupport
import Testing
import TransparencyLog

/// The log's tree, proofs and notes (trust-model row **the user's private and public keys,
/// critical when modified**), checked against Go's `golang.org/x/mod/sumdb/tlog` and `note`, and
/// against themselves: every proof of every size verifies, and every changed proof fails.
@Suite struct TransparencyLogTests {
    static func leaves(_ count: Int) -> [[UInt8]] {
        (0..<count).map { Array("key change \($0): ann@rampart.test fingerprint \($0 * 7919)".utf8) }
    }

    static func tree(_ leaves: [[UInt8]]) -> MerkleTree {
        var tree = MerkleTree()
        for leaf in leaves { tree.append(leaf) }
        return tree
    }

    /// RFC 9162's hash of the empty tree and of one leaf.
    @Test func theSmallTreesHashAsTheRFCSays() throws {
        #expect(try MerkleTree().root() == LogHash.emptyTree)
        #expect(LogHash.emptyTree.bytes.map { String(format: "%02x", $0) }.joined()
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        var one = MerkleTree()
        one.append([UInt8]())
        // SHA-256(0x00): the hash of the empty leaf, RFC 6962's first test vector.
        #expect(try one.root().bytes.map { String(format: "%02x", $0) }.joined()
                == "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d")
        var two = one
        two.append([0x00])
        #expect(try two.root() == LogHash.node(LogHash.leaf([UInt8]()), LogHash.leaf([0x00])))
        #expect(try two.root(size: 1) == one.root())
    }

    /// Every inclusion and consistency proof of every size up to 70 verifies; a changed hash, a
    /// wrong index or size, a shortened or lengthened proof each fail.
    @Test func everyProofVerifiesAndEveryChangedOneFails() throws {
        let leaves = Self.leaves(70)
        let tree = Self.tree(leaves)
        for size in UInt64(1)...70 {
            let root = try tree.root(size: size)
            for index in 0..<size {
                let proof = try tree.inclusionProof(index: index, size: size)
                let leaf = LogHash.leaf(leaves[Int(index)])
                try MerkleProof.verifyInclusion(leafHash: leaf, index: index, size: size, proof: proof, root: root)
                if !proof.isEmpty {
                    var changed = proof
                    changed[Int(index) % proof.count] = LogHash.leaf([0xFF])
                    #expect(throws: TransparencyLogError.self) {
                        try MerkleProof.verifyInclusion(leafHash: leaf, index: index, size: size, proof: changed, root: root)
                    }
                    #expect(throws: TransparencyLogError.self) {
                        try MerkleProof.verifyInclusion(leafHash: leaf, index: index, size: size, proof: Array(proof.dropLast()), root: root)
                    }
                }
                #expect(throws: TransparencyLogError.self) {
                    try MerkleProof.verifyInclusion(leafHash: leaf, index: index, size: size, proof: proof + [root], root: root)
                }
                if size > 1 {
                    #expect(throws: TransparencyLogError.self) {
                        try MerkleProof.verifyInclusion(leafHash: leaf, index: (index + 1) % size, size: size, proof: proof, root: root)
                    }
                }
            }
            #expect(throws: TransparencyLogError.self, "from the empty tree proves nothing") {
                try MerkleProof.verifyConsistency(oldSize: 0, newSize: size, oldRoot: .emptyTree, newRoot: root, proof: [])
            }
            for old in 1...size {
                let proof = try tree.consistencyProof(from: old, to: size)
                let oldRoot = try tree.root(size: old)
                try MerkleProof.verifyConsistency(oldSize: old, newSize: size, oldRoot: oldRoot, newRoot: root, proof: proof)
                guard old < size else { continue }
                var changed = proof
                changed[Int(old) % proof.count] = LogHash.leaf([0xFF])
                #expect(throws: TransparencyLogError.self) {
                    try MerkleProof.verifyConsistency(oldSize: old, newSize: size, oldRoot: oldRoot, newRoot: root, proof: changed)
                }
                // A fork: the same size, another history.
                #expect(throws: TransparencyLogError.self) {
                    try MerkleProof.verifyConsistency(oldSize: old, newSize: size, oldRoot: LogHash.leaf([0x01]), newRoot: root, proof: proof)
                }
            }
        }
        #expect(throws: TransparencyLogError.rollback(seen: 9, offered: 8)) {
            try MerkleProof.verifyConsistency(oldSize: 9, newSize: 8, oldRoot: tree.root(size: 9), newRoot: tree.root(size: 8), proof: [])
        }
        #expect(throws: TransparencyLogError.self) { try tree.inclusionProof(index: 70, size: 70) }
        #expect(throws: TransparencyLogError.self) { try tree.consistencyProof(from: 3, to: 71) }
    }

    /// Go's tlog computes the same roots, accepts our proofs, and produces the same proofs; Go's
    /// note package opens our signed checkpoint, and we open a note Go signed.
    @Test func goSumdbAgrees() throws {
        let peer = try GoProgram.executable(folder: "kt/tlog-peer", requires: ("golang.org/x/mod/sumdb/tlog", "golang-golang-x-mod-dev"))
        let leaves = Self.leaves(37)
        let tree = Self.tree(leaves)
        var roots: [String: String] = [:]
        for size in UInt64(1)...37 { roots[String(size)] = try tree.root(size: size).base64 }
        let inclusion = try [(0, 1), (0, 37), (5, 6), (13, 37), (36, 37), (16, 17), (31, 32)].map { index, size in
            ["index": index, "size": size,
             "proof": try tree.inclusionProof(index: UInt64(index), size: UInt64(size)).map(\.base64)] as [String: Any]
        }
        let consistency = try [(1, 37), (8, 37), (13, 29), (16, 17), (31, 32), (20, 21)].map { old, new in
            ["old": old, "new": new,
             "proof": try tree.consistencyProof(from: UInt64(old), to: UInt64(new)).map(\.base64)] as [String: Any]
        }
        let signer = try NoteSigner(name: "rampart.test/keys", key: Curve25519.Signing.PrivateKey())
        let checkpoint = Checkpoint(origin: "rampart.test/keys", size: 37, rootHash: try tree.root())
        let note = try signer.sign(checkpoint.text)
        let request: [String: Any] = [
            "mode": "check", "leaves": leaves.map { Data($0).base64EncodedString() }, "roots": roots,
            "inclusion": inclusion, "consistency": consistency,
            "note": note.serialized, "verifier": signer.verifier.keyString,
        ]
        let answer = try Self.ask(peer, request)
        #expect((answer["roots"] as? [String: Bool])?.values.allSatisfy { $0 } == true, "\(answer["roots"] ?? "")")
        #expect((answer["roots"] as? [String: Bool])?.count == 37)
        #expect(answer["inclusion"] as? [Bool] == Array(repeating: true, count: inclusion.count))
        #expect(answer["consistency"] as? [Bool] == Array(repeating: true, count: consistency.count))
        #expect(answer["goInclusion"] as? [[String]] == inclusion.map { $0["proof"] as! [String] })
        #expect(answer["goConsistency"] as? [[String]] == consistency.map { $0["proof"] as! [String] })
        #expect(answer["note"] as? String == "ok", "\(answer["note"] ?? "")")
        #expect(answer["noteText"] as? String == checkpoint.text)

        // A note signed by Go, opened here with the verifier key Go printed.
        let signed = try Self.ask(peer, ["mode": "sign", "name": "witness.example", "text": checkpoint.text])
        let verifier = try NoteVerifier(keyString: try #require(signed["verifier"] as? String))
        let goNote = try SignedNote(serialized: try #require(signed["note"] as? String))
        #expect(try goNote.verified(by: [verifier]).text == checkpoint.text)
        #expect(try Checkpoint(text: goNote.text) == checkpoint)
        // Go refuses our note with its text changed.
        var forged = note
        forged.text = Checkpoint(origin: "rampart.test/keys", size: 38, rootHash: try tree.root()).text
        let refused = try Self.ask(peer, ["mode": "check", "leaves": [String](), "roots": [String: String](),
                                          "inclusion": [Any](), "consistency": [Any](),
                                          "note": forged.serialized, "verifier": signer.verifier.keyString])
        #expect(refused["note"] as? String != "ok")
    }

    /// Checkpoints and notes parse back, refuse malformed text, and a changed text, another key
    /// or a changed signature does not verify; a cosignature carries its time and verifies only
    /// with the witness's cosignature key.
    @Test func notesAndCosignatures() throws {
        let log = try NoteSigner(name: "rampart.test/keys", key: Curve25519.Signing.PrivateKey())
        let witness = try NoteSigner(name: "witness.rampart.test", key: Curve25519.Signing.PrivateKey())
        let checkpoint = Checkpoint(origin: "rampart.test/keys", size: 5, rootHash: LogHash.leaf([1]), extensions: ["ext one"])
        #expect(try Checkpoint(text: checkpoint.text) == checkpoint)
        for bad in ["", "a\n5\n", "a\n05\n\(LogHash.leaf([1]).base64)\n", "a\n5\nnot-base64\n", "\n5\n\(LogHash.leaf([1]).base64)\n",
                    "a\n-5\n\(LogHash.leaf([1]).base64)\n", "a\n5\n\(LogHash.leaf([1]).base64)"] {
            #expect(throws: TransparencyLogError.self) { try Checkpoint(text: bad) }
        }
        var note = try log.sign(checkpoint.text)
        note.signatures.append(try witness.cosign(checkpoint, time: 1_795_880_000))
        let parsed = try SignedNote(serialized: note.serialized)
        #expect(parsed == note)
        #expect(try parsed.verified(by: [log.verifier]).signers == ["rampart.test/keys"])
        #expect(try parsed.verified(by: [log.verifier, witness.cosignatureVerifier]).signers == ["rampart.test/keys", "witness.rampart.test"])
        let cosignature = try #require(parsed.signatures.last)
        #expect(witness.cosignatureVerifier.verifies(cosignature, of: checkpoint.text) == (true, 1_795_880_000))
        // The witness's key as an ordinary note key, or its cosignature on another time: refused.
        #expect(throws: TransparencyLogError.self) { try parsed.verified(by: [witness.verifier]) }
        var retimed = cosignature
        retimed.bytes[7] ^= 1
        #expect(witness.cosignatureVerifier.verifies(retimed, of: checkpoint.text).valid == false)
        var changed = parsed
        changed.text = Checkpoint(origin: "rampart.test/keys", size: 6, rootHash: LogHash.leaf([1])).text
        #expect(throws: TransparencyLogError.self) { try changed.verified(by: [log.verifier, witness.cosignatureVerifier]) }
        #expect(throws: TransparencyLogError.self) { try parsed.verified(by: [try NoteSigner(name: "rampart.test/keys", key: .init()).verifier]) }
        // Key strings round-trip (also when the base64 key holds a '+') and refuse a wrong hash or name.
        #expect(try NoteVerifier(keyString: log.verifier.keyString) == log.verifier)
        for _ in 0..<40 {
            let verifier = try NoteSigner(name: "k", key: .init()).verifier
            #expect(try NoteVerifier(keyString: verifier.keyString) == verifier)
        }
        let string = log.verifier.keyString
        #expect(throws: TransparencyLogError.self) { try NoteVerifier(keyString: string.replacingOccurrences(of: "rampart.test/keys", with: "other")) }
        #expect(throws: TransparencyLogError.self) { try NoteSigner(name: "has space", key: .init()) }
        for bad in ["text\n", "text\n\nno dash\n", "text\n\n\u{2014} name !!!\n", "text\u{7}\n\n\u{2014} a AAAAAAAA\n"] {
            #expect(throws: TransparencyLogError.self) { try SignedNote(serialized: bad) }
        }
    }

    /// Runs the Go peer with one JSON request.
    static func ask(_ peer: URL, _ request: [String: Any]) throws -> [String: Any] {
        let input = try JSONSerialization.data(withJSONObject: request)
        let run = try CLITool(path: peer).run([], input: input)
        try #require(run.status == 0, "\(run.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
    }
}

/// transparency-dev/merkle's proof vectors (`../shared/testdata/merkle`, read from there): every
/// happy path verifies and every `wantErr` case is refused.
@Suite struct MerkleVectorTests {
    /// What every vector file says besides its inputs.
    protocol Vector: Decodable { var desc: String? { get }; var wantErr: Bool? { get } }
    struct Inclusion: Vector { let leafIdx: UInt64; let treeSize: UInt64; let root: String; let leafHash: String; let proof: [String]?; let desc: String?; let wantErr: Bool? }
    struct Consistency: Vector { let size1: UInt64; let size2: UInt64; let root1: String; let root2: String; let proof: [String]?; let desc: String?; let wantErr: Bool? }

    static var folder: URL {
        if let path = ProcessInfo.processInfo.environment["RAMPART_MERKLE_VECTORS"], !path.isEmpty { return URL(fileURLWithPath: path) }
        return BuiltExecutable.packageRoot.deletingLastPathComponent().appendingPathComponent("shared/testdata/merkle")
    }

    static func files(_ kind: String) throws -> [URL] {
        let root = folder.appendingPathComponent(kind)
        let all = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        return all.filter { $0.pathExtension == "json" }.sorted { $0.path < $1.path }
    }

    /// A hash from base64, or nil when it is not 32 bytes (a `LogHash` cannot be made of it, so
    /// an inclusion vector with such a leaf or root is refused before any proof is run).
    static func hash(_ text: String) -> LogHash? {
        Data(base64Encoded: text).flatMap { try? LogHash(bytes: Array($0)) }
    }

    /// For consistency vectors, whose roots are only compared: a root that is not 32 bytes
    /// ("don't care") stands for a hash of its text, so two equal ones are equal and differ
    /// from every real root.
    static func root(_ text: String) -> LogHash {
        hash(text) ?? LogHash.leaf(Array("placeholder root: \(text)".utf8))
    }

    static func proofHashes(_ texts: [String]?) -> [LogHash]? {
        var out: [LogHash] = []
        for text in texts ?? [] {
            guard let bytes = Data(base64Encoded: text), let hash = try? LogHash(bytes: Array(bytes)) else { return nil }
            out.append(hash)
        }
        return out
    }

    /// Runs every vector of `kind` (a folder of the vector set): `accepts` says whether our
    /// verifier accepted it, which must be the opposite of the vector's `wantErr`.
    static func check<V: Vector>(_ kind: String, as _: V.Type, accepts: (V) -> Bool) throws {
        let files = try Self.files(kind)
        try #require(files.count > 50, "no vectors under \(Self.folder.path) (../shared/testdata/merkle)")
        var failures: [String] = []
        for file in files {
            let vector = try JSONDecoder().decode(V.self, from: Data(contentsOf: file))
            if accepts(vector) == (vector.wantErr ?? false) {
                failures.append("\(file.path.split(separator: "/").suffix(2).joined(separator: "/")) (\(vector.desc ?? ""))")
            }
        }
        #expect(failures.isEmpty, "\(failures.count) of \(files.count): \(failures)")
    }

    @Test func inclusionVectors() throws {
        try Self.check("inclusion", as: Inclusion.self) { vector in
            guard let proof = Self.proofHashes(vector.proof), let leaf = Self.hash(vector.leafHash), let root = Self.hash(vector.root) else { return false }
            return (try? MerkleProof.verifyInclusion(leafHash: leaf, index: vector.leafIdx, size: vector.treeSize, proof: proof, root: root)) != nil
        }
    }

    @Test func consistencyVectors() throws {
        try Self.check("consistency", as: Consistency.self) { vector in
            guard let proof = Self.proofHashes(vector.proof) else { return false }
            return (try? MerkleProof.verifyConsistency(oldSize: vector.size1, newSize: vector.size2, oldRoot: Self.root(vector.root1),
                                                       newRoot: Self.root(vector.root2), proof: proof)) != nil
        }
    }
}

/// The witness and the client's head policy against the attacks of a compromised server: a fork
/// shown to two clients, an older head, a dropped entry, a head no witness saw, a stale head.
@Suite struct WitnessTests {
    struct World {
        let log: NoteSigner
        let witness: Witness
        let folder: URL
        var tree = MerkleTree()

        init() throws {
            log = try NoteSigner(name: "rampart.test/keys", key: .init())
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-witness-\(UUID().uuidString)")
            witness = Witness(signer: try NoteSigner(name: "witness.test", key: .init()), logKey: log.verifier,
                              stateFile: folder.appendingPathComponent("state.json"))
        }

        var policy: HeadPolicy { HeadPolicy(logKey: log.verifier, witnesses: [witness.signer.cosignatureVerifier]) }

        func head(of tree: MerkleTree) throws -> SignedNote {
            try log.sign(Checkpoint(origin: "rampart.test/keys", size: tree.size, rootHash: try tree.root()).text)
        }

        /// The log's head, cosigned by the witness given the proof from its last head.
        func witnessed(_ tree: MerkleTree, now: UInt64) throws -> SignedNote {
            var note = try head(of: tree)
            let proof = try witness.lastHead().map { try tree.consistencyProof(from: $0.size, to: tree.size) } ?? []
            note.signatures.append(try witness.cosign(note, consistency: proof, now: now))
            return note
        }
    }

    @Test func honestGrowthIsAcceptedAndEveryAttackIsRefused() throws {
        var world = try World()
        defer { try? FileManager.default.removeItem(at: world.folder) }
        let t0: UInt64 = 1_795_880_000
        for i in 0..<10 { world.tree.append(Array("ann key \(i)".utf8)) }
        let first = try world.witnessed(world.tree, now: t0)
        var client = try world.policy.accept(first, previous: nil, consistency: [], now: t0 + 60).head
        #expect(client.size == 10)

        // Honest growth: the witness and the client follow it.
        for i in 10..<15 { world.tree.append(Array("bob key \(i)".utf8)) }
        let second = try world.witnessed(world.tree, now: t0 + 3600)
        client = try world.policy.accept(second, previous: client, consistency: try world.tree.consistencyProof(from: 10, to: 15),
                                         now: t0 + 3700).head
        #expect(client.size == 15)

        // A fork: another tree of the same size (Bob's key swapped). The witness refuses to
        // cosign it, and a client that saw the real head refuses it even if signed by the log.
        var fork = MerkleTree()
        for i in 0..<10 { fork.append(Array("ann key \(i)".utf8)) }
        for i in 10..<15 { fork.append(Array((i == 12 ? "mallory key" : "bob key \(i)").utf8)) }
        let forged = try world.head(of: fork)
        #expect(throws: TransparencyLogError.self) { try world.witness.cosign(forged, consistency: [], now: t0 + 3800) }
        #expect(throws: TransparencyLogError.self) { try world.policy.accept(forged, previous: client, consistency: [], now: t0 + 3800) }
        // A client that never saw the real head still needs the witness: the log's signature alone is not enough.
        #expect(throws: TransparencyLogError.self) { try world.policy.accept(forged, previous: nil, consistency: [], now: t0 + 3800) }

        // An older head, even properly signed and once cosigned: a rollback.
        #expect(throws: TransparencyLogError.rollback(seen: 15, offered: 10)) {
            try world.policy.accept(first, previous: client, consistency: [], now: t0 + 3800)
        }

        // A dropped entry: the log rebuilt without leaf 3 and grown to 16 fails the consistency proof.
        var dropped = MerkleTree()
        for i in 0..<10 where i != 3 { dropped.append(Array("ann key \(i)".utf8)) }
        for i in 10..<17 { dropped.append(Array("bob key \(i)".utf8)) }
        let droppedHead = try world.head(of: dropped)
        #expect(throws: TransparencyLogError.self) {
            try world.witness.cosign(droppedHead, consistency: try dropped.consistencyProof(from: 15, to: 16), now: t0 + 3900)
        }

        // A head witnessed more than 72 hours ago: stale.
        #expect(throws: TransparencyLogError.self) {
            try world.policy.accept(second, previous: nil, consistency: [], now: t0 + 3600 + 73 * 3600)
        }

        // The witness remembers across restarts: a new Witness over the same file refuses the fork too.
        let restarted = Witness(signer: world.witness.signer, logKey: world.log.verifier, stateFile: world.witness.stateFile)
        #expect(try restarted.lastHead()?.size == 15)
        #expect(throws: TransparencyLogError.self) { try restarted.cosign(forged, consistency: [], now: t0 + 4000) }
        // A head signed by another key is refused by the witness before anything is recorded.
        let impostor = try NoteSigner(name: "rampart.test/keys", key: .init())
        let impostorHead = try impostor.sign(Checkpoint(origin: "rampart.test/keys", size: 15, rootHash: try world.tree.root()).text)
        #expect(throws: TransparencyLogError.self) { try restarted.cosign(impostorHead, consistency: [], now: t0 + 4000) }
        #expect(try restarted.lastHead()?.size == 15)
    }
}
