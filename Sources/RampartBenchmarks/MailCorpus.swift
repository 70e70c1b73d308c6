import Foundation

/// A deterministic corpus of realistic mail HTML: newsletters with nested layout tables, inline
/// styles, images, links, entities, quoted replies, conditional comments; 5 KB to 2 MB.
public enum MailCorpus {
    /// The corpus's random numbers: the store benchmark's SplitMix64, with picks.
    struct Random {
        var generator: SplitMix64
        init(state: UInt64) { generator = SplitMix64(seed: state) }
        mutating func next() -> UInt64 { generator.next() }
        mutating func int(_ n: Int) -> Int { generator.next(n) }
        mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }
    }

    static let words = ["account", "offer", "newsletter", "update", "weekly", "digest", "security", "invoice", "team",
                        "meeting", "project", "release", "privacy", "encrypted", "mail", "drive", "calendar", "réunion",
                        "größe", "naïve", "café", "日本語", "données", "price", "free", "shipping", "order", "today"]

    static func sentence(_ r: inout Random) -> String {
        var words: [String] = []
        for _ in 0..<(6 + r.int(14)) { words.append(r.pick(Self.words)) }
        var s = words.joined(separator: " ")
        if r.int(4) == 0 { s += " &amp; more &nbsp;&mdash; &#8364;\(r.int(100))" }
        if r.int(5) == 0 { s = "<b>" + s + "</b>" }
        if r.int(6) == 0 { s += " <a href=\"https://example.com/t/\(r.next() % 100000)?utm_source=mail&amp;id=\(r.int(999))\" style=\"color:#1a73e8;text-decoration:none\">read more</a>" }
        return s
    }

    static func newsletter(targetBytes: Int, _ r: inout Random) -> String {
        var out = """
        <!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
        <html xmlns="http://www.w3.org/1999/xhtml"><head><meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
        <meta name="viewport" content="width=device-width, initial-scale=1.0"><title>Newsletter</title>
        <style type="text/css">body{margin:0;padding:0}table td{border-collapse:collapse}.btn{background:#1a73e8;color:#fff}
        @media only screen and (max-width:600px){.col{width:100%!important}}</style>
        <!--[if mso]><style>table{border-collapse:collapse}</style><![endif]--></head>
        <body style="margin:0;padding:0;background-color:#f4f4f4">
        <center><table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" bgcolor="#f4f4f4"><tr><td align="center">
        """
        while out.utf8.count < targetBytes {
            out += "<table role=\"presentation\" width=\"600\" cellpadding=\"0\" cellspacing=\"0\" border=\"0\" style=\"max-width:600px\">"
            for _ in 0..<(2 + r.int(4)) {
                out += "<tr>"
                for column in 0..<(1 + r.int(3)) {
                    out += "<td class=\"col\" valign=\"top\" width=\"\(200 + column * 10)\" style=\"padding:10px 20px;font-family:Arial,Helvetica,sans-serif;font-size:14px;line-height:20px;color:#333333\">"
                    if r.int(3) == 0 {
                        out += "<img src=\"https://cdn.example.com/img/\(r.next() % 100000).png\" width=\"180\" height=\"120\" alt=\"\(r.pick(words))\" style=\"display:block;border:0\">"
                    }
                    out += "<h2 style=\"margin:0 0 8px 0;font-size:18px\">\(r.pick(words).capitalized) \(r.pick(words))</h2>"
                    for _ in 0..<(1 + r.int(3)) { out += "<p style=\"margin:0 0 10px 0\">\(sentence(&r))</p>\n" }
                    if r.int(4) == 0 {
                        out += "<table cellpadding=\"0\" cellspacing=\"0\"><tr><td class=\"btn\" style=\"border-radius:4px\"><a href=\"https://example.com/c?\(r.int(9999))\" style=\"display:inline-block;padding:10px 18px\">Shop now &raquo;</a></td></tr></table>"
                    }
                    out += "</td>"
                }
                out += "</tr>\n"
            }
            out += "</table>\n"
        }
        out += "</td></tr></table></center><img src=\"https://track.example.com/open.gif?u=\(r.next())\" width=\"1\" height=\"1\"></body></html>"
        return out
    }

    static func personal(targetBytes: Int, _ r: inout Random) -> String {
        var out = "<div dir=\"ltr\"><div>Hi,</div><div><br></div>"
        var depth = 0
        while out.utf8.count < targetBytes {
            out += "<div>\(sentence(&r))</div>\n"
            if r.int(5) == 0 && depth < 20 {
                out += "<div class=\"gmail_quote\"><div dir=\"ltr\" class=\"gmail_attr\">On Mon, \(r.pick(words)) wrote:<br></div><blockquote class=\"gmail_quote\" style=\"margin:0 0 0 .8ex;border-left:1px #ccc solid;padding-left:1ex\">"
                depth += 1
            }
            if r.int(9) == 0 { out += "<ul><li>\(r.pick(words))<li>\(r.pick(words))</ul><p>unclosed <i>\(r.pick(words))" }
        }
        out += String(repeating: "</blockquote></div>", count: depth) + "</div>"
        return out
    }

    /// A few dozen documents from 5 KB to 2 MB (about 60% newsletters).
    public static func generate() -> [[UInt8]] {
        var r = Random(state: 0x5EED)
        var sizes: [Int] = []
        for i in 0..<36 {
            // Log-spaced from 5 KB to 2 MB.
            let exponent = Double(i % 12) / 11.0
            sizes.append(Int(5_000 * pow(400.0, exponent)))
        }
        return sizes.enumerated().map { i, size in
            Array((i % 5 < 3 ? newsletter(targetBytes: size, &r) : personal(targetBytes: size, &r)).utf8)
        }
    }
}
