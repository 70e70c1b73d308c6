import Foundation
import Testing
@testable import MailSafety

@Suite struct RemoteContentTests {
    static let remoteEverywhere = """
    <img src="https://r.example/a.png" srcset="https://r.example/a2.png 2x, data:image/png;base64,AAAA 3x">\
    <table background="https://r.example/bg.gif"><tr><td>t</td></tr></table>\
    <video poster="https://r.example/p.jpg" src="https://r.example/v.mp4"></video>\
    <svg><image href="https://r.example/i.png"></image><use xlink:href="https://r.example/s.svg#a"></use></svg>\
    <a href="https://r.example/" ping="https://ping.example/p">l</a>\
    <p style="background-image:url(https://r.example/c.png)">c</p>\
    <style>@font-face{font-family:F;src:url(https://r.example/f.woff)} p{background:url(https://r.example/d.png)}</style>\
    <input type=image src="https://r.example/in.png"><link rel=stylesheet href="https://r.example/s.css">
    """

    @Test func blockedPolicyLeavesNothingRemoteLoadable() throws {
        let result = try MailSanitizer().sanitize(Self.remoteEverywhere)
        // Every remaining occurrence of the remote host is in a data-rampart-* placeholder or a link.
        let fragment = MessageParsing.parseFragment(result.html)
        for node in fragment.descendants {
            guard let element = node as? HTML5Element else { continue }
            for attribute in element.attributes where attribute.value.contains("r.example") {
                let isPlaceholder = attribute.name.hasPrefix("data-rampart-")
                let isLink = element.localName == "a" && attribute.name == "href"
                #expect(isPlaceholder || isLink, "loadable: \(attribute.qualifiedName)=\(attribute.value)")
            }
            if element.localName == "style" { #expect(!element.textContent.contains("r.example")) }
        }
        #expect(!result.html.contains("ping"))
        let kinds = Set(result.report.blockedRemote.map(\.kind))
        #expect(kinds.isSuperset(of: [.image, .srcset, .background, .poster, .media, .svgImage, .svgUse, .ping, .cssBackground, .font, .inputImage, .stylesheet]))
        #expect(result.html.contains("data-rampart-src=\"https://r.example/a.png\""))
        #expect(result.html.contains("data-rampart-srcset=\"https://r.example/a2.png 2x, data:image/png;base64,AAAA 3x\""))
    }

    @Test func allowedPolicyKeepsRemoteButNotTrackersOrStylesheets() throws {
        var options = SanitizerOptions(remote: .allowThisMessage)
        options.trackers = try TrackerList(rampartList: "rampart-trackers 1\nvendor Example Tracker\nhost t.example\n")
        let html = "<img src=\"https://r.example/a.png\"><img src=\"https://t.example/o.gif\"><img src=\"https://x.example/p.gif\" width=1 height=1><link rel=stylesheet href=https://r.example/s.css>"
        let result = try MailSanitizer(options: options).sanitize(html)
        #expect(result.html == "<img src=\"https://r.example/a.png\"><img data-rampart-src=\"https://t.example/o.gif\"><img data-rampart-src=\"https://x.example/p.gif\" width=\"1\" height=\"1\">")
        #expect(result.report.trackers.contains(TrackerFinding(url: "https://t.example/o.gif", reason: .knownTracker, vendor: "Example Tracker")))
        #expect(result.report.trackers.contains(TrackerFinding(url: "https://x.example/p.gif", reason: .pixel, vendor: nil)))
    }

    @Test func cidImagesResolveToDataURIsOrTheAppScheme() throws {
        let png = Data([0x89, 0x50, 0x4E, 0x47])
        var options = SanitizerOptions(attachments: ["<logo@x>": EmbeddedAttachment(mimeType: "image/png", bytes: png), "doc@x": EmbeddedAttachment(mimeType: "text/html", bytes: Data("<script>".utf8))])
        let html = "<img src=\"cid:logo@x\"><img src=\"CID:doc@x\"><img src=\"cid:missing@x\">"
        let inline = try MailSanitizer(options: options).sanitize(html)
        #expect(inline.html == "<img src=\"data:image/png;base64,iVBORw==\"><img><img>")
        #expect(inline.report.count(.missingAttachment) == 1)
        options.embeddedImages = .appScheme("rampart-cid")
        let app = try MailSanitizer(options: options).sanitize("<img src=\"cid:logo%40x\">")
        #expect(app.html == "<img src=\"rampart-cid:logo%40x\">")
    }

    /// The literal pre-filter never changes a verdict: for URLs built from every pattern of the
    /// real-world list (metacharacters stripped) and for ordinary URLs, the filtered and the full
    /// regex scan agree.
    @Test func trackerLiteralPrefilterNeverChangesTheVerdict() throws {
        let list = try TrackerList(mailTrackerBlockerJSON: Data(contentsOf: Self.realWorldListURL()))
        let urls = ["https://cdn.shop.example/hero.jpg", "https://example.com/?a=1", "http://mail.example.org/open"] + Self.patternURLs(list.vendors)
        #expect(Self.matches(urls, list.vendor(for:), agreeWith: list.vendorWithoutPrefilter(for:)) > 400)
        #expect(TrackerList.requiredLiteral("sendgrid\\.net/wf/open") == "sendgrid.net/wf/open")
        #expect(TrackerList.requiredLiteral("t.strk[0-9][0-9].email") == "email")
        #expect(TrackerList.requiredLiteral("a|b") == nil)
        #expect(TrackerList.requiredLiteral("/abc?def") == "/ab")
    }

    /// The built-in list compiles its patterns on first use, with the verdicts of the list
    /// read and compiled at once: a message whose URLs hold none of the patterns' required
    /// literals compiles none; every pattern is a valid expression; and merged with the
    /// real-world list (its patterns compiled when read), the verdicts are those of the two
    /// lists' vendors added one by one.
    @Test func builtInTrackerPatternsCompileOnFirstUseWithTheSameVerdicts() throws {
        let lazy = TrackerList.makeBuiltIn()
        let eager = try TrackerList(rampartList: TrackerList.builtInText)
        #expect(lazy.compiledPatternCount == 0)
        #expect(eager.compiledPatternCount == 4)
        for vendor in lazy.vendors {
            for pattern in vendor.patterns { #expect((try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive])) != nil, "\(pattern)") }
        }
        var options = SanitizerOptions(remote: .allowAll)
        options.trackers = lazy
        let plain = try MailSanitizer(options: options).sanitize("<img src=\"https://cdn.shop.example/hero.jpg\"><a href=\"https://x.example/about/\">x</a>")
        #expect(plain.report.trackers.isEmpty)
        #expect(lazy.compiledPatternCount == 0)
        let urls = ["https://us1.list-manage.com/track/open.php?u=1", "https://a.example/wf/open?upn=x", "https://m.example/o/AbC9/",
                    "https://m.example/o/AbC9/x", "https://www.facebook.com/tr?id=1", "https://www.FACEBOOK.com/tr/", "https://b.example/p",
                    "https://t.hubspotemail.net/x", "https://x.google-analytics.com/collect", "https://ünï.example/o/abc"]
        for raw in urls {
            guard let url = URLComponentsLite(url: raw) else { continue }
            #expect(lazy.vendor(for: url) == eager.vendor(for: url), "\(raw)")
        }
        #expect(lazy.compiledPatternCount > 0)
        let real = try TrackerList(mailTrackerBlockerJSON: Data(contentsOf: Self.realWorldListURL()))
        let merged = TrackerList.makeBuiltIn().merging(real)
        let added = TrackerList(vendors: eager.vendors + real.vendors)
        #expect(merged.ruleCount == added.ruleCount)
        #expect(Self.matches(urls + Self.patternURLs(Array(real.vendors.prefix(120))), merged.vendor(for:), agreeWith: added.vendor(for:)) > 100)
    }

    /// URLs made from every pattern of `vendors` (metacharacters stripped): in a path, and as
    /// the host.
    static func patternURLs(_ vendors: [TrackerList.Vendor]) -> [String] {
        var urls: [String] = []
        for vendor in vendors {
            for pattern in vendor.patterns {
                let plain = pattern.replacingOccurrences(of: "\\", with: "").filter { !"^$()[]?*+{}|".contains($0) }
                urls.append("https://x.example/" + plain)
                urls.append("https://" + plain.drop(while: { $0 == "/" }) + "/p?q=1")
            }
        }
        return urls
    }

    /// How many of `urls` `verdict` finds a vendor for, each verdict expected to be `other`'s.
    static func matches(_ urls: [String], _ verdict: (URLComponentsLite) -> String?, agreeWith other: (URLComponentsLite) -> String?) -> Int {
        var matched = 0
        for raw in urls {
            guard let url = URLComponentsLite(url: raw) else { continue }
            let found = verdict(url)
            #expect(found == other(url), "\(raw)")
            if found != nil { matched += 1 }
        }
        return matched
    }

    @Test func shippedTrackerListFormatParsesAndRejectsGarbage() throws {
        let list = try TrackerList(rampartList: "# comment\nrampart-trackers 1\nvendor A\nhost a.example\nregex /open\\.php\\?id=\n")
        #expect(list.vendor(for: URLComponentsLite(url: "https://x.a.example/p")!) == "A")
        #expect(list.vendor(for: URLComponentsLite(url: "https://b.example/open.php?id=4")!) == "A")
        #expect(list.vendor(for: URLComponentsLite(url: "https://b.example/other")!) == nil)
        #expect(throws: TrackerListError.badHeader) { try TrackerList(rampartList: "vendor A\n") }
        #expect(throws: TrackerListError.badLine(2)) { try TrackerList(rampartList: "rampart-trackers 1\nhost a\n") }
        #expect(throws: TrackerListError.badPattern(vendor: "A", pattern: "(")) { try TrackerList(rampartList: "rampart-trackers 1\nvendor A\nregex (\n") }
    }

    /// The real-world list (MailTrackerBlocker, BSD-3) is outside data: read from
    /// `RAMPART_TRACKERS` or `../shared/testdata/trackers/` relative to the package root.
    static func realWorldListURL() -> URL {
        let fileName = "mailtrackerblocker-trackers.json"
        if let path = ProcessInfo.processInfo.environment["RAMPART_TRACKERS"], !path.isEmpty {
            // The variable may name the list itself or the folder holding it (scripts/test.sh).
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                return URL(fileURLWithPath: path).appendingPathComponent(fileName)
            }
            return URL(fileURLWithPath: path)
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent("../shared/testdata/trackers/mailtrackerblocker-trackers.json").standardized
    }

    @Test func realWorldTrackerListLoadsAndFlagsKnownVendors() throws {
        let data = try Data(contentsOf: Self.realWorldListURL())
        let list = try TrackerList(mailTrackerBlockerJSON: data)
        #expect(list.vendors.count == 316)
        #expect(list.ruleCount == 462)
        var options = SanitizerOptions(remote: .allowAll)
        options.trackers = list
        let html = "<img src=\"https://u1.sendgrid.net/wf/open?upn=abc\"><img src=\"https://cdn.shop.example/hero.jpg\">"
        let result = try MailSanitizer(options: options).sanitize(html)
        #expect(result.report.trackers.count == 1)
        #expect(result.html.hasPrefix("<img data-rampart-src=\"https://u1.sendgrid.net/wf/open?upn=abc\">"))
        #expect(result.html.hasSuffix("<img src=\"https://cdn.shop.example/hero.jpg\">"))
    }
}

import HTML5
typealias HTML5Element = HTML5.Element
