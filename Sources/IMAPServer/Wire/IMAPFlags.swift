import Foundation

/// The system flags (RFC 3501 §2.3.2) and flag spelling.
public enum IMAPFlags {
    /// `\\Seen`.
    public static let seen = "\\Seen"
    /// `\\Answered`.
    public static let answered = "\\Answered"
    /// `\\Flagged`.
    public static let flagged = "\\Flagged"
    /// `\\Deleted`.
    public static let deleted = "\\Deleted"
    /// `\\Draft`.
    public static let draft = "\\Draft"
    /// The system flags a client may store, in their canonical spelling.
    public static let system = [answered, flagged, deleted, seen, draft]

    /// A system flag in its canonical spelling (`\seen` → `\Seen`); other flags unchanged.
    public static func canonical(_ flag: String) -> String {
        system.first { $0.caseInsensitiveCompare(flag) == .orderedSame } ?? flag
    }

    /// Whether `flags` holds `flag` (compared case-insensitively, as RFC 3501 says).
    public static func contains(_ flags: [String], _ flag: String) -> Bool {
        flags.contains { $0.caseInsensitiveCompare(flag) == .orderedSame }
    }
}

/// IMAP dates: `date` (`1-Feb-2026`) and `date-time` (`01-Feb-2026 10:00:00 +0000`), RFC 3501 §9.
public enum IMAPDate {
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    static let utc = TimeZone(identifier: "UTC")!

    static var calendar: Calendar {
        var c = Calendar(identifier: .gregorian)
        c.timeZone = utc
        return c
    }

    /// `d-Mon-yyyy` as midnight UTC, or nil.
    public static func parseDate(_ text: String) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, let day = Int(parts[0]), (1...31).contains(day),
              let month = months.firstIndex(where: { $0.caseInsensitiveCompare(parts[1]) == .orderedSame }),
              parts[2].count == 4, let year = Int(parts[2]) else { return nil }
        return calendar.date(from: DateComponents(year: year, month: month + 1, day: day))
    }

    /// `dd-Mon-yyyy hh:mm:ss +zzzz` (the day may start with a space), or nil.
    public static func parseDateTime(_ text: String) -> Date? {
        let t = text.trimmingCharacters(in: .whitespaces)
        let pieces = t.split(separator: " ")
        guard pieces.count == 3, let day = parseDate(String(pieces[0])) else { return nil }
        let hms = pieces[1].split(separator: ":").compactMap { Int($0) }
        let zone = pieces[2]
        guard hms.count == 3, hms[0] < 24, hms[1] < 60, hms[2] < 61, zone.count == 5,
              let sign = zone.first, sign == "+" || sign == "-", let z = Int(zone.dropFirst()) else { return nil }
        let offset = (z / 100 * 3600 + z % 100 * 60) * (sign == "-" ? -1 : 1)
        return day.addingTimeInterval(TimeInterval(hms[0] * 3600 + hms[1] * 60 + hms[2] - offset))
    }

    /// `"dd-Mon-yyyy hh:mm:ss +0000"` in UTC, for INTERNALDATE.
    public static func formatDateTime(_ date: Date) -> String {
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        func two(_ n: Int?) -> String { let v = n ?? 0; return v < 10 ? "0\(v)" : "\(v)" }
        return "\(two(c.day))-\(months[(c.month ?? 1) - 1])-\(c.year ?? 1970) \(two(c.hour)):\(two(c.minute)):\(two(c.second)) +0000"
    }

    /// The UTC day of `date` (midnight).
    static func day(of date: Date) -> Date { calendar.startOfDay(for: date) }
}
