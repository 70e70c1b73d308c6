import Foundation

/// One parsed client command: its tag and what it asks for (RFC 3501 §6 and the extensions
/// ``IMAPCapabilities`` lists).
public struct IMAPCommand: Sendable, Equatable {
    /// The client's tag, echoed in the tagged response.
    public var tag: String
    /// The command and its arguments.
    public var kind: Kind

    /// Creates a command.
    public init(tag: String, kind: Kind) { self.tag = tag; self.kind = kind }

    /// The commands the server understands, with typed arguments.
    public enum Kind: Sendable, Equatable {
        /// CAPABILITY.
        case capability
        /// NOOP.
        case noop
        /// LOGOUT.
        case logout
        /// STARTTLS.
        case starttls
        /// CHECK.
        case check
        /// CLOSE (expunges silently, then deselects).
        case close
        /// UNSELECT (RFC 3691).
        case unselect
        /// EXPUNGE.
        case expunge
        /// IDLE (RFC 2177).
        case idle
        /// NAMESPACE (RFC 2342).
        case namespace
        /// LOGIN user password.
        case login(username: String, password: String)
        /// AUTHENTICATE mechanism [initial response] (SASL-IR, RFC 4959).
        case authenticate(mechanism: String, initialResponse: String?)
        /// SELECT, or EXAMINE when `readOnly`; `condstore` for the `(CONDSTORE)` parameter, `qresync`
        /// for `(QRESYNC (…))` (RFC 7162).
        case select(mailbox: String, readOnly: Bool, condstore: Bool, qresync: IMAPQResync? = nil)
        /// CREATE.
        case create(mailbox: String)
        /// DELETE.
        case delete(mailbox: String)
        /// RENAME.
        case rename(from: String, to: String)
        /// SUBSCRIBE.
        case subscribe(mailbox: String)
        /// UNSUBSCRIBE.
        case unsubscribe(mailbox: String)
        /// LIST; `specialUseOnly` for `LIST (SPECIAL-USE)` or `RETURN (SPECIAL-USE)` (RFC 6154).
        case list(reference: String, pattern: String, specialUseOnly: Bool)
        /// LSUB.
        case lsub(reference: String, pattern: String)
        /// STATUS.
        case status(mailbox: String, items: [IMAPStatusItem])
        /// APPEND.
        case append(mailbox: String, flags: [String], internalDate: Date?, message: [UInt8])
        /// FETCH or UID FETCH; `changedSince` for the `(CHANGEDSINCE n)` modifier, `vanished` for
        /// `(CHANGEDSINCE n VANISHED)` (RFC 7162 QRESYNC, UID FETCH only).
        case fetch(set: IMAPSequenceSet, attributes: [IMAPFetchAttribute], uid: Bool, changedSince: UInt64?, vanished: Bool = false)
        /// STORE or UID STORE; `unchangedSince` for the `(UNCHANGEDSINCE n)` modifier (RFC 7162).
        case store(set: IMAPSequenceSet, operation: IMAPFlagOperation, silent: Bool, flags: [String], uid: Bool, unchangedSince: UInt64?)
        /// SEARCH or UID SEARCH (several keys are an `and`).
        case search(key: IMAPSearchKey, uid: Bool)
        /// COPY or UID COPY.
        case copy(set: IMAPSequenceSet, mailbox: String, uid: Bool)
        /// MOVE or UID MOVE (RFC 6851).
        case move(set: IMAPSequenceSet, mailbox: String, uid: Bool)
        /// UID EXPUNGE (RFC 4315).
        case uidExpunge(set: IMAPSequenceSet)
        /// ID (RFC 2971): the client's fields, or nil for `ID NIL`.
        case id(parameters: [(String, String?)]?)
        /// ENABLE (RFC 5161).
        case enable(capabilities: [String])

        /// Equality (the `ID` fields compared pairwise).
        public static func == (a: Kind, b: Kind) -> Bool {
            switch (a, b) {
            case (.id(let x), .id(let y)):
                guard let x, let y else { return (x == nil) == (y == nil) }
                return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
            default: return String(describing: a) == String(describing: b)
            }
        }
    }
}

/// How STORE changes flags.
public enum IMAPFlagOperation: Sendable, Equatable {
    /// `FLAGS`: replace the flags.
    case replace
    /// `+FLAGS`: add.
    case add
    /// `-FLAGS`: remove.
    case remove
}

/// A STATUS data item (RFC 3501 §6.3.10).
public enum IMAPStatusItem: String, Sendable, Equatable, CaseIterable {
    /// MESSAGES: how many messages.
    case messages = "MESSAGES"
    /// RECENT: always 0 here (`\Recent` is not tracked).
    case recent = "RECENT"
    /// UIDNEXT.
    case uidNext = "UIDNEXT"
    /// UIDVALIDITY.
    case uidValidity = "UIDVALIDITY"
    /// UNSEEN: how many messages lack `\Seen`.
    case unseen = "UNSEEN"
    /// HIGHESTMODSEQ (RFC 7162).
    case highestModSeq = "HIGHESTMODSEQ"
}

/// A message sequence number or UID set (`1:4,7,9:*`), RFC 3501 §9 `sequence-set`.
public struct IMAPSequenceSet: Sendable, Equatable, CustomStringConvertible {
    /// One end of a range: a number or `*` (the largest number in use).
    public enum Bound: Sendable, Equatable {
        /// A number.
        case number(UInt32)
        /// `*`.
        case star
    }
    /// The ranges, as written (each may be given high-to-low).
    public var ranges: [(Bound, Bound)]

    /// Creates a set from ranges.
    public init(ranges: [(Bound, Bound)]) { self.ranges = ranges }

    /// Equal when written the same way.
    public static func == (a: Self, b: Self) -> Bool { a.description == b.description }

    /// As written on the wire (`1:4,7,9:*`).
    public var description: String {
        ranges.map { r in
            let f: (Bound) -> String = { if case .number(let n) = $0 { String(n) } else { "*" } }
            return r.0 == r.1 ? f(r.0) : "\(f(r.0)):\(f(r.1))"
        }.joined(separator: ",")
    }

    /// Whether `value` is in the set, `*` standing for `largest`.
    public func contains(_ value: UInt32, largest: UInt32) -> Bool {
        for (a, b) in ranges {
            let x = a.resolved(largest), y = b.resolved(largest)
            if value >= min(x, y) && value <= max(x, y) { return true }
        }
        return false
    }
}

extension IMAPSequenceSet.Bound {
    func resolved(_ largest: UInt32) -> UInt32 { if case .number(let n) = self { n } else { largest } }
}

/// A section of a message (`BODY[1.2.HEADER.FIELDS (FROM)]`), RFC 3501 §6.4.5.
public struct IMAPSection: Sendable, Equatable, CustomStringConvertible {
    /// What part of the addressed entity.
    public enum Text: Sendable, Equatable {
        /// `HEADER`: the header, blank line included.
        case header
        /// `TEXT`: the body.
        case text
        /// `MIME`: a part's MIME header.
        case mime
        /// `HEADER.FIELDS (…)`: only these fields.
        case headerFields([String])
        /// `HEADER.FIELDS.NOT (…)`: all but these fields.
        case headerFieldsNot([String])
    }
    /// The part numbers (`[1, 2]` for `1.2`); empty for the whole message.
    public var part: [Int]
    /// The text specifier, nil for the whole entity.
    public var text: Text?

    /// Creates a section.
    public init(part: [Int] = [], text: Text? = nil) { self.part = part; self.text = text }

    /// As the client wrote it, for the FETCH response (`1.HEADER.FIELDS (FROM TO)`).
    public var description: String {
        var s = part.map(String.init).joined(separator: ".")
        if let text {
            if !s.isEmpty { s += "." }
            switch text {
            case .header: s += "HEADER"
            case .text: s += "TEXT"
            case .mime: s += "MIME"
            case .headerFields(let f): s += "HEADER.FIELDS (" + f.joined(separator: " ") + ")"
            case .headerFieldsNot(let f): s += "HEADER.FIELDS.NOT (" + f.joined(separator: " ") + ")"
            }
        }
        return s
    }
}

/// A FETCH data item (RFC 3501 §6.4.5); the macros ALL, FAST and FULL are expanded by the parser.
public enum IMAPFetchAttribute: Sendable, Equatable {
    /// ENVELOPE.
    case envelope
    /// FLAGS.
    case flags
    /// INTERNALDATE.
    case internalDate
    /// RFC822.SIZE.
    case rfc822Size
    /// UID.
    case uid
    /// BODY (the non-extensible BODYSTRUCTURE).
    case body
    /// BODYSTRUCTURE.
    case bodyStructure
    /// RFC822 (as BODY[], sets `\Seen`).
    case rfc822
    /// RFC822.HEADER (as BODY.PEEK[HEADER]).
    case rfc822Header
    /// RFC822.TEXT (as BODY[TEXT], sets `\Seen`).
    case rfc822Text
    /// MODSEQ (RFC 7162 CONDSTORE).
    case modSeq
    /// `BODY[section]<origin.count>` or, with `peek`, `BODY.PEEK[…]` (which does not set `\Seen`).
    case section(IMAPSection, peek: Bool, partial: (origin: Int, count: Int)?)

    /// Equality (partials compared by origin and count).
    public static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case let (.section(s1, p1, r1), .section(s2, p2, r2)):
            return s1 == s2 && p1 == p2 && r1?.origin == r2?.origin && r1?.count == r2?.count
        default: return String(describing: a) == String(describing: b)
        }
    }
}

/// A SEARCH criterion (RFC 3501 §6.4.4).
public indirect enum IMAPSearchKey: Sendable, Equatable {
    /// ALL.
    case all
    /// Every key matches (a parenthesized list, or keys side by side).
    case and([IMAPSearchKey])
    /// NOT.
    case not(IMAPSearchKey)
    /// OR.
    case or(IMAPSearchKey, IMAPSearchKey)
    /// Has (or, with `false`, lacks) the flag: SEEN, UNSEEN, KEYWORD, … .
    case flag(String, Bool)
    /// NEW (never matches: `\Recent` is not tracked).
    case new
    /// OLD (always matches).
    case old
    /// RECENT (never matches).
    case recent
    /// BEFORE: internal date earlier than the day.
    case before(Date)
    /// ON: internal date within the day.
    case on(Date)
    /// SINCE: internal date within or after the day.
    case since(Date)
    /// SENTBEFORE: the Date header earlier than the day.
    case sentBefore(Date)
    /// SENTON.
    case sentOn(Date)
    /// SENTSINCE.
    case sentSince(Date)
    /// LARGER: RFC822.SIZE above.
    case larger(Int)
    /// SMALLER.
    case smaller(Int)
    /// HEADER field text (also FROM, TO, CC, BCC, SUBJECT); the field name is lowercased, the text
    /// matched case-insensitively within the decoded value.
    case header(String, String)
    /// BODY: the text parts' decoded text.
    case body(String)
    /// TEXT: the header fields and the body.
    case text(String)
    /// A message sequence number set.
    case sequenceSet(IMAPSequenceSet)
    /// UID set.
    case uid(IMAPSequenceSet)
    /// MODSEQ: messages whose mod-sequence is at least the value (RFC 7162; an entry name is
    /// accepted and the message's one mod-sequence compared).
    case modSeq(UInt64)
}

/// The `QRESYNC` parameter of SELECT and EXAMINE (RFC 7162 §3.2.5): what the client knew of the
/// mailbox when it last synced.
public struct IMAPQResync: Sendable, Equatable {
    /// The UIDVALIDITY the client knew; nothing is resynchronized when it changed.
    public var uidValidity: UInt32
    /// The HIGHESTMODSEQ the client last saw.
    public var modSeq: UInt64
    /// The UIDs the client knows, when it says (else every UID below UIDNEXT).
    public var knownUIDs: IMAPSequenceSet?
    /// Creates the parameter.
    public init(uidValidity: UInt32, modSeq: UInt64, knownUIDs: IMAPSequenceSet? = nil) {
        self.uidValidity = uidValidity; self.modSeq = modSeq; self.knownUIDs = knownUIDs
    }
}
