import Foundation

/// A generated corpus of newsletter-like HTML mail: tables, inline and block CSS, remote and
/// embedded images, tracking pixels and links, Outlook conditional comments, and a sprinkling of
/// hostile markup. Deterministic (fixed seed), so runs compare.
public enum MailSafetyBenchCorpus {
    public static func generate(count: Int, seed: UInt64 = 0x5EED) -> [String] {
        var random = LinearCongruential64(seed: seed)
        func next(_ bound: Int) -> Int { random.next(bound) }
        let words = ["offer", "update", "your", "account", "new", "collection", "spring", "sale", "members", "exclusive",
                     "read", "more", "shipping", "free", "today", "only", "weekly", "digest", "news", "team"]
        func sentence(_ n: Int) -> String { (0..<n).map { _ in words[next(words.count)] }.joined(separator: " ") }
        var out: [String] = []
        for m in 0..<count {
            var html = "<!DOCTYPE html><html><head><meta charset=utf-8><title>\(sentence(4))</title>"
            html += "<style>body{margin:0;padding:0;font-family:Arial,sans-serif}.wrap{width:600px;margin:0 auto}"
            html += "td.cell{padding:8px 12px;color:#333}a{color:#06c}@media (max-width:600px){.wrap{width:100%!important}}</style>"
            html += "<!--[if mso]><style>table{border-collapse:collapse}</style><![endif]--></head><body style=\"background:#f4f4f4\">"
            html += "<table class=wrap cellpadding=0 cellspacing=0 border=0 role=presentation>"
            for row in 0..<(8 + next(20)) {
                html += "<tr><td class=cell style=\"font-size:\(12 + next(6))px;line-height:1.4;color:#\(String(next(0xFFFFFF), radix: 16))\">"
                html += "<h2 style=\"margin:0 0 8px\">\(sentence(5))</h2><p>\(sentence(30 + next(40)))</p>"
                html += "<a href=\"https://shop.example.com/item/\(m)/\(row)?utm_source=newsletter&utm_medium=email&utm_campaign=c\(m)&ref=\(row)\">\(sentence(3))</a>"
                if next(3) == 0 { html += "<img src=\"https://cdn.example.com/img/\(m)-\(row).jpg\" width=\"560\" height=\"200\" alt=\"\(sentence(2))\" style=\"display:block;border:0\">" }
                if next(5) == 0 { html += "<img src=\"cid:part\(row)@mail\" alt=\"logo\">" }
                if next(9) == 0 { html += "<div style=\"background-image:url(https://cdn.example.com/bg\(row).png);padding:4px\">\(sentence(6))</div>" }
                if next(15) == 0 { html += "<img src=x onerror=alert(1)><a href=\"javascript:alert(1)\">x</a>" }
                html += "</td></tr>"
            }
            html += "</table><img src=\"https://track.example.net/open?id=\(m)\" width=1 height=1 alt=\"\">"
            html += "<p style=\"font-size:11px;color:#999\">\(sentence(25)) <a href=\"https://shop.example.com/unsubscribe?u=\(m)\">unsubscribe</a></p></body></html>"
            out.append(html)
        }
        return out
    }
}
