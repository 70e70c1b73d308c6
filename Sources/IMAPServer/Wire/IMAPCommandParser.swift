import Foundation

/// Why a command could not be parsed: answered with a tagged `BAD` (untagged when even the tag
/// could not be read). Trust-model row **inbox (low)**.
public struct IMAPParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The command's tag, when it could be read.
    public var tag: String?
    /// What was wrong, for the `BAD` text.
    public var message: String
    /// Creates an error.
    public init(tag: String?, message: String) { self.tag = tag; self.message = message }
    /// The message.
    public var description: String { message }
}

/// Parses one framed command (``IMAPFrame/command(_:)``) into an ``IMAPCommand``.
///
/// Written for this package from RFC 3501's grammar (§9) with LITERAL+ (RFC 7888), UIDPLUS
/// (RFC 4315), MOVE (RFC 6851), IDLE (RFC 2177), ID (RFC 2971), ENABLE (RFC 5161), UNSELECT
/// (RFC 3691) and NAMESPACE (RFC 2342). Never traps; every malformed input gives an
/// ``IMAPParseError``. Command lines must be UTF-8 (literals may hold any bytes).
public enum IMAPCommandParser {
    /// Parses `bytes` (one command, literals inline). - Throws: ``IMAPParseError``.
    public static func parse(_ bytes: [UInt8]) throws(IMAPParseError) -> IMAPCommand {
        var cursor = Cursor(bytes: bytes)
        let tagBytes = cursor.take { $0 != 0x20 }
        guard isValidTag(tagBytes) else { throw IMAPParseError(tag: nil, message: "Missing or invalid command tag") }
        let tag = String(decoding: tagBytes, as: UTF8.self)
        do throws(IMAPParseError) {
            try cursor.checkUTF8Outside()
            try cursor.space()
            let name = cursor.atomText().uppercased()
            guard !name.isEmpty else { throw cursor.error("Missing command name") }
            let kind = try parseKind(name, &cursor)
            guard cursor.atEnd else { throw cursor.error("Unexpected text after the \(name) command") }
            return IMAPCommand(tag: tag, kind: kind)
        } catch {
            throw IMAPParseError(tag: tag, message: error.message)
        }
    }

    /// Whether `bytes` is a valid tag (RFC 3501 `tag`: ASTRING-CHAR except `+`), at most 64 bytes.
    public static func isValidTag(_ bytes: [UInt8]) -> Bool {
        !bytes.isEmpty && bytes.count <= 64 && bytes.allSatisfy { isAStringChar($0) && $0 != UInt8(ascii: "+") }
    }

    static func isAtomChar(_ c: UInt8) -> Bool {
        c > 0x20 && c < 0x7F && !"(){ %*\"\\]".utf8.contains(c)
    }
    static func isAStringChar(_ c: UInt8) -> Bool { isAtomChar(c) || c == UInt8(ascii: "]") }

    private static func parseKind(_ name: String, _ c: inout Cursor) throws(IMAPParseError) -> IMAPCommand.Kind {
        switch name {
        case "CAPABILITY": return .capability
        case "NOOP": return .noop
        case "LOGOUT": return .logout
        case "STARTTLS": return .starttls
        case "CHECK": return .check
        case "CLOSE": return .close
        case "UNSELECT": return .unselect
        case "EXPUNGE": return .expunge
        case "IDLE": return .idle
        case "NAMESPACE": return .namespace
        case "LOGIN":
            try c.space(); let user = try c.astring(); try c.space(); let password = try c.astring()
            return .login(username: user, password: password)
        case "AUTHENTICATE":
            try c.space(); let mechanism = c.atomText().uppercased()
            guard !mechanism.isEmpty else { throw c.error("AUTHENTICATE needs a mechanism name") }
            var initial: String?
            if c.peek == 0x20 { try c.space(); initial = String(decoding: c.take { $0 != 0x20 }, as: UTF8.self) }
            return .authenticate(mechanism: mechanism, initialResponse: initial)
        case "SELECT", "EXAMINE":
            try c.space(); let mailbox = try c.mailbox()
            var condstore = false
            var qresync: IMAPQResync?
            if c.peek == 0x20 {
                try c.space(); try c.expect("(")
                repeat {
                    if c.peek == 0x20 { c.advance() }
                    if c.takeKeyword("CONDSTORE") { condstore = true; continue }
                    guard c.takeKeyword("QRESYNC") else { throw c.error("Unknown SELECT parameter (CONDSTORE and QRESYNC are offered)") }
                    // QRESYNC (uidvalidity modseq [known-uids [(sequence-match-data)]]), RFC 7162 §3.2.5.
                    try c.space(); try c.expect("(")
                    let validity = try c.number()
                    try c.space()
                    var parameter = IMAPQResync(uidValidity: validity, modSeq: try c.modSequence())
                    if c.peek == 0x20 {
                        c.advance()
                        if c.peek != UInt8(ascii: "(") { parameter.knownUIDs = try c.sequenceSet() }
                        if c.peek == 0x20 { c.advance() }
                        // The sequence-match data only helps a server that forgot expunges; it is read and not needed.
                        if c.peek == UInt8(ascii: "(") { c.advance(); _ = try c.sequenceSet(); try c.space(); _ = try c.sequenceSet(); try c.expect(")") }
                    }
                    try c.expect(")")
                    qresync = parameter
                } while c.peek == 0x20
                try c.expect(")")
            }
            return .select(mailbox: mailbox, readOnly: name == "EXAMINE", condstore: condstore || qresync != nil, qresync: qresync)
        case "CREATE": try c.space(); return .create(mailbox: try c.mailbox())
        case "DELETE": try c.space(); return .delete(mailbox: try c.mailbox())
        case "SUBSCRIBE": try c.space(); return .subscribe(mailbox: try c.mailbox())
        case "UNSUBSCRIBE": try c.space(); return .unsubscribe(mailbox: try c.mailbox())
        case "RENAME":
            try c.space(); let from = try c.mailbox(); try c.space()
            return .rename(from: from, to: try c.mailbox())
        case "LIST", "LSUB":
            try c.space()
            var specialUse = false
            if name == "LIST", c.peek == UInt8(ascii: "(") {
                specialUse = try c.parenthesizedAtoms().contains { $0.uppercased() == "SPECIAL-USE" }
                try c.space()
            }
            let reference = try c.mailbox(); try c.space()
            var pattern: String
            if c.peek == UInt8(ascii: "\"") || c.peek == UInt8(ascii: "{") { pattern = try c.string() }
            else { pattern = String(decoding: c.take { isAtomChar($0) || $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "*") || $0 == UInt8(ascii: "]") }, as: UTF8.self) }
            guard !pattern.isEmpty || c.bytesConsumedLast > 0 else { throw c.error("LIST needs a mailbox pattern") }
            pattern = IMAPMailboxName.decode(pattern) ?? pattern
            if name == "LIST", c.peek == 0x20 {
                try c.space(); guard c.atomText().uppercased() == "RETURN" else { throw c.error("Expected RETURN") }
                try c.space(); specialUse = try c.parenthesizedAtoms().contains { $0.uppercased() == "SPECIAL-USE" } || specialUse
            }
            return name == "LIST" ? .list(reference: reference, pattern: pattern, specialUseOnly: specialUse)
                : .lsub(reference: reference, pattern: pattern)
        case "STATUS":
            try c.space(); let mailbox = try c.mailbox(); try c.space()
            var items: [IMAPStatusItem] = []
            for atom in try c.parenthesizedAtoms() {
                guard let item = IMAPStatusItem(rawValue: atom.uppercased()) else { throw c.error("Unknown STATUS item \(atom)") }
                items.append(item)
            }
            guard !items.isEmpty else { throw c.error("STATUS needs at least one item") }
            return .status(mailbox: mailbox, items: items)
        case "APPEND":
            try c.space(); let mailbox = try c.mailbox(); try c.space()
            var flags: [String] = []
            if c.peek == UInt8(ascii: "(") { flags = try c.flagList(); try c.space() }
            var date: Date?
            if c.peek == UInt8(ascii: "\"") {
                let text = try c.quoted()
                guard let d = IMAPDate.parseDateTime(text) else { throw c.error("Invalid APPEND date-time \"\(text)\"") }
                date = d; try c.space()
            }
            guard c.peek == UInt8(ascii: "{") else { throw c.error("APPEND needs the message as a literal") }
            return .append(mailbox: mailbox, flags: flags, internalDate: date, message: try c.literal())
        case "FETCH", "STORE", "SEARCH", "COPY", "MOVE": return try parseMessageCommand(name, uid: false, &c)
        case "UID":
            try c.space()
            let sub = c.atomText().uppercased()
            switch sub {
            case "FETCH", "STORE", "SEARCH", "COPY", "MOVE": return try parseMessageCommand(sub, uid: true, &c)
            case "EXPUNGE": try c.space(); return .uidExpunge(set: try c.sequenceSet())
            default: throw c.error(sub.isEmpty ? "UID needs a command" : "Unknown UID command \(sub)")
            }
        case "ID":
            try c.space()
            if c.takeKeyword("NIL") { return .id(parameters: nil) }
            try c.expect("(")
            var params: [(String, String?)] = []
            while c.peek != UInt8(ascii: ")") {
                if !params.isEmpty { try c.space() }
                let key = try c.string(); try c.space(); let value = try c.nstring()
                params.append((key, value))
                guard params.count <= 30 else { throw c.error("ID accepts at most 30 fields") }
            }
            try c.expect(")")
            return .id(parameters: params)
        case "ENABLE":
            var caps: [String] = []
            while c.peek == 0x20 { try c.space(); caps.append(c.atomText().uppercased()) }
            guard !caps.isEmpty, !caps.contains("") else { throw c.error("ENABLE needs capability names") }
            return .enable(capabilities: caps)
        default:
            throw c.error("Unknown command \(name.prefix(40))")
        }
    }

    private static func parseMessageCommand(_ name: String, uid: Bool, _ c: inout Cursor) throws(IMAPParseError) -> IMAPCommand.Kind {
        try c.space()
        if name == "SEARCH" {
            if c.takeKeyword("CHARSET") {
                try c.space(); let charset = try c.astring().uppercased()
                guard charset == "UTF-8" || charset == "US-ASCII" else { throw c.error("[BADCHARSET (UTF-8 US-ASCII)] Unsupported charset \(charset)") }
                try c.space()
            }
            var keys = [try parseSearchKey(&c, depth: 0)]
            while c.peek == 0x20 { try c.space(); keys.append(try parseSearchKey(&c, depth: 0)) }
            return .search(key: keys.count == 1 ? keys[0] : .and(keys), uid: uid)
        }
        let set = try c.sequenceSet()
        try c.space()
        switch name {
        case "FETCH":
            var attributes: [IMAPFetchAttribute] = []
            if c.peek == UInt8(ascii: "(") {
                c.advance()
                repeat {
                    if !attributes.isEmpty { try c.space() }
                    attributes += try parseFetchAttribute(&c)
                } while c.peek == 0x20
                try c.expect(")")
            } else {
                attributes = try parseFetchAttribute(&c)
            }
            var changedSince: UInt64?
            var vanished = false
            if c.peek == 0x20 {
                try c.space(); try c.expect("(")
                guard c.takeKeyword("CHANGEDSINCE") else { throw c.error("Unknown FETCH modifier (CHANGEDSINCE is the one offered)") }
                try c.space(); changedSince = try c.modSequence()
                if c.peek == 0x20 {
                    c.advance()
                    guard c.takeKeyword("VANISHED") else { throw c.error("Unknown FETCH modifier (CHANGEDSINCE and VANISHED are offered)") }
                    guard uid else { throw c.error("VANISHED is for UID FETCH only") }
                    vanished = true
                }
                try c.expect(")")
            }
            return .fetch(set: set, attributes: attributes, uid: uid, changedSince: changedSince, vanished: vanished)
        case "STORE":
            var unchangedSince: UInt64?
            if c.peek == UInt8(ascii: "(") {
                c.advance()
                guard c.takeKeyword("UNCHANGEDSINCE") else { throw c.error("Unknown STORE modifier (UNCHANGEDSINCE is the one offered)") }
                try c.space(); unchangedSince = try c.modSequence(allowZero: true)
                try c.expect(")"); try c.space()
            }
            let item = c.atomText().uppercased()
            let operation: IMAPFlagOperation
            var silent = false
            var base = item
            if base.hasSuffix(".SILENT") { silent = true; base.removeLast(7) }
            switch base {
            case "FLAGS": operation = .replace
            case "+FLAGS": operation = .add
            case "-FLAGS": operation = .remove
            default: throw c.error("Unknown STORE item \(item)")
            }
            try c.space()
            var flags: [String]
            if c.peek == UInt8(ascii: "(") { flags = try c.flagList() } else {
                flags = [try c.flag()]
                while c.peek == 0x20 { try c.space(); flags.append(try c.flag()) }
            }
            return .store(set: set, operation: operation, silent: silent, flags: flags, uid: uid, unchangedSince: unchangedSince)
        case "COPY": return .copy(set: set, mailbox: try c.mailbox(), uid: uid)
        default: return .move(set: set, mailbox: try c.mailbox(), uid: uid)
        }
    }

    private static func parseFetchAttribute(_ c: inout Cursor) throws(IMAPParseError) -> [IMAPFetchAttribute] {
        let word = String(decoding: c.take { isAtomChar($0) && $0 != UInt8(ascii: "[") && $0 != UInt8(ascii: "<") }, as: UTF8.self).uppercased()
        switch word {
        case "ALL": return [.flags, .internalDate, .rfc822Size, .envelope]
        case "FAST": return [.flags, .internalDate, .rfc822Size]
        case "FULL": return [.flags, .internalDate, .rfc822Size, .envelope, .body]
        case "ENVELOPE": return [.envelope]
        case "FLAGS": return [.flags]
        case "INTERNALDATE": return [.internalDate]
        case "RFC822.SIZE": return [.rfc822Size]
        case "RFC822": return [.rfc822]
        case "RFC822.HEADER": return [.rfc822Header]
        case "RFC822.TEXT": return [.rfc822Text]
        case "UID": return [.uid]
        case "BODYSTRUCTURE": return [.bodyStructure]
        case "MODSEQ": return [.modSeq]
        case "BODY", "BODY.PEEK":
            guard c.peek == UInt8(ascii: "[") else {
                if word == "BODY" { return [.body] }
                throw c.error("BODY.PEEK needs a section")
            }
            c.advance()
            let section = try parseSection(&c)
            try c.expect("]")
            var partial: (Int, Int)?
            if c.peek == UInt8(ascii: "<") {
                c.advance()
                let origin = try c.number(); try c.expect(".")
                let count = try c.number(); try c.expect(">")
                guard count > 0 else { throw c.error("A partial FETCH needs a non-zero length") }
                partial = (Int(origin), Int(count))
            }
            return [.section(section, peek: word == "BODY.PEEK", partial: partial)]
        case "": throw c.error("Missing FETCH item")
        default: throw c.error("Unknown FETCH item \(word.prefix(40))")
        }
    }

    private static func parseSection(_ c: inout Cursor) throws(IMAPParseError) -> IMAPSection {
        var part: [Int] = []
        while let d = c.peek, d >= 0x31, d <= 0x39 {
            let n = try c.number()
            guard n >= 1, n <= 100_000 else { throw c.error("Invalid section part number") }
            part.append(Int(n))
            guard part.count <= 64 else { throw c.error("Section nested too deeply") }
            if c.peek == UInt8(ascii: ".") { c.advance() } else { return IMAPSection(part: part) }
        }
        let word = String(decoding: c.take { isAtomChar($0) && $0 != UInt8(ascii: "]") }, as: UTF8.self).uppercased()
        switch word {
        case "": guard part.isEmpty else { throw c.error("Section ends with a dot") }; return IMAPSection()
        case "HEADER": return IMAPSection(part: part, text: .header)
        case "TEXT": return IMAPSection(part: part, text: .text)
        case "MIME":
            guard !part.isEmpty else { throw c.error("MIME needs a part number") }
            return IMAPSection(part: part, text: .mime)
        case "HEADER.FIELDS", "HEADER.FIELDS.NOT":
            try c.space()
            try c.expect("(")
            var names: [String] = []
            repeat {
                if !names.isEmpty { try c.space() }
                names.append(try c.astring())
                guard names.count <= 1000 else { throw c.error("Too many header field names") }
            } while c.peek == 0x20
            try c.expect(")")
            return IMAPSection(part: part, text: word == "HEADER.FIELDS" ? .headerFields(names) : .headerFieldsNot(names))
        default: throw c.error("Unknown section text \(word.prefix(40))")
        }
    }

    private static func parseSearchKey(_ c: inout Cursor, depth: Int) throws(IMAPParseError) -> IMAPSearchKey {
        guard depth < 64 else { throw c.error("SEARCH nested too deeply") }
        if c.peek == UInt8(ascii: "(") {
            c.advance()
            var keys = [try parseSearchKey(&c, depth: depth + 1)]
            while c.peek == 0x20 { try c.space(); keys.append(try parseSearchKey(&c, depth: depth + 1)) }
            try c.expect(")")
            return keys.count == 1 ? keys[0] : .and(keys)
        }
        if let d = c.peek, (d >= 0x30 && d <= 0x39) || d == UInt8(ascii: "*") { return .sequenceSet(try c.sequenceSet()) }
        let word = c.atomText().uppercased()
        func arg() throws(IMAPParseError) -> String { try c.space(); return try c.astring() }
        func date() throws(IMAPParseError) -> Date {
            try c.space()
            let text = c.peek == UInt8(ascii: "\"") ? try c.quoted() : c.atomText()
            guard let d = IMAPDate.parseDate(text) else { throw c.error("Invalid date \"\(text.prefix(40))\" (expected like 1-Feb-2026)") }
            return d
        }
        func size() throws(IMAPParseError) -> Int { try c.space(); return Int(try c.number()) }
        switch word {
        case "ALL": return .all
        case "ANSWERED": return .flag("\\Answered", true)
        case "DELETED": return .flag("\\Deleted", true)
        case "DRAFT": return .flag("\\Draft", true)
        case "FLAGGED": return .flag("\\Flagged", true)
        case "SEEN": return .flag("\\Seen", true)
        case "UNANSWERED": return .flag("\\Answered", false)
        case "UNDELETED": return .flag("\\Deleted", false)
        case "UNDRAFT": return .flag("\\Draft", false)
        case "UNFLAGGED": return .flag("\\Flagged", false)
        case "UNSEEN": return .flag("\\Seen", false)
        case "KEYWORD": try c.space(); return .flag(try c.flag(), true)
        case "UNKEYWORD": try c.space(); return .flag(try c.flag(), false)
        case "NEW": return .new
        case "OLD": return .old
        case "RECENT": return .recent
        case "BEFORE": return .before(try date())
        case "ON": return .on(try date())
        case "SINCE": return .since(try date())
        case "SENTBEFORE": return .sentBefore(try date())
        case "SENTON": return .sentOn(try date())
        case "SENTSINCE": return .sentSince(try date())
        case "LARGER": return .larger(try size())
        case "SMALLER": return .smaller(try size())
        case "BCC", "CC", "FROM", "SUBJECT", "TO": return .header(word.lowercased(), try arg())
        case "HEADER": let field = try arg(); return .header(field.lowercased(), try arg())
        case "BODY": return .body(try arg())
        case "TEXT": return .text(try arg())
        case "UID": try c.space(); return .uid(try c.sequenceSet())
        case "MODSEQ":
            try c.space()
            if c.peek == UInt8(ascii: "\"") {   // entry name and type ("/flags/\\seen" all): accepted
                _ = try c.quoted(); try c.space()
                let type = c.atomText().lowercased()
                guard ["priv", "shared", "all"].contains(type) else { throw c.error("MODSEQ entry type is priv, shared or all") }
                try c.space()
            }
            return .modSeq(try c.modSequence(allowZero: true))
        case "NOT": try c.space(); return .not(try parseSearchKey(&c, depth: depth + 1))
        case "OR":
            try c.space(); let a = try parseSearchKey(&c, depth: depth + 1)
            try c.space(); return .or(a, try parseSearchKey(&c, depth: depth + 1))
        case "": throw c.error("Missing search criterion")
        default: throw c.error("Unknown search criterion \(word.prefix(40))")
        }
    }
}

/// A reading position in a command's bytes.
struct Cursor {
    struct Failure: Error { var message: String }
    let bytes: [UInt8]
    var index = 0
    var bytesConsumedLast = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index >= bytes.count }
    var peek: UInt8? { index < bytes.count ? bytes[index] : nil }
    mutating func advance() { index += 1 }

    func error(_ message: String) -> IMAPParseError { IMAPParseError(tag: nil, message: message) }

    /// Rejects bytes that are not UTF-8 outside literals.
    func checkUTF8Outside() throws(IMAPParseError) {
        var i = 0
        var segmentStart = 0
        while i < bytes.count {
            if bytes[i] == 0x0A, i >= 3 {
                // "{n}\r\n" or "{n+}\r\n": skip n bytes.
                let line = Array(bytes[segmentStart..<(i - 1)])
                if let marker = IMAPCommandFramer.literalMarker(line), let n = marker.size {
                    guard isUTF8(bytes[segmentStart..<i]) else { throw error("Command contains bytes that are not UTF-8 outside a literal") }
                    i += 1 + Int(clamping: n)
                    segmentStart = i
                    continue
                }
            }
            i += 1
        }
        guard segmentStart >= bytes.count || isUTF8(bytes[segmentStart...]) else {
            throw error("Command contains bytes that are not UTF-8 outside a literal")
        }
    }

    mutating func take(while predicate: (UInt8) -> Bool) -> [UInt8] {
        let start = index
        while index < bytes.count, predicate(bytes[index]) { index += 1 }
        bytesConsumedLast = index - start
        return Array(bytes[start..<index])
    }

    mutating func atomText() -> String {
        String(decoding: take { IMAPCommandParser.isAtomChar($0) }, as: UTF8.self)
    }

    mutating func space() throws(IMAPParseError) {
        guard peek == 0x20 else { throw error(atEnd ? "Missing argument" : "Expected a space") }
        index += 1
    }

    mutating func expect(_ character: Character) throws(IMAPParseError) {
        guard let p = peek, Character(UnicodeScalar(p)) == character else { throw error("Expected \(character)") }
        index += 1
    }

    mutating func takeKeyword(_ word: String) -> Bool {
        let w = Array(word.utf8)
        guard index + w.count <= bytes.count else { return false }
        for (k, b) in w.enumerated() where bytes[index + k] & 0xDF != b & 0xDF { return false }
        if index + w.count < bytes.count, IMAPCommandParser.isAtomChar(bytes[index + w.count]) { return false }
        index += w.count
        return true
    }

    mutating func number() throws(IMAPParseError) -> UInt32 {
        let digits = take { $0 >= 0x30 && $0 <= 0x39 }
        guard !digits.isEmpty, digits.count <= 10, let n = UInt32(String(decoding: digits, as: UTF8.self)) else {
            throw error(digits.isEmpty ? "Expected a number" : "Number out of range")
        }
        return n
    }

    /// A mod-sequence value (RFC 7162: 1 to 2^63 − 1; `allowZero` for UNCHANGEDSINCE and SEARCH).
    mutating func modSequence(allowZero: Bool = false) throws(IMAPParseError) -> UInt64 {
        let digits = take { $0 >= 0x30 && $0 <= 0x39 }
        guard !digits.isEmpty, digits.count <= 19, let n = UInt64(String(decoding: digits, as: UTF8.self)), n <= UInt64(Int64.max),
              allowZero || n > 0 else { throw error("Expected a mod-sequence (1 to 2^63-1)") }
        return n
    }

    mutating func quoted() throws(IMAPParseError) -> String {
        try expect("\"")
        var out: [UInt8] = []
        while let c = peek {
            index += 1
            switch c {
            case UInt8(ascii: "\""): return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let next = peek, next == UInt8(ascii: "\"") || next == UInt8(ascii: "\\") else {
                    throw error("Invalid escape in a quoted string")
                }
                out.append(next); index += 1
            case 0x0D, 0x0A, 0: throw error("Line break or NUL in a quoted string")
            default: out.append(c)
            }
        }
        throw error("Unterminated quoted string")
    }

    mutating func literal() throws(IMAPParseError) -> [UInt8] {
        try expect("{")
        let size = try number()
        if peek == UInt8(ascii: "+") { index += 1 }
        try expect("}")
        guard peek == 0x0D, index + 1 < bytes.count, bytes[index + 1] == 0x0A else { throw error("A literal must end its line") }
        index += 2
        let n = Int(size)
        guard index + n <= bytes.count else { throw error("Literal shorter than announced") }
        defer { index += n }
        return Array(bytes[index..<(index + n)])
    }

    /// `string`: quoted or literal.
    mutating func string() throws(IMAPParseError) -> String {
        switch peek {
        case UInt8(ascii: "\""): return try quoted()
        case UInt8(ascii: "{"):
            let raw = try literal()
            guard isUTF8(raw[...]) else { throw error("String literal is not UTF-8") }
            return String(decoding: raw, as: UTF8.self)
        default: throw error("Expected a quoted string or a literal")
        }
    }

    mutating func astring() throws(IMAPParseError) -> String {
        if peek == UInt8(ascii: "\"") || peek == UInt8(ascii: "{") { return try string() }
        let text = take { IMAPCommandParser.isAStringChar($0) }
        guard !text.isEmpty else { throw error(atEnd ? "Missing argument" : "Expected an atom, a quoted string or a literal") }
        return String(decoding: text, as: UTF8.self)
    }

    mutating func nstring() throws(IMAPParseError) -> String? {
        if takeKeyword("NIL") { return nil }
        return try string()
    }

    /// A mailbox name, decoded from modified UTF-7 (kept as sent when it is not valid modified
    /// UTF-7); `INBOX` in any case is `INBOX`.
    mutating func mailbox() throws(IMAPParseError) -> String {
        let wire = try astring()
        if wire.uppercased() == "INBOX" { return "INBOX" }
        return IMAPMailboxName.decode(wire) ?? wire
    }

    mutating func flag() throws(IMAPParseError) -> String {
        var backslash = false
        if peek == UInt8(ascii: "\\") { backslash = true; index += 1 }
        let word = String(decoding: take { IMAPCommandParser.isAtomChar($0) }, as: UTF8.self)
        guard !word.isEmpty else { throw error("Expected a flag") }
        return backslash ? IMAPFlags.canonical("\\" + word) : word
    }

    mutating func flagList() throws(IMAPParseError) -> [String] {
        try expect("(")
        var flags: [String] = []
        while peek != UInt8(ascii: ")") {
            if !flags.isEmpty { try space() }
            flags.append(try flag())
            guard flags.count <= 1000 else { throw error("Too many flags") }
        }
        try expect(")")
        return flags
    }

    mutating func parenthesizedAtoms() throws(IMAPParseError) -> [String] {
        try expect("(")
        var atoms: [String] = []
        var depth = 0
        while true {
            guard let c = peek else { throw error("Unterminated parenthesized list") }
            if c == UInt8(ascii: ")") {
                index += 1
                if depth == 0 { return atoms }
                depth -= 1
            } else if c == UInt8(ascii: "(") { index += 1; depth += 1; guard depth < 8 else { throw error("List nested too deeply") } }
            else if c == 0x20 { index += 1 }
            else if c == UInt8(ascii: "\"") { atoms.append(try quoted()) }
            else {
                let a = take { IMAPCommandParser.isAtomChar($0) }
                guard !a.isEmpty else { throw error("Unexpected character in a list") }
                atoms.append(String(decoding: a, as: UTF8.self))
            }
            guard atoms.count <= 100 else { throw error("List too long") }
        }
    }

    mutating func sequenceSet() throws(IMAPParseError) -> IMAPSequenceSet {
        var ranges: [(IMAPSequenceSet.Bound, IMAPSequenceSet.Bound)] = []
        func bound() throws(IMAPParseError) -> IMAPSequenceSet.Bound {
            if peek == UInt8(ascii: "*") { index += 1; return .star }
            let n = try number()
            guard n > 0 else { throw error("Message numbers start at 1") }
            return .number(n)
        }
        repeat {
            if !ranges.isEmpty { index += 1 }
            let a = try bound()
            if peek == UInt8(ascii: ":") { index += 1; ranges.append((a, try bound())) } else { ranges.append((a, a)) }
            guard ranges.count <= 10_000 else { throw error("Sequence set too long") }
        } while peek == UInt8(ascii: ",")
        return IMAPSequenceSet(ranges: ranges)
    }
}

/// Whether `bytes` is valid UTF-8.
func isUTF8(_ bytes: ArraySlice<UInt8>) -> Bool { String(validating: bytes, as: UTF8.self) != nil }
