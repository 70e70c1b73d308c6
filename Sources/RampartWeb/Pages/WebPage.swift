import Foundation
import HTML5

/// The app's pages: one shell (navigation, the app's own style sheet and script, the CSRF token
/// for the script), and every piece of mail text escaped as the HTML5 serializer escapes it.
///
/// Trust-model row **inbox (low)**: text from mail (subjects, names, addresses, file names) is
/// only ever written into the app's pages escaped; the message body itself is never in a page of
/// the app, only in the sandboxed viewer frame.
enum WebPage {
    static func escape(_ text: String) -> String {
        var out = ""
        HTMLSerializer.escape(text, attributeMode: false, into: &out)
        return out.replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "'", with: "&#39;")
    }

    /// A hidden CSRF field for a form.
    static func csrfField(_ token: String) -> String {
        "<input type=\"hidden\" name=\"\(WebAccessControl.csrfField)\" value=\"\(escape(token))\">"
    }

    /// A POST form with one button.
    static func button(_ label: String, action: String, csrf: String, id: String? = nil, extra: String = "") -> String {
        "<form method=\"post\" action=\"\(escape(action))\" class=\"inline\">\(csrfField(csrf))\(extra)"
            + "<button type=\"submit\"\(id.map { " id=\"\($0)\"" } ?? "")>\(escape(label))</button></form>"
    }

    /// The whole document: `csrf` nil for pages shown before sign-in or while locked (no
    /// navigation, no polling of the account state).
    static func document(title: String, csrf: String?, nav: Bool = true, page: String = "page", nonce: String? = nil, body: String) -> String {
        let nonceAttribute = nonce.map { " nonce=\"\($0)\"" } ?? ""
        var navigation = ""
        if nav, let csrf {
            navigation = """
            <header><nav aria-label="Sections"><a href="/">Mail</a> <a href="/compose">Compose</a> <a href="/drive">Drive</a> \
            <a href="/settings">Settings</a> <a href="/account">Account</a> \
            \(button("Lock", action: "/lock", csrf: csrf, id: "lock-button"))</nav></header>
            """
        }
        return """
        <!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">\
        <title>\(escape(title)) · Rampart</title><link rel="stylesheet" href="/static/app.css">\
        <script src="/static/app.js"\(nonceAttribute) defer></script></head>\
        <body data-page="\(escape(page))"\(csrf.map { " data-csrf=\"\(escape($0))\"" } ?? "")>\(navigation)\
        <main id="main">\(body)</main></body></html>
        """
    }
}
