import Crypto
import Foundation
import RampartAPI
import RampartCore
import TransparencyLog

/// The entries of the key log as the database holds them: the table `keyLogLeaves` (one row per
/// change of an address's key list, its keyed index, the leaf's bytes and hash) and the secret of
/// the private index (`keyLogSecret`).
///
/// The index of an address is HMAC-SHA256 of the lower-cased address under that secret
/// (``KeyLogLeaf/index(of:secret:)``). Trust-model row **username (critical)** beside the key
/// rows: the log is public to witnesses and auditors and holds no address, only this keyed index,
/// so nobody can list the server's addresses from it, or test a guessed address against it,
/// without the secret. The secret is in the database because whoever reads the database reads the
/// `addresses` table anyway. A VRF (RFC 9381) would also let a client check that an index belongs
/// to the address it asked for; swift-crypto exposes no Ed25519 point arithmetic to build one, so
/// clients trust the server's index (RampartServer's *Key transparency* article says what that
/// leaves open).
enum KeyLogEntries {
    /// The index secret of the database.
    static func secret(_ db: any StorageConnection) throws -> SymmetricKey {
        guard let data = try Data.fetchOne(db, sql: "SELECT secret FROM keyLogSecret"), data.count == 32 else {
            throw ServerError.storage("the key log's index secret is missing")
        }
        return SymmetricKey(data: data)
    }

    /// The binary public keys the key directory serves for `address` now (none when it has none).
    static func currentKeys(_ db: any StorageConnection, address: String) throws -> [Data] {
        guard try db.tableExists("addressKeys") else {
            // A database of the one-key model: the account's key serves every address.
            return try Data.fetchAll(db, sql: "SELECT u.publicKey FROM addresses a JOIN users u ON u.id = a.userId WHERE a.address = ? COLLATE NOCASE",
                                     arguments: [address])
        }
        return try Data.fetchAll(db, sql: "SELECT publicKey FROM addressKeys WHERE address = ? COLLATE NOCASE AND active = 1 ORDER BY id",
                                 arguments: [address])
    }

    /// The addresses an account has had keys for (its self-audit covers them all).
    static func addressesEverOwned(_ db: any StorageConnection, userID: String) throws -> [String] {
        guard try db.tableExists("addressKeys") else {
            return try String.fetchAll(db, sql: "SELECT lower(address) FROM addresses WHERE userId = ? ORDER BY 1", arguments: [userID])
        }
        return try String.fetchAll(db, sql: "SELECT DISTINCT lower(address) FROM addressKeys WHERE userId = ? ORDER BY 1", arguments: [userID])
    }

    /// Appends one leaf per address with its current key list, inside the caller's transaction,
    /// so a change and its entries commit together or not at all. ``KeyList/apply(_:_:now:)``
    /// (the one function every key-list change goes through) calls it after the change.
    static func record(_ db: any StorageConnection, addresses: [String], time: Int64) throws {
        let secret = try secret(db)
        for address in addresses {
            let leaf = try KeyLogLeaf(index: KeyLogLeaf.index(of: address, secret: secret), time: time,
                                      keys: try currentKeys(db, address: address))
            let next = try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id) + 1, 0) FROM keyLogLeaves") ?? 0
            try db.execute(sql: "INSERT INTO keyLogLeaves (id, indexKey, leaf, leafHash) VALUES (?, ?, ?, ?)",
                           arguments: [next, leaf.index, Data(leaf.encoded), Data(leaf.leafHash.bytes)])
        }
    }

    /// The index of `address`.
    static func index(_ db: any StorageConnection, of address: String) throws -> String {
        KeyLogLeaf.index(of: address, secret: try secret(db))
    }
}

/// The server's key log: an append-only RFC 9162 Merkle tree of every change to an address's key
/// list (``KeyLogLeaf``), its heads signed as C2SP checkpoints with the log's Ed25519 key, the
/// heads the witnesses cosigned, and the proofs clients ask for.
///
/// Trust-model row **the user's private and public keys (critical when modified: impersonation)**:
/// the database holds the leaves (table `keyLogLeaves`, one row per change, written in the
/// transaction of the change) and the index from an address to its entries (`indexKey`, the
/// keyed index); this object keeps the tree's hashes in memory, catching up with the table
/// before each answer, and signs a new checkpoint when the tree grew. A head is served to
/// clients only once a pinned witness cosigned it (`keyLogCosigned`).
final class KeyLog: @unchecked Sendable {
    let store: BackendStore
    let signer: NoteSigner
    let witnesses: [NoteVerifier]
    private let lock = NSLock()
    private var tree = MerkleTree()
    private var signed: SignedNote?

    /// The origin line of the log of `domain`'s server.
    static func origin(domain: String) -> String { "\(domain)/keylog" }

    init(store: BackendStore, signer: NoteSigner, witnesses: [NoteVerifier]) {
        self.store = store; self.signer = signer; self.witnesses = witnesses
    }

    /// Opens the log with the signing key in `tls/keylog-signing-key` (made at first start), and
    /// logs the addresses that have no entry yet (a database made before the log existed).
    /// - Throws: ``ServerError/startFailed(_:)``.
    static func open(store: BackendStore, tlsFolder: URL, domain: String, witnesses: [String], now: Int64) throws -> KeyLog {
        let signer: NoteSigner
        let verifiers: [NoteVerifier]
        do {
            let seed = try secretFile(tlsFolder.appendingPathComponent("keylog-signing-key"))
            signer = try NoteSigner(name: origin(domain: domain), key: try Curve25519.Signing.PrivateKey(rawRepresentation: seed))
            verifiers = try witnesses.map(NoteVerifier.init(keyString:))
        } catch let error as ServerError {
            throw error
        } catch {
            throw ServerError.startFailed("the key log's keys cannot be used (\(error))")
        }
        guard verifiers.allSatisfy({ $0.type == .cosignatureV1 }) else {
            throw ServerError.startFailed("a witness key is a cosignature/v1 verifier (what `rampart server witness --print-key` prints)")
        }
        let log = KeyLog(store: store, signer: signer, witnesses: verifiers)
        try store.write { db in
            let secret = try KeyLogEntries.secret(db)
            let unlogged = try String.fetchAll(db, sql: "SELECT address FROM addresses ORDER BY address").filter { address in
                try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM keyLogLeaves WHERE indexKey = ?)",
                                  arguments: [KeyLogLeaf.index(of: address, secret: secret)]) != true
            }
            try KeyLogEntries.record(db, addresses: unlogged, time: now)
        }
        return log
    }

    /// The witness keys of the data folder's `keylog-witnesses` file (one a line; `#` comments).
    static func witnessKeys(dataDirectory: URL) -> [String] {
        guard let text = try? String(contentsOf: dataDirectory.appendingPathComponent("keylog-witnesses"), encoding: .utf8) else { return [] }
        return text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && !$0.hasPrefix("#") }
    }

    /// What clients pin (`server.json`).
    var pins: KeyLogPins {
        KeyLogPins(origin: signer.name, logKey: signer.verifier.keyString, witnesses: witnesses.map(\.keyString))
    }

    /// A 32-byte secret file (0600), created with random bytes when missing.
    static func secretFile(_ url: URL) throws -> Data {
        do {
            try PrivateFiles.ensurePrivateDirectory(url.deletingLastPathComponent())
            if !FileManager.default.fileExists(atPath: url.path) {
                try PrivateFiles.writeAtomically(SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }, to: url)
            }
            try PrivateFiles.checkPrivateFile(url)
            let data = try Data(contentsOf: url)
            guard data.count == 32 else { throw ServerError.startFailed("\(url.path) is not 32 bytes") }
            return data
        } catch let error as ServerError {
            throw error
        } catch {
            throw ServerError.startFailed("\(url.path) cannot be read or created (\(error))")
        }
    }

    static func registerMigration(_ migrator: inout StorageMigrator) {
        migrator.registerMigration("keylog-v1") { db in
            try db.execute(sql: """
                CREATE TABLE keyLogLeaves (
                    id INTEGER PRIMARY KEY NOT NULL,
                    indexKey TEXT NOT NULL,
                    leaf BLOB NOT NULL,
                    leafHash BLOB NOT NULL);
                CREATE INDEX keyLogLeaves_index ON keyLogLeaves(indexKey, id);
                CREATE TABLE keyLogCosigned (
                    witness TEXT PRIMARY KEY NOT NULL,
                    size INTEGER NOT NULL,
                    note TEXT NOT NULL);
                CREATE TABLE keyLogSecret (secret BLOB NOT NULL);
                """)
            try db.execute(sql: "INSERT INTO keyLogSecret (secret) VALUES (?)",
                           arguments: [SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }])
        }
    }

    // MARK: The tree

    /// Runs `body` with the tree caught up with the table (leaves committed since the last call).
    func withTree<T>(_ body: (MerkleTree) throws -> T) throws -> T {
        try lock.withLock {
            let known = Int64(tree.size)
            let hashes = try store.read { db in
                try Data.fetchAll(db, sql: "SELECT leafHash FROM keyLogLeaves WHERE id >= ? ORDER BY id", arguments: [known])
            }
            for hash in hashes { tree.append(leafHash: try LogHash(bytes: Array(hash))) }
            return try body(tree)
        }
    }

    /// The newest head, signed by the log (a new checkpoint when the tree grew).
    func checkpoint() throws -> SignedNote {
        try withTree { tree in
            if let signed, let text = try? Checkpoint(text: signed.text), text.size == tree.size { return signed }
            let note = try signer.sign(Checkpoint(origin: signer.name, size: tree.size, rootHash: try tree.root()).text)
            signed = note
            return note
        }
    }

    /// The newest head a pinned witness cosigned, with every pinned witness's cosignature of it;
    /// without pinned witnesses, the log's newest head.
    /// - Throws: ``ServerError/conflict(_:)`` when no witness cosigned a head yet.
    func cosignedHead() throws -> SignedNote {
        guard !witnesses.isEmpty else { return try checkpoint() }
        let rows = try store.read { db in try StorageRow.fetchAll(db, sql: "SELECT witness, size, note FROM keyLogCosigned ORDER BY size DESC") }
        let notes = rows.filter { row in witnesses.contains { $0.keyString == row["witness"] as String } }
            .compactMap { try? SignedNote(serialized: $0["note"]) }
        guard var head = notes.first else { throw ServerError.conflict("keylog.notWitnessed: no witness has cosigned a head of the key log yet") }
        for other in notes.dropFirst() where other.text == head.text {
            head.signatures += other.signatures.filter { !head.signatures.contains($0) }
        }
        return head
    }

    /// Keeps a witness's cosignature of a head of this log.
    /// - Throws: ``ServerError/badRequest(_:)`` for a head this log did not sign, a head of
    ///   another tree, or no valid cosignature of a pinned witness.
    func addCosignature(_ serialized: String) throws {
        guard let note = try? SignedNote(serialized: serialized), let checkpoint = try? Checkpoint(text: note.text),
              note.signatures.contains(where: { signer.verifier.verifies($0, of: note.text).valid }) else {
            throw ServerError.badRequest("not a head this key log signed")
        }
        let matches = try withTree { tree in
            checkpoint.origin == signer.name && checkpoint.size <= tree.size && (try? tree.root(size: checkpoint.size)) == checkpoint.rootHash
        }
        guard matches else { throw ServerError.badRequest("the head is not one of this key log's tree") }
        let logSignatures = note.signatures.filter { signer.verifier.verifies($0, of: note.text).valid }
        var kept = 0
        for witness in witnesses {
            let cosignatures = note.signatures.filter { witness.verifies($0, of: note.text).valid }
            guard !cosignatures.isEmpty else { continue }
            let stored = SignedNote(text: note.text, signatures: logSignatures + cosignatures).serialized
            try store.write { db in
                let size = try Int64.fetchOne(db, sql: "SELECT size FROM keyLogCosigned WHERE witness = ?", arguments: [witness.keyString])
                if size ?? -1 <= Int64(checkpoint.size) {
                    try db.execute(sql: """
                        INSERT INTO keyLogCosigned (witness, size, note) VALUES (?, ?, ?)
                        ON CONFLICT (witness) DO UPDATE SET size = excluded.size, note = excluded.note
                        """,
                                   arguments: [witness.keyString, Int64(checkpoint.size), stored])
                }
            }
            kept += 1
        }
        guard kept > 0 else { throw ServerError.badRequest("no valid cosignature of a witness this server pins") }
    }

    /// The proof between two sizes of the tree.
    func consistency(from: UInt64, to: UInt64) throws -> KeyLogConsistencyResponse {
        try withTree { tree in
            guard from <= to, to <= tree.size else { throw ServerError.badRequest("from \(from) to \(to) is outside a log of \(tree.size)") }
            let proof = try tree.consistencyProof(from: from, to: to)
            return KeyLogConsistencyResponse(from: from, to: to, proof: proof.map(\.base64))
        }
    }

    /// The entries of `address` in the tree of `size` leaves, oldest first, with their proofs.
    func entries(of address: String, size: UInt64, newestOnly: Bool) throws -> [KeyLogProvenEntry] {
        let rows = try store.read { db in
            try StorageRow.fetchAll(db, sql: "SELECT id, leaf FROM keyLogLeaves WHERE indexKey = ? AND id < ? ORDER BY id \(newestOnly ? "DESC LIMIT 1" : "")",
                             arguments: [try KeyLogEntries.index(db, of: address), Int64(size)])
        }
        return try withTree { tree in
            try rows.map { row in
                let id = UInt64(row["id"] as Int64)
                return KeyLogProvenEntry(leafIndex: id, leaf: (row["leaf"] as Data).base64EncodedString(),
                                         proof: try tree.inclusionProof(index: id, size: size).map(\.base64))
            }
        }
    }

    /// The newest entry of `address` in the cosigned head, with the keys the directory holds now.
    /// - Throws: ``ServerError/notFound(_:)`` when the address has no entry in that head.
    func lookup(address: String, publicKeys: [String]) throws -> KeyLogLookupResponse {
        let head = try cosignedHead()
        let size = try Checkpoint(text: head.text).size
        guard let entry = try entries(of: address, size: size, newestOnly: true).first else {
            throw ServerError.notFound("A key log entry of \(address) in the witnessed head")
        }
        return KeyLogLookupResponse(address: address.lowercased(), publicKeys: publicKeys, entry: entry, head: head.serialized)
    }
}
