import Foundation

/// Mailbox names on the wire: IMAP4rev1's modified UTF-7 (RFC 3501 §5.1.3). The backend sees
/// Unicode names (`Entwürfe`); clients send and receive `Entw&APw-rfe`.
public enum IMAPMailboxName {
    /// The wire form of a Unicode name: printable ASCII as is (`&` as `&-`), everything else as
    /// `&` + modified BASE64 of UTF-16BE + `-`.
    public static func encode(_ name: String) -> String {
        var out = ""
        var pending: [UInt16] = []
        func flush() {
            guard !pending.isEmpty else { return }
            var bytes: [UInt8] = []
            for unit in pending { bytes += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
            let b64 = Data(bytes).base64EncodedString().replacingOccurrences(of: "/", with: ",").replacingOccurrences(of: "=", with: "")
            out += "&" + b64 + "-"
            pending = []
        }
        for scalar in name.unicodeScalars {
            if scalar.value >= 0x20, scalar.value <= 0x7E {
                flush()
                out += scalar == "&" ? "&-" : String(scalar)
            } else {
                pending += Array(String(scalar).utf16)
            }
        }
        flush()
        return out
    }

    /// The Unicode name of a wire form, or nil when it is not valid modified UTF-7.
    public static func decode(_ wire: String) -> String? {
        var out = ""
        var chars = Substring(wire)
        while let amp = chars.firstIndex(of: "&") {
            out += chars[..<amp]
            guard let dash = chars[amp...].firstIndex(of: "-") else { return nil }
            let encoded = chars[chars.index(after: amp)..<dash]
            chars = chars[chars.index(after: dash)...]
            if encoded.isEmpty { out += "&"; continue }
            var b64 = encoded.replacingOccurrences(of: ",", with: "/")
            while b64.count % 4 != 0 { b64 += "=" }
            guard let data = Data(base64Encoded: b64), data.count % 2 == 0 else { return nil }
            let units = stride(from: 0, to: data.count, by: 2).map { UInt16(data[data.startIndex + $0]) << 8 | UInt16(data[data.startIndex + $0 + 1]) }
            guard let text = String(utf16CodeUnits: units, count: units.count) as String?,
                  !text.unicodeScalars.contains(where: { $0.value >= 0x20 && $0.value <= 0x7E }) || text.isEmpty else { return nil }
            out += text
        }
        out += chars
        return out
    }
}
