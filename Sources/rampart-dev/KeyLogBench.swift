import ArgumentParser
import Foundation
import RampartCLIKit
import TransparencyLog

/// `rampart-dev bench keylog`: the key-transparency tree at the size of a real directory, against
/// Go's `golang.org/x/mod/sumdb/tlog` doing the same work in the same run.
///
/// Trust-model row **the user's private and public keys**: every key change appends a leaf, and a
/// client checks an inclusion proof before it encrypts; both must stay cheap at 100,000
/// addresses (targets: a tree update ≤ 10 ms, a lookup's proof made and checked ≤ 5 ms). What is
/// timed is the tree alone (in memory), not a database write or the network.
struct BenchKeyLog: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keylog",
        abstract: "Time appends and inclusion proofs (made and checked) of the key-transparency tree against Go's sumdb/tlog.",
        discussion: "The baseline is scripts/kt/tlog-peer (Go, GOPATH mode against Debian's golang-golang-x-mod-dev); scripts/kt/bench.sh builds it and passes --go-peer. Build with -c release for meaningful numbers.")

    @Option(help: "Leaves in the tree.") var leaves = 100_000
    @Option(help: "Lookups (inclusion proof made and checked) to time.") var lookups = 2_000
    @Option(name: .customLong("go-peer"), help: "The built scripts/kt/tlog-peer (without it, no baseline is run).") var goPeer: String?
    @Option(help: "Key changes to time on the server's path (leaf, SQLite transaction, tree, signed checkpoint).") var changes = 200

    func validate() throws {
        guard leaves >= 2, lookups >= 1, changes >= 1 else {
            throw ValidationError("--leaves must be at least 2, --lookups and --changes at least 1.")
        }
    }

    func run() throws {
        try reportingErrors {
            let leafData = (0..<leaves).map { Array("key change \($0)".utf8) }
            var tree = MerkleTree()
            let appendStart = ContinuousClock.now
            for leaf in leafData { tree.append(leaf) }
            let appendNs = Self.nanoseconds(ContinuousClock.now - appendStart) / Double(leaves)
            let root = try tree.root()
            let size = UInt64(leaves)
            let lookupStart = ContinuousClock.now
            for j in 0..<lookups {
                let index = UInt64((j * 7919) % leaves)
                let proof = try tree.inclusionProof(index: index, size: size)
                try MerkleProof.verifyInclusion(leafHash: LogHash.leaf(leafData[Int(index)]), index: index, size: size,
                                                proof: proof, root: root)
            }
            let lookupNs = Self.nanoseconds(ContinuousClock.now - lookupStart) / Double(lookups)
            print("rampart-dev bench keylog — \(leaves) leaves, \(lookups) lookups (tree in memory)")
            print(String(format: "Rampart: append %.2f us/leaf, lookup (prove + check) %.2f us", appendNs / 1000, lookupNs / 1000))
            print(String(format: "targets: update <= 10 ms (%@), lookup <= 5 ms (%@)",
                         appendNs <= 10_000_000 ? "met" : "NOT met", lookupNs <= 5_000_000 ? "met" : "NOT met"))
            let kt = try KeyTransparencyBench.run(addresses: leaves, changes: changes, lookups: lookups)
            print("Key transparency as the server and the client run it (\(leaves) addresses, no network):")
            print(String(format: "  server, per key change (leaf + SQLite transaction + tree + signed checkpoint): %.3f ms (target 10 ms: %@, %.0fx under)",
                         kt.changeMs, kt.changeMs <= 10 ? "met" : "NOT met", 10 / kt.changeMs))
            print(String(format: "  client, per lookup (server's proofs + signature, cosignature, consistency, inclusion checked): %.3f ms (target 5 ms: %@, %.0fx under)",
                         kt.lookupMs, kt.lookupMs <= 5 ? "met" : "NOT met", 5 / kt.lookupMs))
            guard let goPeer else {
                print("baseline: not run (give --go-peer, or run scripts/kt/bench.sh)")
                return
            }
            let go = try Self.runGo(goPeer, leaves: leaves, lookups: lookups)
            guard go.root == root.base64 else {
                throw ValidationError("Go's tree of the same leaves has another root (\(go.root) vs \(root.base64)): the comparison is void.")
            }
            print(String(format: "Go sumdb/tlog (same leaves, same root): append %.2f us/leaf, lookup %.2f us",
                         go.appendNs / 1000, go.lookupNs / 1000))
            print(String(format: "ratio (Go time / Rampart time, >= 1 means Rampart is as fast): append %.2fx, lookup %.2fx",
                         go.appendNs / appendNs, go.lookupNs / lookupNs))
        }
    }

    static func nanoseconds(_ duration: Duration) -> Double {
        duration.inSeconds * 1e9
    }

    static func runGo(_ path: String, leaves: Int, lookups: Int) throws -> (appendNs: Double, lookupNs: Double, root: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data("{\"mode\":\"bench\",\"count\":\(leaves),\"lookups\":\(lookups)}\n".utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0,
              let json = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let append = json["appendNs"] as? Double, let lookup = json["lookupNs"] as? Double, let root = json["root"] as? String else {
            throw ValidationError("The Go baseline at \(path) failed (status \(process.terminationStatus)): \(String(decoding: data, as: UTF8.self))")
        }
        return (append, lookup, root)
    }
}
