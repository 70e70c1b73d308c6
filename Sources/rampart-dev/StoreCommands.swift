import ArgumentParser
import RampartCLIKit
import Foundation
import GRDB
import RampartCore
import SealedStore

/// `rampart store …`: maintenance of the sealed store.
struct StoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "The sealed local store (mail and drive database).",
        subcommands: [StoreStressWriteCommand.self]
    )
}

/// Hidden: writes deterministic messages in transactions until killed, printing
/// `committed <last index>` after each commit. The crash test kills it with SIGKILL mid-transaction.
struct StoreStressWriteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stress-write",
        abstract: "Write messages in a loop (crash test; reads a hex MainKey on stdin).",
        shouldDisplay: false
    )

    @OptionGroup var hook: CrashHookOptions
    @Option(help: "Index of the first message.") var start: Int = 0
    @Option(help: "Number of messages (0 = until killed).") var count: Int = 0
    @Option(help: "Messages per transaction.") var batch: Int = 20

    func run() throws {
        let session = try hook.unlockedSession()
        try reportingErrors {
            let store = try SealedStore(files: StoreFiles(root: hook.rootURL), keys: session)
            var next = start
            while count == 0 || next < start + count {
                let size = count == 0 ? max(1, batch) : min(max(1, batch), start + count - next)
                let messages = (next..<(next + size)).map(MailMessage.stress)
                try store.mail.insert(messages: messages)
                next += messages.count
                FileHandle.standardOutput.write(Data("committed \(next - 1)\n".utf8))
            }
            store.close()
        }
    }
}

/// `rampart bench store`: the sealed store against the same schema in plain GRDB.
struct StoreBenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Insert, read and search N messages sealed vs plain GRDB; prints ratios (goal ≤ 1.3×, search < 10 ms)."
    )

    @Option(help: "Number of messages.") var messages: Int = 100_000
    @Option(help: "Messages per write transaction.") var batch: Int = 1_000
    @Option(help: "Random point reads by id.") var pointReads: Int = 10_000
    @Option(help: "One-word search queries.") var queries: Int = 300
    @Option(help: "Rounds of the read measurements (each prints its ratio; the median is the result).") var rounds: Int = 5
    @Option(help: "Scratch folder (default: a new temporary folder, removed at the end).") var directory: String?

    func run() throws {
        #if DEBUG
        print("warning: debug build; run `swift build -c release` and .build/release/rampart-dev bench store for real numbers")
        #endif
        try StoreBenchmark(messages: messages, batch: batch, pointReads: pointReads, queries: queries, rounds: rounds,
                           directory: directory).run()
    }
}
