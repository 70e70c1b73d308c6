import Foundation
import RampartBenchmarks
import GRDB
import RampartCore
import SealedStore

/// A benchmark that could not check its own work (rows read back ≠ rows written).
struct StoreBenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The store benchmark: the sealed store against the same schema in plain GRDB, interleaved in
/// one run (`rampart-dev bench store`). Kept free of the command-line layer.
struct StoreBenchmark {
    var messages = 100_000
    var batch = 1_000
    var pointReads = 10_000
    var queries = 300
    var rounds = 5
    var directory: String?

    func run() throws {
        let scratch = directory.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("rampart-bench-\(UUID().uuidString)")
        try PrivateFiles.ensurePrivateDirectory(scratch)
        defer { if directory == nil { try? FileManager.default.removeItem(at: scratch) } }

        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
            .joined(separator: " ") ?? "?"
        print("machine: \(Self.machine()); load average \(load)")
        print("ratios: sealed time / plain GRDB time on the same schema, measured interleaved in this run")
        var corpus = BenchCorpus(seed: 42)
        let all = (0..<messages).map { corpus.message($0) }
        print("corpus: \(messages) messages, \(corpus.vocabulary.count) words, ~\(BenchCorpus.bodyWords) body words each")

        let session = MainKeySession(userID: "bench")
        session.unlock(with: .generate())
        var sealed = try SealedStore(files: StoreFiles(root: scratch.appendingPathComponent("sealed")), keys: session)
        let plain = try PlainMailBaseline(path: scratch.appendingPathComponent("plain.sqlite").path)

        // Plain and sealed work is interleaved (batch by batch, page by page, id by id) so that
        // both see the same machine load; the ratio is what matters.
        let batches = stride(from: 0, to: all.count, by: batch).map { Array(all[$0..<min($0 + batch, all.count)]) }
        var plainInsert = 0.0, sealedInsert = 0.0
        var insertRatios: [Double] = []
        for chunk in batches {
            let plainTime = try measure { try plain.insert(chunk) }
            let sealedTime = try measure { try sealed.mail.insert(messages: chunk) }
            plainInsert += plainTime
            sealedInsert += sealedTime
            insertRatios.append(sealedTime / plainTime)
        }
        report("insert (with search index)", plain: plainInsert, sealed: sealedInsert, count: messages,
               ratios: insertRatios, unit: "batches")

        // First use of the messages table in a process: the row-set check (every row's key,
        // version and rowid against the authenticated digest), paid once per open store.
        sealed.close()
        let reopened = try SealedStore(files: StoreFiles(root: scratch.appendingPathComponent("sealed")), keys: session)
        let firstUse = try measure {
            _ = try reopened.mail.message(id: "m0")
            _ = try reopened.mail.messages(label: "inbox", limit: 1)
        }
        print(String(format: "first reads after opening (row-set check of %d messages and %d label links): %.1f ms (once per process)",
                     messages, messages * 2, firstUse * 1_000))
        sealed = reopened

        var plainRead = 0, sealedRead = 0
        var plainList = 0.0, sealedList = 0.0
        var listRatios: [Double] = []
        for _ in 0..<max(1, rounds) {
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
            listRatios.append(sealedTime / plainTime)
        }
        guard plainRead == messages, sealedRead == messages else {
            throw StoreBenchError("read back \(plainRead) plain / \(sealedRead) sealed of \(messages)")
        }
        report("read all by label (pages of 1000, best round)", plain: plainList, sealed: sealedList, count: messages,
               ratios: listRatios, unit: "rounds")

        var generator = SplitMix64(seed: 7)
        let ids = (0..<pointReads).map { _ in "m\(Int(generator.next() % UInt64(messages)))" }
        var plainPoint = 0.0, sealedPoint = 0.0
        var pointRatios: [Double] = []
        for _ in 0..<max(1, rounds) {
            var plainRound = 0.0, sealedRound = 0.0
            for id in ids {
                plainRound += try measure { _ = try plain.message(id: id) }
                sealedRound += try measure { _ = try sealed.mail.message(id: id) }
            }
            pointRatios.append(sealedRound / plainRound)
            plainPoint += plainRound / Double(max(1, rounds))
            sealedPoint += sealedRound / Double(max(1, rounds))
        }
        report("read one by id (mean of rounds)", plain: plainPoint, sealed: sealedPoint, count: pointReads,
               ratios: pointRatios, unit: "rounds")

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

    static func machine() -> String {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        return "\(cpu), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory / (1 << 30)) GiB"
    }

    private func measure(_ body: () throws -> Void) throws -> Double {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        return elapsed.inSeconds
    }

    /// Prints totals and the median of the per-batch or per-round ratios (the result judged).
    private func report(_ name: String, plain: Double, sealed: Double, count: Int, ratios: [Double], unit: String) {
        let ratio = median(ratios)
        print(String(format: "%@: plain %.3f s (%.1f µs/msg), sealed %.3f s (%.1f µs/msg), total ratio %.2f×; "
                     + "median ratio of %d %@ %.2f× [%@] (goal ≤ 1.3×: %@)",
                     name, plain, plain / Double(count) * 1e6, sealed, sealed / Double(count) * 1e6, sealed / plain,
                     ratios.count, unit, ratio,
                     (ratios.count <= 10 ? ratios : [ratios.min() ?? 0, ratios.max() ?? 0])
                        .map { String(format: "%.2f", $0) }.joined(separator: " "),
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

                """ + MailStore.messageIndexesSQL + """
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

