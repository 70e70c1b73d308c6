import Foundation
import Testing
@testable import IMAPServer

/// Whole conversations with a session over the in-memory backend (no network).
struct SessionTests {
    @Test func greetingAndCapabilityAdvertiseIMAP4rev1AndTheExtensions() async throws {
        let out = lines(try await converse("a CAPABILITY\r\nb LOGOUT\r\n"))
        #expect(out[0].hasPrefix("* OK [CAPABILITY IMAP4rev1 LITERAL+ SASL-IR ID ENABLE IDLE NAMESPACE UIDPLUS MOVE UNSELECT CHILDREN SPECIAL-USE CONDSTORE QRESYNC AUTH=PLAIN]"))
        #expect(out[1] == "* CAPABILITY IMAP4rev1 LITERAL+ SASL-IR ID ENABLE IDLE NAMESPACE UIDPLUS MOVE UNSELECT CHILDREN SPECIAL-USE CONDSTORE QRESYNC AUTH=PLAIN")
        #expect(out.suffix(2) == ["* BYE Logging out", "b OK LOGOUT completed"])
    }

    @Test func withoutTLSOrLoopbackLoginIsDisabled() async throws {
        let out = try await converse("a CAPABILITY\r\nb LOGIN alice pw\r\n", plaintext: false)
        #expect(out.contains("LOGINDISABLED") && !out.contains("AUTH=PLAIN"))
        #expect(out.contains("b NO [PRIVACYREQUIRED]"))
    }

    @Test func wrongPasswordsFailAndFiveEndTheConnection() async throws {
        let out = lines(try await converse(String(repeating: "a LOGIN alice nope\r\n", count: 6)))
        #expect(out.filter { $0.hasPrefix("a NO [AUTHENTICATIONFAILED]") }.count == 5)
        #expect(out.last == "* BYE Too many failed logins; closing the connection")
    }

    @Test func authenticatePlainWithInitialResponseAndWithContinuation() async throws {
        let token = Data("\u{0}alice\u{0}pw".utf8).base64EncodedString()
        let out = try await converse("a AUTHENTICATE PLAIN \(token)\r\n")
        #expect(out.contains("a OK [CAPABILITY"))
        let out2 = lines(try await converse("a AUTHENTICATE PLAIN\r\n\(token)\r\nb NOOP\r\n"))
        #expect(out2.contains("+ ") && out2.contains { $0.hasPrefix("a OK [CAPABILITY") } && out2.last == "b OK NOOP completed")
        let proxy = Data("bob\u{0}alice\u{0}pw".utf8).base64EncodedString()
        #expect(try await converse("a AUTHENTICATE PLAIN \(proxy)\r\n").contains("a NO [AUTHORIZATIONFAILED]"))
    }

    @Test func commandsBeforeLoginOrSelectAreRefusedWithASentence() async throws {
        let out = lines(try await converse("a SELECT INBOX\r\nb LOGIN alice pw\r\nc FETCH 1 FLAGS\r\nd FROB\r\n"))
        #expect(out.contains("a BAD Log in first (LOGIN or AUTHENTICATE)"))
        #expect(out.contains("c BAD Select a mailbox first (SELECT or EXAMINE)"))
        #expect(out.contains("d BAD Unknown command FROB"))
    }

    @Test func selectReportsCountsUIDsAndFlags() async throws {
        let out = lines(try await converse("a LOGIN alice pw\r\nb SELECT INBOX\r\nc EXAMINE Sent\r\n"))
        let select = Array(out.drop { !$0.hasPrefix("* FLAGS") }.prefix(8))
        #expect(out.contains("b OK [READ-WRITE] SELECT completed"))
        #expect(select == [
            "* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)",
            "* OK [PERMANENTFLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft \\*)] Flags permitted",
            "* 3 EXISTS", "* 0 RECENT", "* OK [UNSEEN 2] First unseen message",
            "* OK [UIDVALIDITY 1] UIDs valid", "* OK [UIDNEXT 4] Predicted next UID", "* OK [HIGHESTMODSEQ 4] Highest mod-sequence",
        ])
        #expect(out.last == "c OK [READ-ONLY] EXAMINE completed")
    }

    @Test func listShowsSpecialUseAttributesAndPatternsFilter() async throws {
        let out = lines(try await converse("a LOGIN alice pw\r\nb LIST \"\" \"*\"\r\nc LIST (SPECIAL-USE) \"\" \"*\"\r\nd LIST \"\" \"\"\r\ne LIST \"\" inbox\r\n"))
        #expect(out.contains("* LIST (\\HasNoChildren) \"/\" INBOX"))
        #expect(out.contains("* LIST (\\HasNoChildren \\Sent) \"/\" Sent"))
        #expect(out.contains("* LIST (\\HasNoChildren \\All) \"/\" \"All Mail\""))
        #expect(out.contains("* LIST (\\HasNoChildren \\Junk) \"/\" Spam"))
        let listCount = out.filter { $0.hasPrefix("* LIST") }.count
        #expect(listCount == 15)
        #expect(out.contains("* LIST (\\Noselect) \"/\" \"\""))
    }

    @Test func statusCountsMessages() async throws {
        let out = try await converse("a LOGIN alice pw\r\nb STATUS INBOX (MESSAGES UNSEEN UIDNEXT UIDVALIDITY RECENT)\r\n")
        #expect(out.contains("* STATUS INBOX (MESSAGES 3 UNSEEN 2 UIDNEXT 4 UIDVALIDITY 1 RECENT 0)"))
    }

    @Test func fetchGivesEnvelopeExactlyAsRFC3501Says() async throws {
        let out = try await converse("a LOGIN alice pw\r\nb SELECT INBOX\r\nc FETCH 1:2 (UID FLAGS RFC822.SIZE INTERNALDATE ENVELOPE)\r\n")
        #expect(out.contains("* 1 FETCH (UID 1 FLAGS (\\Seen) RFC822.SIZE \(Sample.plain.utf8.count) INTERNALDATE \"28-May-2026 20:26:40 +0000\" ENVELOPE (\"Thu, 28 May 2026 10:00:00 +0000\" \"Lunch plans\" ((\"Alice Example\" NIL \"alice\" \"example.org\")) ((\"Alice Example\" NIL \"alice\" \"example.org\")) ((\"Alice Example\" NIL \"alice\" \"example.org\")) ((NIL NIL \"bob\" \"example.org\")) NIL NIL NIL \"<lunch@example.org>\"))"))
        #expect(out.contains("ENVELOPE (\"Fri, 29 May 2026 09:00:00 +0000\" \"Report attached\" ((\"=?UTF-8?B?SsO8cmdlbg==?=\" NIL \"jurgen\" \"example.net\"))"))
        #expect(out.contains("((NIL NIL \"alice\" \"example.org\")(\"Carol\" NIL \"carol\" \"example.org\")) ((NIL NIL \"dave\" \"example.org\")) NIL NIL NIL)"))
    }

    @Test func bodyStructureDescribesMultipartAndAttachedMessages() async throws {
        let out = try await converse("a LOGIN alice pw\r\nb EXAMINE INBOX\r\nc FETCH 2:3 (BODYSTRUCTURE BODY)\r\n")
        #expect(out.contains("* 2 FETCH (BODYSTRUCTURE ((\"TEXT\" \"PLAIN\" (\"CHARSET\" \"utf-8\") NIL NIL \"7BIT\" 41 1 NIL NIL NIL NIL)(\"APPLICATION\" \"PDF\" (\"NAME\" \"r.pdf\") NIL NIL \"BASE64\" 12 NIL (\"ATTACHMENT\" (\"FILENAME\" \"r.pdf\")) NIL NIL) \"MIXED\" (\"BOUNDARY\" \"XYZ\") NIL NIL NIL) BODY ((\"TEXT\" \"PLAIN\" (\"CHARSET\" \"utf-8\") NIL NIL \"7BIT\" 41 1)(\"APPLICATION\" \"PDF\" (\"NAME\" \"r.pdf\") NIL NIL \"BASE64\" 12) \"MIXED\"))"))
        #expect(out.contains("(\"MESSAGE\" \"RFC822\" NIL NIL NIL \"7BIT\" 52 (NIL \"note\" ((NIL NIL \"frank\" \"example.com\")) ((NIL NIL \"frank\" \"example.com\")) ((NIL NIL \"frank\" \"example.com\")) NIL NIL NIL NIL NIL) (\"TEXT\" \"PLAIN\" (\"CHARSET\" \"us-ascii\") NIL NIL \"7BIT\" 10 1 NIL NIL NIL NIL) 4 NIL NIL NIL NIL)"))
    }

    @Test func anEncodedAttachedMessageStillGetsAGrammaticalBodyStructure() async throws {
        let backend = InMemoryIMAPBackend()
        await backend.addUser("alice", password: "pw")
        try await backend.deliver(Array("Content-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n\r\nU3ViamVjdDogeA0KDQp5DQo=\r\n".utf8), to: "alice")
        let out = try await converse("a LOGIN alice pw\r\nb SELECT INBOX\r\nc FETCH 1 BODYSTRUCTURE\r\n", backend: backend)
        #expect(out.contains("* 1 FETCH (BODYSTRUCTURE (\"MESSAGE\" \"RFC822\" NIL NIL NIL \"BASE64\" 26 (NIL NIL NIL NIL NIL NIL NIL NIL NIL NIL) (\"TEXT\" \"PLAIN\" NIL NIL NIL \"7BIT\" 0 0) 1 NIL NIL NIL NIL))"))
    }

    @Test func sectionsAndPartialsReturnTheExactBytes() async throws {
        let out = try await converse("""
        a LOGIN alice pw\r
        b SELECT INBOX\r
        c FETCH 2 (BODY.PEEK[1] BODY.PEEK[2.MIME] BODY.PEEK[HEADER.FIELDS (SUBJECT TO)] BODY.PEEK[TEXT]<0.8>)\r
        d FETCH 3 (BODY.PEEK[2.HEADER] BODY.PEEK[2.TEXT] BODY.PEEK[2.1] BODY.PEEK[9])\r
        e FETCH 2 (FLAGS)\r

        """)
        #expect(out.contains("BODY[1] {41}\r\nSee the report, quarterly numbers inside."))
        #expect(out.contains("BODY[2.MIME] {133}\r\nContent-Type: application/pdf; name=\"r.pdf\"\r\nContent-Disposition: attachment; filename=\"r.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n"))
        #expect(out.contains("BODY[HEADER.FIELDS (SUBJECT TO)] {78}\r\nTo: alice@example.org, Carol <carol@example.org>\r\nSubject: Report attached\r\n\r\n"))
        #expect(out.contains("BODY[TEXT]<0> {8}\r\npreamble"))
        #expect(out.contains("BODY[2.HEADER] {42}\r\nFrom: frank@example.com\r\nSubject: note\r\n\r\n"))
        #expect(out.contains("BODY[2.TEXT] {10}\r\ninner body"))
        #expect(out.contains("BODY[2.1] {10}\r\ninner body"))
        #expect(out.contains("BODY[9] {0}\r\n"))
        #expect(out.contains("* 2 FETCH (FLAGS ())"), "PEEK leaves \\Seen unset")
    }

    @Test func bodyWithoutPeekSetsSeenAndSaysSo() async throws {
        let out = try await converse("a LOGIN alice pw\r\nb SELECT INBOX\r\nc FETCH 2 BODY[1]\r\n")
        #expect(out.contains("* 2 FETCH (BODY[1] {41}\r\nSee the report, quarterly numbers inside. FLAGS (\\Seen))"))
    }

    @Test func searchEvaluatesFlagsDatesSizesHeadersTextAndUIDs() async throws {
        let out = lines(try await converse("""
        a LOGIN alice pw\r
        b SELECT INBOX\r
        c UID SEARCH NOT DELETED\r
        d SEARCH UNSEEN\r
        e SEARCH OR FROM "jürgen" SUBJECT lunch\r
        f SEARCH SINCE 29-May-2026 BEFORE 30-May-2026\r
        g SEARCH LARGER 500\r
        h SEARCH TEXT quarterly\r
        i UID SEARCH UID 2:*\r
        j SEARCH SENTON 30-May-2026\r
        k SEARCH HEADER Message-ID lunch@\r
        l SEARCH BODY "inner body"\r
        m SEARCH 2:3 NOT SEEN\r

        """))
        let searches = out.filter { $0.hasPrefix("* SEARCH") }
        #expect(searches == ["* SEARCH 1 2", "* SEARCH 2 3", "* SEARCH 1 2", "* SEARCH 2", "* SEARCH 2", "* SEARCH 2",
                             "* SEARCH 2 3", "* SEARCH 3", "* SEARCH 1", "* SEARCH 3", "* SEARCH 2 3"])
    }

    @Test func storeChangesFlagsAndReportsThem() async throws {
        let out = lines(try await converse("""
        a LOGIN alice pw\r
        b SELECT INBOX\r
        c STORE 1:2 +FLAGS (\\flagged $Important)\r
        d UID STORE 2 -FLAGS.SILENT (\\Flagged)\r
        e STORE 1 FLAGS ()\r
        f FETCH 1:2 FLAGS\r

        """))
        #expect(out.contains("* 1 FETCH (FLAGS (\\Seen \\Flagged $Important))"))
        #expect(out.contains("* 2 FETCH (FLAGS (\\Flagged $Important))"))
        #expect(!out.contains { $0.hasPrefix("* 2 FETCH (UID 2 FLAGS") })
        #expect(out.contains("* 1 FETCH (FLAGS ())"))
        #expect(out.contains("* 2 FETCH (FLAGS ($Important))"))
    }

    @Test func copyMoveAndExpungeUseUIDPLUSAndRenumber() async throws {
        let backend = try await sampleBackend()
        let out = lines(try await converse("""
        a LOGIN alice pw\r
        b SELECT INBOX\r
        c UID COPY 1:2 Archive\r
        d MOVE 1 Trash\r
        e EXPUNGE\r
        f UID FETCH 1:* FLAGS\r
        g COPY 1 Nowhere\r
        h UID EXPUNGE 2\r

        """, backend: backend))
        #expect(out.contains("c OK [COPYUID 5 1:2 1:2] UID COPY completed"))
        #expect(out.contains("* OK [COPYUID 4 1 1] Moved"))
        #expect(out.contains("* 1 EXPUNGE"))
        #expect(out.contains("d OK MOVE completed"))
        // Message UID 3 (\Deleted) was number 2 after the move.
        let expungeIndex = out.firstIndex(of: "e OK EXPUNGE completed")!
        #expect(out[expungeIndex - 1] == "* 2 EXPUNGE")
        #expect(out.contains("* 1 FETCH (UID 2 FLAGS ())"))
        #expect(out.contains("g NO [TRYCREATE] No mailbox named Nowhere"))
        #expect(out.last == "h OK EXPUNGE completed")
        #expect(await backend.flags(of: "alice", mailbox: "Archive").count == 2)
    }

    @Test func appendWithLiteralPlusAndSynchronizingLiteral() async throws {
        let message = "Subject: new\r\n\r\nhello\r\n"
        let out = lines(try await converse("""
        a LOGIN alice pw\r
        b SELECT INBOX\r
        c APPEND INBOX (\\Seen) {\(message.utf8.count)+}\r
        \(message)\r
        d APPEND Drafts {\(message.utf8.count)}\r
        \(message)\r
        e APPEND Missing {1+}\r
        x\r

        """))
        #expect(out.contains("* 4 EXISTS"))
        #expect(out.contains("c OK [APPENDUID 1 4] APPEND completed"))
        #expect(out.contains("+ Ready for literal data"))
        #expect(out.contains("d OK [APPENDUID 3 1] APPEND completed"))
        #expect(out.contains("e NO [TRYCREATE] No mailbox named Missing"))
    }

    @Test func everyBadInputGetsAnAnswerAndTheNextCommandStillWorks() async throws {
        let limits = IMAPLimits(maxLineLength: 1024, maxLiteralSize: 1000)
        var input = Array("a LOGIN alice pw\r\n".utf8)
        input += Array("b1 NOOP ".utf8) + [UInt8](repeating: 0x41, count: 1 << 20) + Array("\r\n".utf8)   // 1 MB line
        input += Array("b2 APPEND INBOX {5000}\r\n".utf8)                                                 // too large, synchronizing
        input += Array("b3 APPEND INBOX {2000+}\r\n".utf8) + [UInt8](repeating: 0x42, count: 2000) + Array("\r\n".utf8)
        input += Array("b4 LOGIN {-5}\r\n".utf8)                                                          // negative size
        input += Array("b5 SELECT ".utf8) + [0xFF, 0xFE] + Array("\r\n".utf8)                               // not UTF-8
        input += Array("b6 XYZZY\r\n".utf8)                                                              // unknown
        input += Array("b7 FETCH 1 FLAGS\r\n".utf8)                                                      // wrong state
        input += Array("b8 SELECT INBOX\r\nb9 FETCH 99 FLAGS\r\n".utf8)
        input += Array("c NOOP\r\n".utf8)
        let out = lines(try await converse(bytes: input, limits: limits))
        #expect(out.contains("b1 BAD Command line too long (limit 1024 bytes); the line was skipped"))
        #expect(out.contains("b2 NO [TOOBIG] Literal of 5000 bytes is larger than the limit of 1000 bytes"))
        #expect(out.contains("b3 NO [TOOBIG] Literal of 2000 bytes is larger than the limit of 1000 bytes"))
        #expect(out.contains { $0.hasPrefix("b4 BAD") })
        #expect(out.contains("b5 BAD Command contains bytes that are not UTF-8 outside a literal"))
        #expect(out.contains("b6 BAD Unknown command XYZZY"))
        #expect(out.contains("b7 BAD Select a mailbox first (SELECT or EXAMINE)"))
        #expect(out.contains("b9 BAD No message with sequence number 99 (the mailbox has 3)"))
        #expect(out.last == "c OK NOOP completed")
    }

    @Test func idNamespaceEnableUnselectAndMailboxManagement() async throws {
        let out = lines(try await converse("""
        a ID ("name" "test")\r
        b LOGIN alice pw\r
        c NAMESPACE\r
        d ENABLE CONDSTORE\r
        e CREATE Projects/2026\r
        f RENAME Projects/2026 Old\r
        g DELETE Old\r
        h SELECT INBOX\r
        i UNSELECT\r
        j FETCH 1 FLAGS\r
        k CREATE INBOX\r

        """))
        #expect(out.contains("* ID (\"name\" \"Rampart\" \"vendor\" \"Rampart\")"))
        #expect(out.contains("* NAMESPACE ((\"\" \"/\")) NIL NIL"))
        #expect(out.contains("* ENABLED CONDSTORE"))
        #expect(out.contains("e OK CREATE completed") && out.contains("f OK RENAME completed") && out.contains("g OK DELETE completed"))
        #expect(out.contains("j BAD Select a mailbox first (SELECT or EXAMINE)"))
        #expect(out.contains("k NO [ALREADYEXISTS] A mailbox named INBOX exists already"))
    }
}
