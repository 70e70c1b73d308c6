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
        case capability, noop, logout, starttls, check, close, unselect, expunge, idle, namespace
        case login(username: String, password: String)
        case authenticate(mechanism: String, initialResponse: String?)
        case select(mailbox: String, readOnly: Bool)
        case create(mailbox: String)
        case delete(mailbox: String)
        case rename(from: String, to: String)
        case subscribe(mailbox: String)
        case unsubscribe(mailbox: String)
        case list(reference: String, pattern: String, specialUseOnly: Bool)
        case lsub(reference: String, pattern: String)
        case status(mailbox: String, items: [IMAPStatusItem])
        case append(mailbox: String, flags: [String], internalDate: Date?, message: [UInt8])
        case fetch(set: IMAPSequenceSet, attributes: [IMAPFetchAttribute], uid: Bool)
        case store(set: IMAPSequenceSet, operation: IMAPFlagOperation, silent: Bool, flags: [String], uid: Bool)
        case search(key: IMAPSearchKey, uid: Bool)
        case copy(set: IMAPSequenceSet, mailbox: String, uid: Bool)
        case move(set: IMAPSequenceSet, mailbox: String, uid: Bool)
        case uidExpunge(set: IMAPSequenceSet)
        case id(parameters: [(String, String?)]?)
        case enable(capabilities: [String])

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
    case messages = "MESSAGES", recent = "RECENT", uidNext = "UIDNEXT", uidValidity = "UIDVALIDITY", unseen = "UNSEEN"
}

/// A message sequence number or UID set (`1:4,7,9:*`), RFC 3501 §9 `sequence-set`.
public struct IMAPSequenceSet: Sendable, Equatable, CustomStringConvertible {
    /// One end of a range: a number or `*` (the largest number in use).
    public enum Bound: Sendable, Equatable { case number(UInt32), star }
    /// The ranges, as written (each may be given high-to-low).
    public var ranges: [(Bound, Bound)]

    /// Creates a set from ranges.
    public init(ranges: [(Bound, Bound)]) { self.ranges = ranges }

    public static func == (a: Self, b: Self) -> Bool { a.description == b.description }

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
        case header, text, mime
        case headerFields([String])
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
    case envelope, flags, internalDate, rfc822Size, uid, body, bodyStructure
    case rfc822, rfc822Header, rfc822Text
    /// `BODY[section]<origin.count>` or, with `peek`, `BODY.PEEK[…]` (which does not set `\Seen`).
    case section(IMAPSection, peek: Bool, partial: (origin: Int, count: Int)?)

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
    case all
    case and([IMAPSearchKey])
    case not(IMAPSearchKey)
    case or(IMAPSearchKey, IMAPSearchKey)
    /// Has (or, with `false`, lacks) the flag.
    case flag(String, Bool)
    case new, old, recent
    case before(Date), on(Date), since(Date)
    case sentBefore(Date), sentOn(Date), sentSince(Date)
    case larger(Int), smaller(Int)
    case header(String, String)
    case body(String), text(String)
    case sequenceSet(IMAPSequenceSet)
    case uid(IMAPSequenceSet)
}
