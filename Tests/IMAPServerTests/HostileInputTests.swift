import Foundation
import RampartTestSupport
import Testing
@testable import IMAPServer

/// Mutated and random client input, deterministic (SplitMix64): the framer, the parser and whole
/// sessions never trap, every complete command gets exactly one tagged answer, and a final NOOP
/// still works.
struct HostileInputTests {
    static let corpus = [
        "a LOGIN alice pw", "b SELECT INBOX", "c FETCH 1:* (FLAGS UID ENVELOPE BODYSTRUCTURE BODY.PEEK[1.MIME]<0.10>)",
        "d UID SEARCH OR NOT DELETED HEADER Subject x SINCE 1-Jan-2026", "e STORE 1 +FLAGS.SILENT (\\Seen)",
        "f UID MOVE 1:2 Trash", "g APPEND INBOX (\\Draft) {5+}\r\nhello", "h LIST \"\" %", "i STATUS INBOX (MESSAGES)",
        "j UID COPY 2 Archive", "k EXPUNGE", "l ID NIL", "m FETCH 2 BODY[HEADER.FIELDS.NOT (To)]", "n NOOP",
    ]

    @Test func mutatedCommandsAreAnsweredOnceEachAndTheSessionSurvives() async throws {
        var random = SplitMix64(seed: 0x1AB5)
        var reachedTheEnd = 0
        for round in 0..<40 {
            var commands: [String] = []
            for _ in 0..<12 {
                var bytes = Array(Self.corpus[random.next(Self.corpus.count)].utf8)
                for _ in 0..<random.next(4) where !bytes.isEmpty {
                    let at = random.next(bytes.count)
                    switch random.next(4) {
                    case 0: bytes[at] = UInt8(random.next(256))
                    case 1: bytes.remove(at: at)
                    case 2: let marks = Array("{}()[]<>\"\\*%: ".utf8); bytes.insert(marks[random.next(marks.count)], at: at)
                    default: bytes.insert(contentsOf: bytes[at...].prefix(8), at: at)
                    }
                }
                // Keep each mutated command on one line, and its tag unique and valid.
                bytes.removeAll { $0 == 0x0A || $0 == 0x0D }
                if let space = bytes.firstIndex(of: 0x20) { bytes.removeSubrange(0..<space) } else { bytes.insert(0x20, at: 0) }
                commands.append("t\(commands.count)" + String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\u{FFFD}", with: "\u{FF}"))
            }
            let input = "a0 LOGIN alice pw\r\n" + commands.joined(separator: "\r\n") + "\r\nzz NOOP\r\n"
            // A mutated literal may swallow following lines: the only promise is that nothing traps
            // and that the connection either goes on or ends with BYE.
            let out = lines(try await converse(bytes: Array(input.utf8), limits: IMAPLimits(maxLineLength: 2048, maxLiteralSize: 4096),
                                               chunk: 1 + random.next(64)))
            if out.contains(where: { $0.hasPrefix("zz ") }) {
                #expect(out.contains("zz OK NOOP completed"), "round \(round): \(out.suffix(3))")
                reachedTheEnd += 1
            } else {
                // Only a literal announced by a mutation may have swallowed the rest, or a BYE ended it.
                #expect(input.contains("{") || out.last?.hasPrefix("* BYE") == true, "round \(round): \(out.suffix(3))")
            }
            for tag in commands.indices.map({ "t\($0) " }) {
                #expect(out.filter { $0.hasPrefix(tag) }.count <= 1, "round \(round): \(tag) answered twice")
            }
        }
        #expect(reachedTheEnd >= 20, "most rounds must reach the final NOOP")
    }

    @Test func randomBytesNeverTrapTheFramerOrTheParser() {
        var random = SplitMix64(seed: 7)
        var framer = IMAPCommandFramer(limits: IMAPLimits(maxLineLength: 1024, maxLiteralSize: 2048, maxCommandSize: 8192))
        var commands = 0
        for _ in 0..<2000 {
            let alphabet = Array("a1 {}+\r\n()[]<>\"\\*% 0123456789FETCHUIDSEARCH.:".utf8)
            let chunk = (0..<random.next(200)).map { _ in random.next(5) == 0 ? UInt8(random.next(256)) : alphabet[random.next(alphabet.count)] }
            for frame in framer.feed(chunk) {
                if case .command(let bytes) = frame {
                    #expect(bytes.count <= 8192)
                    _ = try? IMAPCommandParser.parse(bytes)
                    commands += 1
                }
            }
            if framer.isClosed { framer = IMAPCommandFramer(limits: framer.limits) }
        }
        #expect(commands > 100)
    }
}
