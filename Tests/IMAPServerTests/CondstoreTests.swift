import Foundation
import Testing
@testable import IMAPServer

/// CONDSTORE (RFC 7162 §3.1) over the in-memory backend.
struct CondstoreTests {
    @Test func selectReportsHighestModSeqAndFetchGivesEachMessagesModSeq() async throws {
        let out = lines(try await converse("a LOGIN alice pw\r\nb SELECT INBOX (CONDSTORE)\r\nc FETCH 1:3 (UID MODSEQ)\r\nd STATUS INBOX (HIGHESTMODSEQ)\r\n"))
        // Three appends: mod-sequences 2, 3, 4.
        #expect(out.contains("* OK [HIGHESTMODSEQ 4] Highest mod-sequence"))
        #expect(out.contains("* 1 FETCH (UID 1 MODSEQ (2))") && out.contains("* 3 FETCH (UID 3 MODSEQ (4))"))
        #expect(out.contains("* STATUS INBOX (HIGHESTMODSEQ 4)"))
    }

    @Test func changedSinceReturnsOnlyMessagesChangedLater() async throws {
        let out = lines(try await converse("""
        a LOGIN alice pw\r
        b ENABLE CONDSTORE\r
        c SELECT INBOX\r
        d STORE 2 +FLAGS (\\Flagged)\r
        e UID FETCH 1:* (FLAGS) (CHANGEDSINCE 4)\r
        f SEARCH MODSEQ 5\r
        g SEARCH MODSEQ "/flags/\\\\flagged" all 3\r

        """))
        #expect(out.contains("* ENABLED CONDSTORE"))
        #expect(out.contains("* 2 FETCH (FLAGS (\\Flagged) MODSEQ (5))"))
        #expect(out.contains("* 2 FETCH (UID 2 FLAGS (\\Flagged) MODSEQ (5))"))
        #expect(!out.contains { $0.hasPrefix("* 1 FETCH (UID 1") || $0.hasPrefix("* 3 FETCH (UID 3") })
        #expect(out.contains("* SEARCH 2 (MODSEQ 5)"))
        #expect(out.contains("* SEARCH 2 3 (MODSEQ 5)"))
    }

    @Test func unchangedSinceStoresOnlyUnchangedMessagesAndNamesTheOthers() async throws {
        let out = lines(try await converse("""
        a LOGIN alice pw\r
        b SELECT INBOX\r
        c STORE 1:3 (UNCHANGEDSINCE 3) +FLAGS.SILENT (\\Answered)\r
        d FETCH 1:3 FLAGS\r

        """))
        // Messages 1 (2) and 2 (3) are unchanged since 3; message 3 (4) is not.
        #expect(out.contains("c OK [MODIFIED 3] STORE completed"))
        #expect(out.contains("* 1 FETCH (FLAGS (\\Seen \\Answered) MODSEQ (5))"))
        #expect(out.contains("* 3 FETCH (FLAGS (\\Deleted) MODSEQ (4))"))
    }

    @Test func qresyncAndUnknownModifiersAreRefusedWithASentence() async throws {
        let out = lines(try await converse("a LOGIN alice pw\r\nb SELECT INBOX (QRESYNC (1 2))\r\nc SELECT INBOX\r\nd FETCH 1 FLAGS (VANISHED)\r\n"))
        #expect(out.contains("b BAD QRESYNC is not offered by this server"))
        #expect(out.contains("d BAD Unknown FETCH modifier (CHANGEDSINCE is the one offered)"))
    }
}
