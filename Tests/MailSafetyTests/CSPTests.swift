import Foundation
import HTML5
import Testing
@testable import MailSafety

@Suite struct CSPTests {
    @Test func lockdownStageAllowsNothing() {
        let policy = ContentSecurityPolicy.viewer(.lockdown)
        #expect(policy.headerValue.hasPrefix("default-src 'none'; script-src 'none'"))
        #expect(!policy.headerValue.contains("img-src"))
    }

    @Test func embeddedStageAllowsOnlyLocalImages() {
        let policy = ContentSecurityPolicy.viewer(.embeddedImagesOnly, appScheme: "rampart-cid")
        #expect(policy.headerValue.contains("img-src data: rampart-cid:;"))
        #expect(!policy.headerValue.contains("http"))
        #expect(policy.headerValue.contains("script-src 'none'"))
    }

    @Test func remoteStageWidensResourcesButNeverScripts() {
        let policy = ContentSecurityPolicy.viewer(.remoteAllowed)
        #expect(policy.headerValue.contains("img-src data: https: http:"))
        #expect(policy.headerValue.contains("font-src data: https: http:"))
        #expect(policy.headerValue.contains("script-src 'none'"))
        #expect(!policy.headerValue.contains("unsafe-eval"))
    }

    @Test func metaTagOmitsDirectivesMetaCannotCarry() {
        let policy = ContentSecurityPolicy.viewer(.embeddedImagesOnly)
        #expect(policy.headerValue.contains("frame-ancestors"))
        #expect(!policy.metaTag.contains("frame-ancestors"))
        #expect(policy.metaTag.hasPrefix("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'"))
    }

    @Test func composerAllowsItsNonceScriptButNoRemoteLoads() {
        let nonce = ContentSecurityPolicy.makeNonce()
        #expect(nonce.count == 24)
        #expect(nonce != ContentSecurityPolicy.makeNonce())
        let policy = ContentSecurityPolicy.composer(scriptNonce: nonce)
        #expect(policy.headerValue.contains("script-src 'nonce-\(nonce)'"))
        #expect(!policy.headerValue.contains("http"))
        #expect(policy.headerValue.contains("connect-src 'none'"))
    }

    @Test func renderedDocumentPutsTheCSPFirstInHead() throws {
        let message = try MailSanitizer().sanitize("<p>hi</p><style>p{color:red}</style>")
        let document = renderDocument(message, policy: .viewer(.embeddedImagesOnly))
        let parsed = try HTML5Parser.parseDocument(document).root
        let head = parsed.documentElement!.childElements.first { $0.localName == "head" }!
        let first = head.childElements.first!
        #expect(first.localName == "meta")
        #expect(first[attribute: "http-equiv"] == "Content-Security-Policy")
        #expect(document.contains("<div id=\"rampart-message\"><p>hi</p><style>#rampart-message p{color:red}</style></div>"))
    }
}

@Suite struct ComposerTests {
    @Test func quotedMessageKeepsItsLookButLosesAnythingActive() throws {
        let quoted = "<div style=\"color:#333;border-left:2px solid #ccc\" onmouseover=\"steal()\"><b>Earlier</b> message<img src=https://t.example/o.gif><script>alert(1)</script><style>body{font-family:Georgia}</style></div>"
        let result = try ComposerContent().sanitize(quoted, as: .quoted)
        #expect(result.html == "<div style=\"color:#333;border-left:2px solid #ccc\"><b>Earlier</b> message<img data-rampart-src=\"https://t.example/o.gif\"><style>#rampart-composer-quoted{font-family:Georgia}</style></div>")
        #expect(result.wrapperID == "rampart-composer-quoted")
    }

    @Test func composerDocumentRunsOnlyTheNoncedEditorScript() throws {
        let parts: [(ComposerContent.Part, SanitizedMessage)] = [
            (.draft, try ComposerContent().sanitize("Hello<script>evil()</script>", as: .draft)),
            (.signature, try ComposerContent().sanitize("<i>Me</i>", as: .signature)),
        ]
        let document = ComposerContent.renderDocument(parts: parts, editorScript: "editor.start() // </script><script>x", nonce: "abc")
        let parsed = try HTML5Parser.parseDocument(document).root
        let scripts = parsed.descendants.compactMap { $0 as? HTML5.Element }.filter { $0.localName == "script" }
        #expect(scripts.count == 1)
        #expect(scripts.first?[attribute: "nonce"] == "abc")
        #expect(!document.contains("evil"))
    }
}
