import Foundation
import Testing
@testable import IMAPServer

struct ParserTests {
    func parse(_ s: String) throws -> IMAPCommand { try IMAPCommandParser.parse(Array(s.utf8)) }
    func failure(_ s: String) -> IMAPParseError? {
        do { _ = try IMAPCommandParser.parse(Array(s.utf8)); return nil } catch { return error }
    }

    @Test func loginReadsAtomsQuotedStringsAndLiterals() throws {
        #expect(try parse("a LOGIN alice pw").kind == .login(username: "alice", password: "pw"))
        #expect(try parse(#"a LOGIN "al\"ice" "p w\\""#).kind == .login(username: "al\"ice", password: "p w\\"))
        #expect(try parse("a LOGIN {5}\r\nalice {3+}\r\np\u{20}w").kind == .login(username: "alice", password: "p w"))
    }

    @Test func sequenceSetsKeepRangesAndStars() throws {
        guard case .fetch(let set, let attrs, let uid, nil, false) = try parse("a UID FETCH 1:4,7,9:* (FLAGS UID)").kind else { Issue.record(); return }
        #expect(set.description == "1:4,7,9:*")
        #expect(uid && attrs == [.flags, .uid])
        #expect(set.contains(8, largest: 20) == false && set.contains(15, largest: 20) && set.contains(3, largest: 20))
        #expect(IMAPSequenceSet(ranges: [(.star, .number(3))]).contains(5, largest: 5))
    }

    @Test func fetchSectionsAndPartialsParse() throws {
        guard case .fetch(_, let attrs, _, _, _) = try parse("a FETCH 1 (BODY.PEEK[1.2.HEADER.FIELDS (From \"To\")]<0.100> BODY[] BODY[2.MIME] ALL)").kind else {
            Issue.record(); return
        }
        #expect(attrs[0] == .section(IMAPSection(part: [1, 2], text: .headerFields(["From", "To"])), peek: true, partial: (0, 100)))
        #expect(attrs[1] == .section(IMAPSection(), peek: false, partial: nil))
        #expect(attrs[2] == .section(IMAPSection(part: [2], text: .mime), peek: false, partial: nil))
        #expect(attrs.count == 7)
    }

    @Test func searchKeysNest() throws {
        #expect(try parse("a UID SEARCH NOT DELETED").kind == .search(key: .not(.flag("\\Deleted", true)), uid: true))
        let kind = try parse("a SEARCH CHARSET UTF-8 OR FROM alice (SINCE 1-Feb-2026 LARGER 10) UID 1:5").kind
        guard case .search(.and(let keys), false) = kind, keys.count == 2, case .or(.header("from", "alice"), .and(let inner)) = keys[0] else {
            Issue.record("\(kind)"); return
        }
        #expect(inner.count == 2)
    }

    @Test func appendTakesFlagsDateAndLiteral() throws {
        let kind = try parse("a APPEND Sent (\\Seen \\draft) \"05-Mar-2026 10:00:00 +0100\" {3}\r\nabc").kind
        #expect(kind == .append(mailbox: "Sent", flags: ["\\Seen", "\\Draft"], internalDate: IMAPDate.parseDateTime("05-Mar-2026 09:00:00 +0000"),
                                message: Array("abc".utf8)))
    }

    @Test func badInputGivesATaggedErrorWithASentence() {
        #expect(failure("a FROB")?.tag == "a")
        #expect(failure("a FROB")?.message == "Unknown command FROB")
        #expect(failure("a FETCH 1 (FLAGS")?.message == "Expected )")
        #expect(failure("a LOGIN {-5}\r\nx")?.tag == "a")
        #expect(failure("a FETCH 0 FLAGS")?.message == "Message numbers start at 1")
        #expect(failure("a SEARCH SINCE 31-Foo-2026")?.message.hasPrefix("Invalid date") == true)
        #expect(failure("a LOGIN \"unterminated")?.message == "Unterminated quoted string")
        #expect(failure("a NOOP extra")?.message == "Unexpected text after the NOOP command")
        #expect(failure("")?.tag == nil)
        #expect(failure("+a NOOP")?.tag == nil)
        #expect(failure("a SEARCH \(String(repeating: "NOT ", count: 100))ALL")?.message == "SEARCH nested too deeply")
    }

    @Test func bytesThatAreNotUTF8OutsideALiteralAreRejectedButLiteralsMayHoldAnything() throws {
        #expect(try failure(String(decoding: [0x61, 0x20, 0x4C, 0x4F, 0x47, 0x49, 0x4E, 0x20, 0xFF, 0x20, 0x70], as: UTF8.self)) != nil)
        var raw = Array("a LOGIN x ".utf8); raw += [0xC3, 0x28]
        #expect(throws: IMAPParseError.self) { try IMAPCommandParser.parse(raw) }
        var append = Array("a APPEND INBOX {2}\r\n".utf8); append += [0xFF, 0xFE]
        #expect(try IMAPCommandParser.parse(append).kind == .append(mailbox: "INBOX", flags: [], internalDate: nil, message: [0xFF, 0xFE]))
    }

    @Test func inboxIsCaseInsensitive() throws {
        #expect(try parse("a SELECT inBox").kind == .select(mailbox: "INBOX", readOnly: false, condstore: false))
    }

    @Test func theEncoderQuotesOrUsesLiteralsAndNeverSplitsALine() {
        var w = IMAPWriter()
        w.string("a \"b\" \\c"); w.raw(" "); w.string("line\r\nbreak"); w.raw(" "); w.nstring(nil as String?); w.raw(" "); w.mailbox("All Mail")
        #expect(String(decoding: w.bytes, as: UTF8.self) == "\"a \\\"b\\\" \\\\c\" {11}\r\nline\r\nbreak NIL \"All Mail\"")
        let r = IMAPResponse.tagged(tag: "a", status: .no, code: "CANNOT", text: "evil\r\n* OK injected").encoded
        #expect(String(decoding: r, as: UTF8.self) == "a NO [CANNOT] evil  * OK injected\r\n")
    }

    @Test func datesRoundTrip() {
        let d = IMAPDate.parseDateTime(" 5-Mar-2026 23:59:58 -0130")!
        #expect(IMAPDate.formatDateTime(d) == "06-Mar-2026 01:29:58 +0000")
        #expect(IMAPDate.parseDate("1-feb-2026") != nil && IMAPDate.parseDate("32-Feb-2026") == nil)
    }
}

struct MailboxNameTests {
    @Test func modifiedUTF7RoundTripsRFC3501sExampleAndOthers() {
        #expect(IMAPMailboxName.encode("~peter/mail/台北/日本語") == "~peter/mail/&U,BTFw-/&ZeVnLIqe-")
        #expect(IMAPMailboxName.decode("~peter/mail/&U,BTFw-/&ZeVnLIqe-") == "~peter/mail/台北/日本語")
        for name in ["Entwürfe", "A&B", "Gesendete Objekte", "😀 fun", "Ünïcödé/Sub"] {
            #expect(IMAPMailboxName.decode(IMAPMailboxName.encode(name)) == name)
        }
        #expect(IMAPMailboxName.decode("&Jjo!") == nil)
        #expect(IMAPMailboxName.decode("&AGE-") == nil, "ASCII must not be base64-encoded")
    }

    @Test func theSessionSpeaksModifiedUTF7ToClientsAndUnicodeToTheBackend() async throws {
        let out = lines(try await converse("a LOGIN alice pw\r\nb CREATE Entw&APw-rfe\r\nc LIST \"\" Entw&APw-*\r\nd SELECT \"Entw&APw-rfe\"\r\ne FETCH 1:* FLAGS\r\n"))
        #expect(out.contains("* LIST (\\HasNoChildren) \"/\" Entw&APw-rfe"))
        #expect(out.contains("d OK [READ-WRITE] SELECT completed"))
        #expect(out.contains("e OK FETCH completed"), "1:* in an empty mailbox names nothing")
    }
}
