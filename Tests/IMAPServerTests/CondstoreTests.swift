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

    @Test func unknownModifiersAndQResyncWithoutEnableAreRefusedWithASentence() async throws {
        let out = lines(try await converse("a LOGIN alice pw\r\nb SELECT INBOX (QRESYNC (1 2))\r\nc SELECT INBOX\r\nd FETCH 1 FLAGS (VANISHED)\r\n"
            + "e UID FETCH 1 FLAGS (CHANGEDSINCE 1 VANISHED)\r\nf ENABLE QRESYNC\r\ng FETCH 1 FLAGS (CHANGEDSINCE 1 VANISHED)\r\n"))
        #expect(out.contains("b BAD Send ENABLE QRESYNC before SELECT with QRESYNC"))
        #expect(out.contains("d BAD Unknown FETCH modifier (CHANGEDSINCE is the one offered)"))
        #expect(out.contains("e BAD Send ENABLE QRESYNC before FETCH with VANISHED"))
        #expect(out.contains("* ENABLED QRESYNC"))
        #expect(out.contains("g BAD VANISHED is for UID FETCH only"))
    }

    /// RFC 7162 §3.2: a client that knew the mailbox at mod-sequence 4 with UIDs 1:3 hears which
    /// vanished (by UID: there is no expunge history, so every missing UID it names) and which changed.
    @Test func qresyncTellsWhatVanishedAndChangedSinceTheClientsModSequence() async throws {
        let backend = try await sampleBackend()   // UIDs 1 (\Seen), 2, 3 (\Deleted); HIGHESTMODSEQ 4
        // Another connection: 3 expunged, 2 flagged, one new message (UID 4).
        _ = try await converse("a LOGIN alice pw\r\nb SELECT INBOX\r\nc EXPUNGE\r\nd STORE 2 +FLAGS (\\Flagged)\r\n", backend: backend)
        try await backend.deliver(Array(Sample.plain.utf8), to: "alice")
        let out = lines(try await converse("""
            a LOGIN alice pw\r
            b ENABLE QRESYNC\r
            c SELECT INBOX (QRESYNC (1 4 1:3))\r
            d UID FETCH 1:* (FLAGS) (CHANGEDSINCE 4 VANISHED)\r
            e STORE 1 +FLAGS (\\Deleted)\r
            f EXPUNGE\r
            g SELECT Sent (QRESYNC (999 1))\r
            h SELECT INBOX (QRESYNC (1 1 5:9,3))\r

            """, backend: backend))
        let select = Array(out.drop { !$0.hasPrefix("c ") && !$0.hasPrefix("* OK [HIGHESTMODSEQ") }.prefix(4))
        #expect(select.first?.hasPrefix("* OK [HIGHESTMODSEQ") == true)
        #expect(select.contains("* VANISHED (EARLIER) 3"), "\(select)")
        #expect(select.contains { $0.hasPrefix("* 2 FETCH (UID 2 FLAGS (\\Flagged) MODSEQ (") }, "\(select)")
        #expect(!select.contains { $0.hasPrefix("* 1 FETCH") })
        #expect(out.contains("c OK [READ-WRITE] SELECT completed"))
        // UID FETCH … VANISHED: the vanished UIDs in the set first, then what changed since 4.
        let fetch = Array(out.drop { !$0.hasPrefix("c OK") }.dropFirst().prefix { !$0.hasPrefix("d ") })
        #expect(fetch.first == "* VANISHED (EARLIER) 3")
        #expect(fetch.contains { $0.hasPrefix("* 2 FETCH (UID 2 FLAGS (\\Flagged) MODSEQ") } && fetch.contains { $0.hasPrefix("* 3 FETCH (UID 4 ") })
        // An expunge once QRESYNC is on is told by UID, not by sequence number.
        #expect(out.contains("* VANISHED 1") && !out.contains { $0.hasSuffix(" EXPUNGE") })
        // Another UIDVALIDITY: nothing resynchronized; leaving INBOX is said with CLOSED.
        #expect(out.contains("* OK [CLOSED] Previous mailbox closed"))
        let sent = Array(out.drop { !$0.hasPrefix("f OK") }.prefix { !$0.hasPrefix("g ") })
        #expect(!sent.contains { $0.contains("VANISHED") })
        // Known UIDs 3 and 5:9: 3 and 1 vanished, but only 3 is named; 5 and above are not below UIDNEXT.
        let last = Array(out.drop { !$0.hasPrefix("g OK") })
        #expect(last.contains("* VANISHED (EARLIER) 3"), "\(last)")
    }
}
