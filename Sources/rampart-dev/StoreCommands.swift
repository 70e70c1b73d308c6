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
    @Option(help: "Scratch folder (default: a new temporary folder, removed at the end).") var directory: String?

    func run() throws {
        #if DEBUG
        print("warning: debug build; run `swift build -c release` and .build/release/rampart bench store for real numbers")
        #endif
        let scratch = directory.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("rampart-bench-\(UUID().uuidString)")
        try PrivateFiles.ensurePrivateDirectory(scratch)
        defer { if directory == nil { try? FileManager.default.removeItem(at: scratch) } }

        var corpus = BenchCorpus(seed: 42)
        let all = (0..<messages).map { corpus.message($0) }
        print("corpus: \(messages) messages, \(corpus.vocabulary.count) words, ~\(BenchCorpus.bodyWords) body words each")

        let session = MainKeySession(userID: "bench")
        session.unlock(with: .generate())
        let sealed = try SealedStore(files: StoreFiles(root: scratch.appendingPathComponent("sealed")), keys: session)
        let plain = try PlainMailBaseline(path: scratch.appendingPathComponent("plain.sqlite").path)

        // Plain and sealed work is interleaved (batch by batch, page by page, id by id) so that
        // both see the same machine load; the ratio is what matters.
        let batches = stride(from: 0, to: all.count, by: batch).map { Array(all[$0..<min($0 + batch, all.count)]) }
        var plainInsert = 0.0, sealedInsert = 0.0
        for chunk in batches {
            plainInsert += try measure { try plain.insert(chunk) }
            sealedInsert += try measure { try sealed.mail.insert(messages: chunk) }
        }
        report("insert (with search index)", plain: plainInsert, sealed: sealedInsert, count: messages)

        var plainRead = 0, sealedRead = 0
        var plainList = 0.0, sealedList = 0.0
        for _ in 0..<3 {
            plainRead = 0
            sealedRead = 0
            var plainBefore = Int64.max
            var sealedBefore: Int64? = nil
            var plainTime = 0.0, sealedTime = 0.0
            while true {
                var plainPage: [MailMessage] = []
                var sealedPage: [MailMessage] = []
                plainTime += try measure { plainPage = try plain.page(label: "inbox", limit: 1_000, before: plainBefore) }
                sealedTime += try measure {
                    sealedPage = try sealed.mail.messages(label: "inbox", limit: 1_000, before: sealedBefore)
                }
                plainRead += plainPage.count
                sealedRead += sealedPage.count
                guard let last = sealedPage.last, sealedPage.count == 1_000, let plainLast = plainPage.last else { break }
                sealedBefore = last.time
                plainBefore = plainLast.time
            }
            plainList = plainList == 0 ? plainTime : min(plainList, plainTime)
            sealedList = sealedList == 0 ? sealedTime : min(sealedList, sealedTime)
        }
        guard plainRead == messages, sealedRead == messages else {
            throw ValidationError("read back \(plainRead) plain / \(sealedRead) sealed of \(messages)")
        }
        report("read all by label (pages of 1000, best of 3)", plain: plainList, sealed: sealedList, count: messages)

        var generator = SplitMix64(seed: 7)
        let ids = (0..<pointReads).map { _ in "m\(Int(generator.next() % UInt64(messages)))" }
        var plainPoint = 0.0, sealedPoint = 0.0
        for id in ids {
            plainPoint += try measure { _ = try plain.message(id: id) }
            sealedPoint += try measure { _ = try sealed.mail.message(id: id) }
        }
        report("read one by id", plain: plainPoint, sealed: sealedPoint, count: pointReads)

        // One-word queries over mid-frequency words (Zipf ranks 50–2000), newest 50 ids.
        let words = (0..<queries).map { _ in corpus.vocabulary[50 + Int(generator.next() % 1_950)] }
        var hits = 0
        var sealedTimes: [Double] = [], plainTimes: [Double] = []
        for word in words {
            var found: [String] = []
            sealedTimes.append(try measure { found = try sealed.mail.search(MailSearchQuery(words: [word])) })
            hits += found.count
            plainTimes.append(try measure { _ = try plain.search(word: word) })
        }
        let frequent = corpus.vocabulary[0]
        var frequentTimes: [Double] = []
        var frequentHits = 0
        for _ in 0..<20 {
            frequentTimes.append(try measure {
                frequentHits = try sealed.mail.search(MailSearchQuery(words: [frequent])).count
            })
        }
        let matches = try sealed.mail.search(MailSearchQuery(words: [words[0]], limit: messages)).count
        print(String(format: "search one word (blind index, %d queries, limit 50): median %.3f ms, p95 %.3f ms "
                     + "(plain-text index: median %.3f ms); mean hits returned %.1f; e.g. '%@' matches %d messages",
                     queries, median(sealedTimes) * 1_000, percentile(sealedTimes, 0.95) * 1_000,
                     median(plainTimes) * 1_000, Double(hits) / Double(max(1, queries)), words[0], matches))
        print(String(format: "search most frequent word '%@' (limit 50, %d returned): median %.3f ms",
                     frequent, frequentHits, median(frequentTimes) * 1_000))
        print(String(format: "goal: search median < 10 ms → %@", median(sealedTimes) < 0.010 ? "met" : "NOT met"))
        let sealedSize = directorySize(scratch.appendingPathComponent("sealed"))
        let plainSize = directorySize(scratch).subtracting(sealedSize)
        print(String(format: "disk: sealed %.1f MB, plain %.1f MB (ratio %.2f×)",
                     Double(sealedSize) / 1e6, Double(plainSize) / 1e6, Double(sealedSize) / Double(max(1, plainSize))))
        sealed.close()
        try plain.close()
    }

    private func measure(_ body: () throws -> Void) throws -> Double {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    private func report(_ name: String, plain: Double, sealed: Double, count: Int) {
        let ratio = sealed / plain
        print(String(format: "%@: plain %.3f s (%.1f µs/msg), sealed %.3f s (%.1f µs/msg), ratio %.2f× (goal ≤ 1.3×: %@)",
                     name, plain, plain / Double(count) * 1e6, sealed, sealed / Double(count) * 1e6, ratio,
                     ratio <= 1.3 ? "met" : "NOT met"))
    }

    private func median(_ values: [Double]) -> Double { percentile(values, 0.5) }
    private func percentile(_ values: [Double], _ p: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
    }

    private func directorySize(_ url: URL) -> Int64 {
        var total: Int64 = 0
        if let enumerator = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.fileSizeKey]) {
            for case let file as URL in enumerator {
                total += Int64((try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
            }
        }
        return total
    }
}

extension Int64 {
    fileprivate func subtracting(_ other: Int64) -> Int64 { self - other }
}

/// The baseline: the same tables, statements and search terms in plain GRDB, nothing sealed.
final class PlainMailBaseline {
    private let pool: DatabasePool

    init(path: String) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA secure_delete = ON")
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE messages (id TEXT PRIMARY KEY NOT NULL, conversation_id TEXT NOT NULL,
                    time INTEGER NOT NULL, size INTEGER NOT NULL, flags INTEGER NOT NULL, label_ids TEXT NOT NULL,
                    subject TEXT NOT NULL, sender TEXT NOT NULL, recipients TEXT NOT NULL, body TEXT NOT NULL);
                CREATE INDEX messages_by_time ON messages (time);
                CREATE INDEX messages_by_conversation ON messages (conversation_id, time);
                CREATE TABLE message_labels (label_id TEXT NOT NULL, time INTEGER NOT NULL,
                    message_rowid INTEGER NOT NULL, PRIMARY KEY (label_id, time, message_rowid)) WITHOUT ROWID;
                CREATE INDEX message_labels_by_message ON message_labels (message_rowid);
                CREATE TABLE search_terms (term TEXT NOT NULL, message_rowid INTEGER NOT NULL,
                    PRIMARY KEY (term, message_rowid)) WITHOUT ROWID;
                CREATE INDEX search_terms_by_message ON search_terms (message_rowid);
                """)
        }
    }

    func close() throws { try pool.close() }

    func insert(_ messages: [MailMessage]) throws {
        try pool.write { db in
            for message in messages {
                if let previous = try Int64.fetchOne(db.cachedStatement(sql: "SELECT rowid FROM messages WHERE id = ?"),
                                                     arguments: [message.id]) {
                    try db.cachedStatement(sql: "DELETE FROM message_labels WHERE message_rowid = ?").execute(arguments: [previous])
                    try db.cachedStatement(sql: "DELETE FROM search_terms WHERE message_rowid = ?").execute(arguments: [previous])
                }
                try db.cachedStatement(sql: """
                    INSERT OR REPLACE INTO messages (id, conversation_id, time, size, flags, label_ids, subject, sender, recipients, body)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """).execute(arguments: [
                        message.id, message.conversationID, message.time, message.size, message.flags.rawValue,
                        message.labelIDs.joined(separator: ","), message.subject,
                        message.sender.name + "\u{1F}" + message.sender.address,
                        message.recipients.map { $0.name + "\u{1F}" + $0.address }.joined(separator: "\u{1E}"),
                        message.body,
                    ])
                let rowid = db.lastInsertedRowID
                let labels = try db.cachedStatement(sql: "INSERT OR IGNORE INTO message_labels (label_id, time, message_rowid) VALUES (?, ?, ?)")
                for label in Set(message.labelIDs) { try labels.execute(arguments: [label, message.time, rowid]) }
                let terms = try db.cachedStatement(sql: "INSERT OR IGNORE INTO search_terms (term, message_rowid) VALUES (?, ?)")
                for term in SearchTerms.terms(for: message) {
                    try terms.execute(arguments: [String(UnicodeScalar(term.kind.rawValue)) + term.text, rowid])
                }
            }
        }
    }

    private static func decode(_ row: Row) -> MailMessage {
        let sender = (row["sender"] as String).split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
        let recipients = (row["recipients"] as String).split(separator: "\u{1E}").map { part -> MailAddress in
            let pieces = part.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
            return MailAddress(name: pieces.first ?? "", address: pieces.last ?? "")
        }
        let labels = row["label_ids"] as String
        return MailMessage(id: row["id"], conversationID: row["conversation_id"], time: row["time"], size: row["size"],
                           flags: MessageFlags(rawValue: row["flags"]), labelIDs: labels.split(separator: ",").map(String.init),
                           subject: row["subject"], sender: MailAddress(name: sender.first ?? "", address: sender.last ?? ""),
                           recipients: recipients, body: row["body"])
    }

    func page(label: String, limit: Int, before: Int64) throws -> [MailMessage] {
        try pool.read { db in
            try Row.fetchAll(db.cachedStatement(sql: """
                SELECT m.* FROM message_labels l JOIN messages m ON m.rowid = l.message_rowid
                WHERE l.label_id = ? AND l.time < ? ORDER BY l.time DESC, l.message_rowid DESC LIMIT ?
                """), arguments: [label, before, limit]).map(Self.decode)
        }
    }

    func message(id: String) throws -> MailMessage? {
        try pool.read { db in
            try Row.fetchOne(db.cachedStatement(sql: "SELECT * FROM messages WHERE id = ?"), arguments: [id]).map(Self.decode)
        }
    }

    func search(word: String) throws -> [String] {
        try pool.read { db in
            try String.fetchAll(db.cachedStatement(sql: """
                SELECT id FROM messages WHERE rowid IN (SELECT message_rowid FROM search_terms WHERE term IN (?))
                ORDER BY time DESC, rowid DESC LIMIT 50
                """), arguments: ["w" + word])
        }
    }
}

/// A deterministic corpus: Zipf-distributed words from a generated vocabulary.
struct BenchCorpus {
    static let bodyWords = 40
    let vocabulary: [String]
    private let cumulative: [Double]
    private var random: SplitMix64

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
        let syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "de", "va", "zu", "fe", "gi", "ho", "ju", "be",
                         "co", "da", "el", "fi", "ga", "hu", "in", "ja"]
        var words: [String] = []
        var seen = Set<String>()
        var generator = SplitMix64(seed: seed &+ 1)
        while words.count < 20_000 {
            let length = 2 + Int(generator.next() % 3)
            let word = (0..<length).map { _ in syllables[Int(generator.next() % UInt64(syllables.count))] }.joined()
            if seen.insert(word).inserted { words.append(word) }
        }
        vocabulary = words
        var total = 0.0
        cumulative = (1...words.count).map { rank in total += 1.0 / Double(rank); return total }
    }

    private mutating func word() -> String {
        let target = Double(random.next() % 1_000_000_000) / 1e9 * cumulative[cumulative.count - 1]
        var low = 0, high = cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] < target { low = middle + 1 } else { high = middle }
        }
        return vocabulary[low]
    }

    mutating func message(_ index: Int) -> MailMessage {
        let subject = (0..<5).map { _ in word() }.joined(separator: " ")
        let body = (0..<BenchCorpus.bodyWords).map { _ in word() }.joined(separator: " ")
        let sender = Int(random.next() % 500)
        return MailMessage(
            id: "m\(index)", conversationID: "c\(index / 4)", time: Int64(1_600_000_000 + index * 37), size: Int64(body.utf8.count),
            flags: index.isMultiple(of: 3) ? [.unread] : [], labelIDs: ["inbox", "all"], subject: subject,
            sender: MailAddress(name: "Sender \(sender)", address: "sender\(sender)@example.org"),
            recipients: [MailAddress(name: "Me", address: "me@example.org")], body: body)
    }
}

/// A small, fast, deterministic random number generator (SplitMix64).
struct SplitMix64 {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
