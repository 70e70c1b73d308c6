import Foundation
import OpenPGP
import RampartAPI
@testable import RampartClient
import RampartCore
import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing
import TransparencyLog

/// Key transparency end to end: `rampart server start` with a witness (`rampart server witness`,
/// another process with its own key), the client's checks through `rampart send`, and the
/// attacks of a server that swaps a key without logging it, shows a head the witness did not
/// cosign (a fork), serves an older head, or drops an entry; Go's `sumdb/tlog` and `note`
/// check the real server's checkpoints and proofs.
@Suite(.serialized) struct KeyTransparencyEndToEndTests {
    /// `rampart`'s exit statuses (RampartCLIKit's ExitStatus): a key the log does not prove, tampered data.
    static let keyNotInLog: Int32 = 11
    static let tampered: Int32 = 7

    /// A world whose server pins a witness: the witness's key is in `<data>/keylog-witnesses`.
    static func worldWithWitness() async throws -> (EndToEndWorld, ServerProcess, info: String, witness: URL) {
        let world = try EndToEndWorld()
        let witness = world.folder.child("witness")
        let key = try await world.rampart(["server", "witness", "--data", witness.path, "--print-key"])
        try #require(key.status == 0, "\(key.stderr)")
        try PrivateFiles.ensurePrivateDirectory(world.serverData)
        try Data(key.stdout.utf8).write(to: world.serverData.appendingPathComponent("keylog-witnesses"))
        let server = try await world.startServer(["--open-signup"])
        #expect(server.info.keyLog?.witnesses == [key.stdout.trimmingCharacters(in: .whitespacesAndNewlines)])
        return (world, server, server.infoFile.path, witness)
    }

    static func witness(_ world: EndToEndWorld, _ folder: URL, _ info: String) async throws -> CLIResult {
        try await world.rampart(["server", "witness", "--data", folder.path, "--server-info", info, "--once"])
    }

    static func sql(_ server: ServerProcess, _ statement: String) async throws -> String {
        let result = try await CLITool(path: URL(fileURLWithPath: "/usr/bin/sqlite3"))
            .run([server.dataDirectory.appendingPathComponent("backend.sqlite").path, statement])
        try #require(result.status == 0, "sqlite3: \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func send(_ world: EndToEndWorld, to address: String, as user: String = "demo") async throws -> CLIResult {
        try await world.rampart(["send", "--user", user, "--to", address, "--subject", "KT \(address)"], stdin: "<p>hello</p>")
    }

    /// Stops the server and starts it again on the same port (its tree is rebuilt from the database).
    static func restart(_ world: EndToEndWorld, _ server: ServerProcess) async throws -> ServerProcess {
        let port = String(server.info.port)
        server.child.kill(SIGTERM)
        return try await world.startServer(["--open-signup", "--port", port])
    }

    /// Go's `sumdb/tlog` and `note` (scripts/kt/tlog-peer) check what the real server serves: its
    /// witnessed checkpoint opens with the pinned log key, the roots of two heads follow from the
    /// database's leaves, and the lookups' inclusion proofs and the consistency proof between the
    /// two heads verify (and are the proofs Go makes itself).
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    @Test func goChecksTheRealServersCheckpointsAndProofs() async throws {
        let peer = try GoProgram.executable(folder: "kt/tlog-peer", requires: ("golang.org/x/mod/sumdb/tlog", "golang-golang-x-mod-dev"))
        let (world, server, info, witness) = try await Self.worldWithWitness()
        defer { world.close(server) }
        await #expect(try Self.witness(world, witness, info).status == 0)
        let pins = try #require(server.info.keyLog)
        let first = try await Self.fetch(server.info) { api in try await api.keyLogHead() }
        #expect(try await world.rampart(["signup", "--user", "bob", "--server-info", info, "--username", "bob", "--password-stdin"],
                                  stdin: "bob pw 1\n").status == 0)
        await #expect(try Self.witness(world, witness, info).status == 0)
        let (second, lookups) = try await Self.fetch(server.info) { api in
            _ = try await api.login(username: DemoAccounts.demo.username, password: DemoAccounts.demo.loginPassword)
            return (try await api.keyLogHead(), [try await api.keyLogLookup(DemoAccounts.alice.address), try await api.keyLogLookup("bob@rampart.test")])
        }
        let old = try Checkpoint(text: try SignedNote(serialized: first.head).text)
        let new = try Checkpoint(text: try SignedNote(serialized: second.head).text)
        #expect(old.size == 2 && new.size == 3)
        let consistency = try await Self.fetch(server.info) { api in try await api.keyLogConsistency(from: old.size, to: new.size) }
        let leaves = try await Self.sql(server, "SELECT hex(leaf) FROM keyLogLeaves ORDER BY id").split(separator: "\n")
            .map { SecretScanEndToEndTests.bytes(hex: String($0)).base64EncodedString() }
        #expect(leaves.count == 3)
        let inclusion = lookups.map { ["index": $0.entry.leafIndex, "size": new.size, "proof": $0.entry.proof] as [String: Any] }
        let request: [String: Any] = [
            "mode": "check", "leaves": leaves, "roots": [String(old.size): old.rootHash.base64, String(new.size): new.rootHash.base64],
            "inclusion": inclusion, "consistency": [["old": old.size, "new": new.size, "proof": consistency.proof] as [String: Any]],
            "note": second.head, "verifier": pins.logKey,
        ]
        let input = try JSONSerialization.data(withJSONObject: request)
        let run = try await CLITool(path: peer).run([], input: input)
        try #require(run.status == 0, "\(run.stderr)")
        let answer = try #require(try JSONSerialization.jsonObject(with: run.output) as? [String: Any])
        #expect(answer["roots"] as? [String: Bool] == [String(old.size): true, String(new.size): true], "\(answer)")
        #expect(answer["inclusion"] as? [Bool] == [true, true], "\(answer)")
        #expect(answer["consistency"] as? [Bool] == [true], "\(answer)")
        #expect(answer["goInclusion"] as? [[String]] == lookups.map(\.entry.proof))
        #expect(answer["goConsistency"] as? [[String]] == [consistency.proof])
        #expect(answer["note"] as? String == "ok", "\(answer)")
        // The leaves the lookups proved are the addresses' entries: alice's key, bob's key.
        #expect(lookups.map(\.entry.leafIndex) == [1, 2])
    }

    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    static func fetch<T: Sendable>(_ info: ServerInfo, _ body: @Sendable (APIClient) async throws -> T) async throws -> T {
        try await onThreadsOfItsOwn {
            try await APIClient(endpoint: ServerEndpoint(serverInfo: info)).closing { api in try await body(api) }
        }
    }

    @Test func anHonestLogProvesKeysAndEveryAttackIsRefused() async throws {
        let (world, first, info, witness) = try await Self.worldWithWitness()
        var server = first
        defer { world.close(server) }
        // No witnessed head yet: the key cannot be proven, so it is neither used nor pinned.
        #expect(try await world.login(DemoAccounts.demo, user: "demo", serverInfo: info).status == 0)
        let early = try await Self.send(world, to: DemoAccounts.alice.address)
        #expect(early.status == Self.keyNotInLog, "\(early.stdout) \(early.stderr)")
        #expect(!(try await world.rampart(["contacts", "list", "--user", "demo"]).stdout.contains(DemoAccounts.alice.address)))

        // The witness cosigns; now the key is proven, pinned and used.
        let cosigned = try await Self.witness(world, witness, info)
        #expect(cosigned.status == 0 && cosigned.stdout.contains("cosigned the head of"), "\(cosigned.stdout) \(cosigned.stderr)")
        let honest = try await Self.send(world, to: DemoAccounts.alice.address)
        #expect(honest.status == 0, "\(honest.stderr)")
        await #expect(try Self.witness(world, witness, info).stdout.contains("cosigned already"))

        // The owner's audit: every entry of demo's addresses holds demo's own key.
        let audit = try await world.rampart(["account", "audit", "--user", "demo"])
        #expect(audit.status == 0 && audit.stdout.contains("every key is yours"), "\(audit.stdout) \(audit.stderr)")
        // The safety number, the same whichever side computes it; the contact is marked verified.
        let verify = try await world.rampart(["contacts", "verify", DemoAccounts.alice.address, "--user", "demo"])
        #expect(verify.status == 0 && verify.stdout.contains("Safety number:") && verify.stdout.contains("Marked"), "\(verify.stdout) \(verify.stderr)")
        #expect(try await world.login(DemoAccounts.alice, user: "alice", serverInfo: info).status == 0)
        let aliceSide = try await world.rampart(["contacts", "verify", DemoAccounts.demo.address, "--user", "alice"])
        let number = { (result: CLIResult) in result.lines.first { $0.hasPrefix("Safety number:") } }
        #expect(number(verify) != nil && number(verify) == number(aliceSide), "\(verify.stdout) \(aliceSide.stdout) \(aliceSide.stderr)")

        // 1. A key swapped without a log entry: bob signs up (logged, witnessed), then the server
        //    hands out a key of its own for him. A client that never saw bob refuses it.
        #expect(try await world.rampart(["signup", "--user", "bob", "--server-info", info, "--username", "bob", "--password-stdin"],
                                  stdin: "bob pw 1\n").status == 0)
        await #expect(try Self.witness(world, witness, info).status == 0)
        let mallory = try PGPPrivateKey.generate(name: "Bob", address: "bob@rampart.test")
        let hex = mallory.publicKey.binary.map { String(format: "%02X", $0) }.joined()
        let realBob = try await Self.sql(server, "SELECT hex(publicKey) FROM addressKeys WHERE address = 'bob@rampart.test' AND active = 1")
        _ = try await Self.sql(server, "UPDATE addressKeys SET publicKey = X'\(hex)' WHERE address = 'bob@rampart.test' AND active = 1")
        let swapped = try await Self.send(world, to: "bob@rampart.test")
        #expect(swapped.status == Self.keyNotInLog, "\(swapped.stdout) \(swapped.stderr)")
        #expect(swapped.stderr.contains("not proven by the server's key transparency log"), "\(swapped.stderr)")
        #expect(!(try await world.rampart(["contacts", "list", "--user", "demo"]).stdout.contains("bob@rampart.test")))
        _ = try await Self.sql(server, "UPDATE addressKeys SET publicKey = X'\(realBob)' WHERE address = 'bob@rampart.test' AND active = 1")
        await #expect(try Self.send(world, to: "bob@rampart.test").status == 0)
        #expect(try await world.rampart(["send", "--user", "bob", "--to", DemoAccounts.demo.address, "--subject", "Signed by bob"],
                                  stdin: "<p>hi demo</p>").status == 0)

        // 2. An older head served (a rollback): the device stored the newest; the server puts back
        //    an earlier cosigned head. (From here on the checks are of bob's key: alice's is verified
        //    by the user, so the log is not what vouches for it.)
        let older = try await Self.sql(server, "SELECT size || '|' || hex(note) FROM keyLogCosigned")
        #expect(try await world.rampart(["signup", "--user", "carol", "--server-info", info, "--username", "carol", "--password-stdin"],
                                  stdin: "carol pw 1\n").status == 0)
        await #expect(try Self.witness(world, witness, info).status == 0)
        await #expect(try Self.send(world, to: "carol@rampart.test").status == 0)
        let newer = try await Self.sql(server, "SELECT size || '|' || hex(note) FROM keyLogCosigned")
        let parts = older.split(separator: "|")
        _ = try await Self.sql(server, "UPDATE keyLogCosigned SET size = \(parts[0]), note = CAST(X'\(parts[1])' AS TEXT)")
        let rolledBack = try await Self.send(world, to: "bob@rampart.test")
        #expect(rolledBack.status == Self.keyNotInLog && rolledBack.stderr.contains("rollback"), "\(rolledBack.stderr)")
        //    Reading bob's signed mail meanwhile: the signature is his pinned key's, but the log
        //    does not vouch for the key, and the reader says so.
        let read = try await world.syncAndRead(user: "demo", subject: "Signed by bob")
        #expect(read.stdout.contains("Signature: verified (key not in the transparency log)"), "\(read.stdout) \(read.stderr)")
        let back = newer.split(separator: "|")
        _ = try await Self.sql(server, "UPDATE keyLogCosigned SET size = \(back[0]), note = CAST(X'\(back[1])' AS TEXT)")
        await #expect(try Self.send(world, to: "bob@rampart.test").status == 0)

        // 3. A fork: the server rewrites bob's entry (his key swapped in the log itself, same size)
        //    and restarts. The witness refuses to cosign the forked head, and the server's proofs
        //    no longer lead to the witnessed root, for this client and for a new one.
        let bobIndex = try await Self.sql(server, "SELECT min(id) FROM keyLogLeaves WHERE id > 1")
        let leafRow = try await Self.sql(server, "SELECT hex(leaf) FROM keyLogLeaves WHERE id = \(bobIndex)")
        let original = try KeyLogLeaf(encoded: Array(SecretScanEndToEndTests.bytes(hex: leafRow)))
        let forged = try KeyLogLeaf(index: original.index, time: original.time, keys: [mallory.publicKey.binary])
        let forgedHex = (leaf: forged.encoded.map { String(format: "%02X", $0) }.joined(),
                         hash: forged.leafHash.bytes.map { String(format: "%02X", $0) }.joined())
        _ = try await Self.sql(server, "UPDATE keyLogLeaves SET leaf = X'\(forgedHex.leaf)', leafHash = X'\(forgedHex.hash)' WHERE id = \(bobIndex)")
        server = try await Self.restart(world, server)
        let refused = try await Self.witness(world, witness, info)
        #expect(refused.status == Self.tampered && refused.stderr.contains("fork"), "\(refused.stdout) \(refused.stderr)")
        let forkSeen = try await Self.send(world, to: "bob@rampart.test")
        #expect(forkSeen.status == Self.keyNotInLog, "\(forkSeen.stderr)")
        #expect(try await world.login(DemoAccounts.demo, user: "demo2", serverInfo: info).status == 0)
        await #expect(try Self.send(world, to: "bob@rampart.test", as: "demo2").status == Self.keyNotInLog)
        //    The forked head as the log signed it, served without the witness's cosignature: refused.
        try server.info.certificatePEM.write(to: world.folder.child("ca.pem"), atomically: true, encoding: .utf8)
        let checkpoint = try await CLITool(path: URL(fileURLWithPath: "/usr/bin/curl"))
            .run(["-s", "--cacert", world.folder.child("ca.pem").path, "\(server.baseURL.absoluteString)\(KeyLogRoute.checkpoint.path)"])
        let note = try #require(try JSONDecoder().decode(KeyLogHeadNote.self, from: checkpoint.output).head as String?)
        let noteHex = Data(note.utf8).map { String(format: "%02X", $0) }.joined()
        _ = try await Self.sql(server, "UPDATE keyLogCosigned SET note = CAST(X'\(noteHex)' AS TEXT)")
        let unwitnessed = try await Self.send(world, to: "bob@rampart.test", as: "demo2")
        #expect(unwitnessed.status == Self.keyNotInLog && unwitnessed.stderr.contains("witness cosignatures"), "\(unwitnessed.stderr)")

        // 4. An entry dropped: the server removes carol's entry and restarts; the witness refuses
        //    (the tree no longer extends the one it cosigned) and clients refuse the proofs.
        _ = try await Self.sql(server, "UPDATE keyLogLeaves SET leaf = X'\(leafRow)', leafHash = X'\(original.leafHash.bytes.map { String(format: "%02X", $0) }.joined())' WHERE id = \(bobIndex)")
        _ = try await Self.sql(server, "UPDATE keyLogCosigned SET size = \(back[0]), note = CAST(X'\(back[1])' AS TEXT)")
        let last = try await Self.sql(server, "SELECT max(id) FROM keyLogLeaves")
        _ = try await Self.sql(server, "DELETE FROM keyLogLeaves WHERE id = \(last)")
        server = try await Self.restart(world, server)
        #expect(try await world.rampart(["signup", "--user", "dave", "--server-info", info, "--username", "dave", "--password-stdin"],
                                  stdin: "dave pw 1\n").status == 0)
        let dropped = try await Self.witness(world, witness, info)
        #expect(dropped.status == Self.tampered, "\(dropped.stdout) \(dropped.stderr)")
        await #expect(try Self.send(world, to: "bob@rampart.test").status == Self.keyNotInLog)
    }
}
