import Foundation
import Testing
@testable import IMAPServer

/// What a mail program's sync costs the session: UID sets found by binary search (the same
/// messages as a scan), searches that read no message when flags decide, and header keys that
/// parse only the header.
struct SyncCostTests {
    /// 40 messages, every third flagged `\Deleted` and expunged first: UIDs 1…40 with gaps.
    func gappedMailbox() async throws -> (InMemoryIMAPBackend, [UInt32]) {
        let backend = InMemoryIMAPBackend()
        await backend.addUser("alice", password: "pw")
        var kept: [UInt32] = []
        for n in 1...40 {
            let deleted = n % 3 == 0
            let uid = try await backend.deliver(Array(Sample.plain.utf8), to: "alice", flags: deleted ? ["\\Deleted"] : [])
            if !deleted { kept.append(uid) }
        }
        return (backend, kept)
    }

    /// The UIDs a set names among `uids` (RFC 3501 §9: `*` is the largest UID, a range may be
    /// written high to low), by scanning every message.
    func naive(_ set: [(UInt32?, UInt32?)], _ uids: [UInt32]) -> [UInt32] {
        let largest = uids.last ?? 0
        return uids.filter { uid in
            set.contains { a, b in
                let x = a ?? largest, y = b ?? largest
                return uid >= min(x, y) && uid <= max(x, y)
            }
        }
    }

    func text(_ set: [(UInt32?, UInt32?)]) -> String {
        set.map { a, b in
            let f: (UInt32?) -> String = { $0.map(String.init) ?? "*" }
            return a == b ? f(a) : "\(f(a)):\(f(b))"
        }.joined(separator: ",")
    }

    @Test func uidSetsNameTheSameMessagesAsAScanOfTheMailbox() async throws {
        let (backend, kept) = try await gappedMailbox()
        var random = SystemRandomNumberGenerator()
        var sets: [[(UInt32?, UInt32?)]] = [
            [(1, nil)], [(nil, nil)], [(50, nil)], [(nil, 7)], [(3, 3)], [(41, 41)], [(9, 2)], [(UInt32.max, 1)],
            [(UInt32.max, UInt32.max)], [(1, 5), (3, 8), (20, 20), (19, 25), (nil, 38)], [(30, 10), (12, 14), (2, 2), (2, 2)],
        ]
        for _ in 0..<25 {
            sets.append((0..<Int.random(in: 1...6, using: &random)).map { _ in
                let a: UInt32? = Bool.random(using: &random) && Int.random(in: 0..<5, using: &random) == 0 ? nil : UInt32.random(in: 1...45, using: &random)
                return (a, Bool.random(using: &random) ? a : UInt32.random(in: 1...45, using: &random))
            })
        }
        var input = "a LOGIN alice pw\r\nb SELECT INBOX\r\nc EXPUNGE\r\n"
        for (i, set) in sets.enumerated() { input += "f\(i) UID FETCH \(text(set)) (FLAGS)\r\n" }
        let out = lines(try await converse(input, backend: backend))
        // Answers come in command order; each FETCH line before its tagged OK.
        var answered: [[UInt32]] = []
        var current: [UInt32] = []
        for line in out.drop(while: { !$0.hasPrefix("c OK") }).dropFirst() {
            if line.hasPrefix("* "), let range = line.range(of: "UID ") {
                current.append(UInt32(line[range.upperBound...].prefix { $0.isNumber })!)
            } else if line.hasPrefix("f") {
                #expect(line.contains("OK UID FETCH completed"), "\(line)")
                answered.append(current); current = []
            }
        }
        #expect(answered.count == sets.count)
        for (set, got) in zip(sets, answered) {
            #expect(got == naive(set, kept), "UID FETCH \(text(set))")
        }
    }

    @Test func searchesDecidedByFlagsReadNoMessageAndHeaderKeysFindTheSame() async throws {
        let backend = try await sampleBackend()
        let out = lines(try await converse("a LOGIN alice pw\r\nb SELECT INBOX\r\nc UID SEARCH NOT DELETED\r\nd SEARCH SEEN UNDELETED\r\n"
            + "e SEARCH OR DELETED SEEN\r\n", backend: backend))
        #expect(out.filter { $0.hasPrefix("* SEARCH") } == ["* SEARCH 1 2", "* SEARCH 1", "* SEARCH 1 3"])
        #expect(await backend.messageReads == 0)
        // A header key after a flag key: only the messages the flag leaves in are read.
        let out2 = lines(try await converse("a LOGIN alice pw\r\nb SELECT INBOX\r\nc SEARCH SUBJECT report UNDELETED\r\n"
            + "d SEARCH OR SUBJECT lunch BODY noon\r\ne SEARCH TEXT jurgen NOT DELETED\r\nf SEARCH FROM alice SENTSINCE 29-May-2026\r\n",
            backend: backend))
        #expect(out2.filter { $0.hasPrefix("* SEARCH") } == ["* SEARCH 2", "* SEARCH 1", "* SEARCH 2", "* SEARCH"])
        // Each message at most once per SEARCH, and only those UNDELETED or NOT DELETED left in.
        #expect(await backend.messageReads == 2 + 3 + 2 + 3)
    }

    @Test func aSearchThatWouldReadMoreThanItsBoundSaysHowToNarrowIt() async throws {
        let limits = IMAPLimits(maxSearchBytes: Sample.plain.utf8.count + 10)
        let out = lines(try await converse("a LOGIN alice pw\r\nb SELECT INBOX\r\nc SEARCH TEXT noon\r\nd SEARCH 1 TEXT noon\r\n"
            + "e SEARCH DELETED\r\nf NOOP\r\n", limits: limits))
        #expect(out.contains { $0.hasPrefix("c NO [LIMIT] This search would read more than") && $0.contains("narrow it with SINCE or BEFORE") })
        // Keys that need no bytes narrow first: message 1 alone is within the bound.
        #expect(out.filter { $0.hasPrefix("* SEARCH") } == ["* SEARCH 1", "* SEARCH 3"])
        #expect(out.last == "f OK NOOP completed")
    }
}
