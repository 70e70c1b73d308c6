import Testing
@testable import IMAPServer

struct FramerTests {
    @Test func aSimpleLineIsOneCommand() {
        var f = IMAPCommandFramer()
        #expect(f.feed(Array("a1 NOOP\r\n".utf8)) == [.command(Array("a1 NOOP".utf8))])
    }

    @Test func pipelinedCommandsSplitInAnyChunksGiveTheSameFrames() {
        let input = Array("a1 NOOP\r\na2 LOGIN {5}\r\nalice {2+}\r\npw\r\na3 CAPABILITY\n".utf8)
        var whole = IMAPCommandFramer()
        let expected = whole.feed(input)
        #expect(expected == [.command(Array("a1 NOOP".utf8)), .continuationRequest,
                             .command(Array("a2 LOGIN {5}\r\nalice {2+}\r\npw".utf8)), .command(Array("a3 CAPABILITY".utf8))])
        for size in 1...7 {
            var f = IMAPCommandFramer()
            var frames: [IMAPFrame] = []
            var i = 0
            while i < input.count { frames += f.feed(input[i..<min(input.count, i + size)]); i += size }
            #expect(frames == expected, "chunk size \(size)")
        }
    }

    @Test func aLiteralMayHoldCRLFAndBracesWithoutEndingTheCommand() {
        var f = IMAPCommandFramer()
        let frames = f.feed(Array("a APPEND INBOX {10+}\r\nx}\r\n{3}\r\nyz\r\n".utf8))
        #expect(frames == [.command(Array("a APPEND INBOX {10+}\r\nx}\r\n{3}\r\nyz".utf8))])
    }

    @Test func aTooLongLineIsSkippedWithMemoryBoundedAndTheNextCommandWorks() {
        let limits = IMAPLimits(maxLineLength: 1024)
        var f = IMAPCommandFramer(limits: limits)
        var frames = f.feed(Array("t9 NOOP ".utf8))
        // 1 MB without CRLF, in pieces: skipped as it arrives (nothing buffered), answered at its end.
        for _ in 0..<256 { frames += f.feed([UInt8](repeating: 0x41, count: 4096)) }
        #expect(frames.isEmpty)
        frames = f.feed(Array("AAAA\r\nt10 NOOP\r\n".utf8))
        #expect(frames == [.rejected(tag: "t9", .lineTooLong(limit: 1024)), .command(Array("t10 NOOP".utf8))])
    }

    @Test func aTooLargeSynchronizingLiteralIsRefusedBeforeTheClientSendsIt() {
        var f = IMAPCommandFramer(limits: IMAPLimits(maxLiteralSize: 100))
        #expect(f.feed(Array("a APPEND INBOX {101}\r\n".utf8)) == [.rejected(tag: "a", .literalTooLarge(size: 101, limit: 100))])
        #expect(f.feed(Array("b NOOP\r\n".utf8)) == [.command(Array("b NOOP".utf8))])
    }

    @Test func aTooLargeNonSynchronizingLiteralIsSkippedThenRejected() {
        var f = IMAPCommandFramer(limits: IMAPLimits(maxLiteralSize: 10, maxDiscardedLiteralSize: 1000))
        let body = String(repeating: "z", count: 500)
        let frames = f.feed(Array("a APPEND INBOX {500+}\r\n\(body)\r\nb NOOP\r\n".utf8))
        #expect(frames == [.rejected(tag: "a", .literalTooLarge(size: 500, limit: 10)), .command(Array("b NOOP".utf8))])
    }

    @Test func aHugeNonSynchronizingLiteralEndsTheConnection() {
        var f = IMAPCommandFramer()
        #expect(f.feed(Array("a APPEND INBOX {99999999999999999999999+}\r\nxx".utf8))
                == [.fatal(.literalTooLarge(size: nil, limit: IMAPLimits.default.maxLiteralSize))])
        #expect(f.isClosed)
        #expect(f.feed(Array("b NOOP\r\n".utf8)).isEmpty)
    }

    @Test func aHugeSynchronizingLiteralIsRefusedAndTheConnectionGoesOn() {
        var f = IMAPCommandFramer()
        #expect(f.feed(Array("a LOGIN {18446744073709551616}\r\nb NOOP\r\n".utf8))
                == [.rejected(tag: "a", .literalTooLarge(size: nil, limit: IMAPLimits.default.maxLiteralSize)), .command(Array("b NOOP".utf8))])
    }

    @Test func bytesPipelinedAfterStartTLSAreDropped() {
        var f = IMAPCommandFramer()
        #expect(f.feed(Array("a STARTTLS\r\nb LOGIN alice pw\r\n".utf8)) == [.command(Array("a STARTTLS".utf8))])
        #expect(f.feed(Array("c NOOP\r\n".utf8)) == [.command(Array("c NOOP".utf8))])
    }

    @Test func aCommandLargerThanTheLimitIsRejected() {
        var f = IMAPCommandFramer(limits: IMAPLimits(maxLineLength: 1024, maxLiteralSize: 1000, maxCommandSize: 1500))
        let x = String(repeating: "x", count: 900)
        let frames = f.feed(Array("a LOGIN {900+}\r\n\(x) {900+}\r\n\(x)\r\nb NOOP\r\n".utf8))
        #expect(frames == [.rejected(tag: "a", .commandTooLarge(limit: 1500)), .command(Array("b NOOP".utf8))])
    }
}
