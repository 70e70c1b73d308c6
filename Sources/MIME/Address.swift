import Foundation

/// A mailbox: an optional display name and an address (`local@domain`).
public struct MailAddress: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The display name, decoded (RFC 2047) and unquoted, or `nil` when there is none.
    public var name: String?
    /// The addr-spec (`local@domain`); the local part is quoted when it needs it.
    public var address: String

    /// Creates an address; an empty name counts as none.
    public init(name: String? = nil, address: String) {
        self.name = (name?.isEmpty ?? true) ? nil : name; self.address = address
    }

    /// `"Name" <address>` or `address`.
    public var description: String {
        guard let n = name else { return address }
        return "\(AddressParser.quotePhraseIfNeeded(n)) <\(address)>"
    }

    /// Parses an address-list header value (From, To, Cc, Reply-To…): display names, quoted
    /// strings, comments, obsolete routes and groups (`Group: a@b, c@d;`,
    /// `undisclosed-recipients:;`) — group members are returned flattened, like CPython's
    /// `AddressHeader.addresses`.
    public static func parseList(_ value: String) -> [MailAddress] { AddressParser.parseList(value) }
}

enum AddressParser {
    enum Tok: Equatable { case word(String, quoted: Bool), ws, special(Unicode.Scalar), literal(String) }

    static let specials: Set<Unicode.Scalar> = ["(", ")", "<", ">", "@", ",", ":", ";", ".", "\\", "\"", "[", "]"]

    static func tokenize(_ value: String) -> [Tok] {
        let s = Array(value.unicodeScalars)
        var toks: [Tok] = []
        var i = 0
        func addWS() { if toks.last != .ws { toks.append(.ws) } }
        while i < s.count {
            let c = s[i]
            if c == " " || c == "\t" || c == "\r" || c == "\n" { addWS(); i += 1; continue }
            if c == "(" {
                var depth = 0
                while i < s.count {
                    if s[i] == "\\" { i += 2; continue }
                    if s[i] == "(" { depth += 1 } else if s[i] == ")" { depth -= 1; if depth == 0 { i += 1; break } }
                    i += 1
                }
                addWS(); continue
            }
            if c == "\"" {
                var v = String.UnicodeScalarView()
                i += 1
                while i < s.count && s[i] != "\"" {
                    if s[i] == "\\" && i + 1 < s.count { i += 1 }
                    v.append(s[i]); i += 1
                }
                i += 1
                toks.append(.word(String(v), quoted: true)); continue
            }
            if c == "[" {
                var v = String.UnicodeScalarView()
                while i < s.count && s[i] != "]" { if s[i] != " " && s[i] != "\t" { v.append(s[i]) }; i += 1 }
                v.append("]"); i += 1
                toks.append(.literal(String(v))); continue
            }
            if specials.contains(c) { toks.append(.special(c)); i += 1; continue }
            var v = String.UnicodeScalarView()
            while i < s.count && !specials.contains(s[i]) && !(s[i] == " " || s[i] == "\t" || s[i] == "\r" || s[i] == "\n") {
                v.append(s[i]); i += 1
            }
            toks.append(.word(String(v), quoted: false))
        }
        return toks
    }

    static func parseList(_ value: String) -> [MailAddress] {
        let toks = tokenize(value)
        var out: [MailAddress] = []
        var cur: [Tok] = []
        var angle = false
        func flush() {
            if let a = mailbox(cur) { out.append(a) }
            cur.removeAll()
        }
        for t in toks {
            switch t {
            case .special("<"): angle = true; cur.append(t)
            case .special(">"): angle = false; cur.append(t)
            case .special(","), .special(";"):
                if angle { cur.append(t) } else { flush() }
            case .special(":"):
                // "Group:" only after a plain phrase; otherwise ':' is junk inside a mailbox.
                if angle || cur.contains(.special("@")) || cur.contains(.special("<")) || cur.contains(.special(">")) {
                    cur.append(t)
                } else {
                    cur.removeAll()   // group display name: not an address
                }
            default: cur.append(t)
            }
        }
        flush()
        return out
    }

    static func phrase(_ toks: ArraySlice<Tok>) -> String {
        var out = ""
        var pendingSpace = false
        for t in toks {
            switch t {
            case .ws: pendingSpace = !out.isEmpty
            case let .word(w, quoted):
                if pendingSpace { out += " " }
                pendingSpace = false
                out += quoted ? w : EncodedWords.decodeUnstructured(w)
            case let .special(c):
                if pendingSpace { out += " " }
                pendingSpace = false
                out.unicodeScalars.append(c)
            case let .literal(l):
                if pendingSpace { out += " " }
                pendingSpace = false
                out += l
            }
        }
        return out
    }

    /// An addr-spec read like CPython's parser: local-part words joined by one blank where
    /// blanks or comments separate them (quoted when needed), `@`, then a domain of atoms joined
    /// by dots (blanks around dots allowed) or a domain literal; anything after that is ignored.
    static func addrSpec(_ toks: ArraySlice<Tok>) -> String? {
        var i = toks.startIndex
        let end = toks.endIndex
        var local = ""
        var pendingSpace = false
        var sawWord = false
        loop: while i < end {
            switch toks[i] {
            case .ws: if sawWord { pendingSpace = true }
            case let .word(w, _):
                if pendingSpace { local += " " }
                pendingSpace = false; sawWord = true
                local += w
            case .special("."):
                local += "."; pendingSpace = false; sawWord = true
            default: break loop
            }
            i += 1
        }
        let needsQuote = local.unicodeScalars.contains { ($0 != "." && specials.contains($0)) || $0 == " " || $0 == "\t" }
        let lp = needsQuote ? "\"" + local.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" : local
        guard i < end, toks[i] == .special("@") else { return lp.isEmpty ? nil : lp }
        i += 1
        func skipWS() { while i < end && toks[i] == .ws { i += 1 } }
        skipWS()
        var domain = ""
        if i < end, case let .literal(l) = toks[i] {
            domain = l
        } else {
            while i < end, case let .word(w, _) = toks[i] {
                domain += w
                i += 1
                let save = i
                skipWS()
                if i < end && toks[i] == .special(".") {
                    domain += "."; i += 1; skipWS()
                } else { i = save; break }
            }
        }
        if domain.isEmpty { return lp.isEmpty ? nil : lp }
        return lp + "@" + domain
    }

    static func mailbox(_ toks: [Tok]) -> MailAddress? {
        if toks.allSatisfy({ $0 == .ws }) { return nil }
        if let lt = toks.firstIndex(of: .special("<")) {
            let gt = toks[lt...].firstIndex(of: .special(">")) ?? toks.count
            let name = phrase(toks[..<lt])
            var inner = toks[(lt + 1)..<gt]
            // Obsolete route "@a,@b:" before the addr-spec.
            if inner.first(where: { $0 != .ws }) == .special("@"), let colon = inner.firstIndex(of: .special(":")) {
                inner = inner[(colon + 1)...]
            }
            // The null address "<>" (bounces) is kept as "<>", like CPython.
            let addr = addrSpec(inner) ?? "<>"
            return MailAddress(name: name.isEmpty ? nil : name, address: addr)
        }
        guard let addr = addrSpec(toks[...]) else { return nil }
        return MailAddress(name: nil, address: addr)
    }

    static func quotePhraseIfNeeded(_ name: String) -> String {
        let atext = name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "!#$%&'*+-/=?^_`{|}~ ".unicodeScalars.contains($0)) }
        if atext && !name.hasPrefix(" ") && !name.hasSuffix(" ") && !name.contains("  ") { return name }
        return "\"" + name.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

/// RFC 5322 date parsing (obsolete syntax tolerated), ported from CPython's
/// `email._parseaddr._parsedate_tz` so both agree: optional day name, two-digit years
/// (< 69 → 20xx, else 19xx), named zones UT/UTC/GMT/Z and the US zones (EST, EDT, CST, CDT, MST,
/// MDT, PST, PDT, AST, ADT); unknown zones and `-0000` mean UTC.
public enum MailDate {
    static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
                         "january", "february", "march", "april", "may", "june", "july",
                         "august", "september", "october", "november", "december"]
    static let days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    static let zones: [String: Int] = ["UT": 0, "UTC": 0, "GMT": 0, "Z": 0, "AST": -400, "ADT": -300,
                                       "EST": -500, "EDT": -400, "CST": -600, "CDT": -500,
                                       "MST": -700, "MDT": -600, "PST": -800, "PDT": -700]

    static func pyInt(_ s: String) -> Int? {
        var t = Substring(s)
        var neg = false
        if t.hasPrefix("+") { t = t.dropFirst() } else if t.hasPrefix("-") { neg = true; t = t.dropFirst() }
        guard !t.isEmpty, t.allSatisfy({ $0.isASCII && $0.isNumber }), t.count < 18, let v = Int(t) else { return nil }
        return neg ? -v : v
    }

    /// Parses a Date header value to a UTC instant, or `nil` if it is not a date.
    public static func parse(_ value: String) -> Date? {
        var data = value.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\u{0B}" || $0 == "\u{0C}" }).map(String.init)
        guard !data.isEmpty else { return nil }
        if data[0].hasSuffix(",") || days.contains(data[0].lowercased()) { data.removeFirst() }
        else if let c = data[0].lastIndex(of: ",") { data[0] = String(data[0][data[0].index(after: c)...]) }
        if data.count == 3 {
            let stuff = data[0].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            if stuff.count == 3 { data = stuff + data[1...] }
        }
        if data.count == 4 {
            let s = data[3]
            var idx = s.firstIndex(of: "+")
            if idx == nil { idx = s.firstIndex(of: "-") }
            if let i = idx, i > s.startIndex { data[3...] = [String(s[..<i]), String(s[i...])] } else { data.append("") }
        }
        guard data.count >= 5 else { return nil }
        var dd = data[0], mm = data[1], yy = data[2], tm = data[3], tz = data[4]
        guard !dd.isEmpty, !mm.isEmpty, !yy.isEmpty else { return nil }
        mm = mm.lowercased()
        if !months.contains(mm) {
            (dd, mm) = (mm, dd.lowercased())
            guard months.contains(mm) else { return nil }
        }
        var month = months.firstIndex(of: mm)! + 1
        if month > 12 { month -= 12 }
        if dd.hasSuffix(",") { dd.removeLast() }
        if let i = yy.firstIndex(of: ":"), i > yy.startIndex { (yy, tm) = (tm, yy) }
        if yy.hasSuffix(",") { yy.removeLast(); if yy.isEmpty { return nil } }
        if yy.isEmpty { return nil }
        if !(yy.first!.isASCII && yy.first!.isNumber) { (yy, tz) = (tz, yy) }
        if tm.hasSuffix(",") { tm.removeLast() }
        var parts = tm.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        var thh: String, tmm: String, tss: String
        if parts.count == 2 { thh = parts[0]; tmm = parts[1]; tss = "0" }
        else if parts.count == 3 { thh = parts[0]; tmm = parts[1]; tss = parts[2] }
        else if parts.count == 1 && parts[0].contains(".") {
            parts = parts[0].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if parts.count == 2 { thh = parts[0]; tmm = parts[1]; tss = "0" }
            else if parts.count == 3 { thh = parts[0]; tmm = parts[1]; tss = parts[2] }
            else { return nil }
        } else { return nil }
        guard var year = pyInt(yy), let day = pyInt(dd), let hh = pyInt(thh), let mi = pyInt(tmm), let ss = pyInt(tss) else { return nil }
        if year < 100 { year += year > 68 ? 1900 : 2000 }
        var offset: Int? = nil
        let tzu = tz.uppercased()
        if let z = zones[tzu] { offset = z } else if let v = pyInt(tzu) { offset = v; if v == 0 && tzu.hasPrefix("-") { offset = nil } }
        var seconds = 0
        if let o = offset, o != 0 {
            let sign = o < 0 ? -1 : 1
            let a = abs(o)
            seconds = sign * ((a / 100) * 3600 + (a % 100) * 60)
        }
        // datetime() validity checks (CPython raises ValueError → no date).
        guard (1...9999).contains(year), (1...12).contains(month), (0...23).contains(hh), (0...59).contains(mi), (0...59).contains(ss) else { return nil }
        let mdays = [31, (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard day >= 1 && day <= mdays[month - 1] else { return nil }
        guard abs(seconds) < 86400 else { return nil }
        // Days from civil (proleptic Gregorian).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let daysSinceEpoch = era * 146097 + doe - 719468
        let t = daysSinceEpoch * 86400 + hh * 3600 + mi * 60 + ss - seconds
        return Date(timeIntervalSince1970: TimeInterval(t))
    }

    /// `YYYY-MM-DDTHH:MM:SSZ`.
    public static func iso8601(_ date: Date) -> String {
        var t = Int(date.timeIntervalSince1970.rounded(.down))
        let secs = ((t % 86400) + 86400) % 86400
        t = (t - secs) / 86400
        let z = t + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        var y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        if m <= 2 { y += 1 }
        func p(_ v: Int, _ w: Int) -> String { let s = String(v); return String(repeating: "0", count: max(0, w - s.count)) + s }
        return "\(p(y, 4))-\(p(m, 2))-\(p(d, 2))T\(p(secs / 3600, 2)):\(p(secs / 60 % 60, 2)):\(p(secs % 60, 2))Z"
    }

    /// RFC 5322 date-time for a Date header (`Tue, 01 Jul 2003 10:52:37 +0000`).
    public static func rfc5322(_ date: Date) -> String {
        let iso = iso8601(date)  // YYYY-MM-DDTHH:MM:SSZ
        let y = Int(iso.prefix(4))!, m = Int(iso.dropFirst(5).prefix(2))!, d = Int(iso.dropFirst(8).prefix(2))!
        let days = Int((date.timeIntervalSince1970 / 86400).rounded(.down))
        let wd = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][((days % 7) + 7) % 7]
        let mon = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][m - 1]
        let time = iso.dropFirst(11).prefix(8)
        return "\(wd), \(d < 10 ? "0" : "")\(d) \(mon) \(y) \(time) +0000"
    }
}
