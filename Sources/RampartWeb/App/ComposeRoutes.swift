import Foundation
import HTTPTypes
import Hummingbird
import MailSafety
import RampartAPI
import RampartClient
import RampartCore
import RampartRuntime
import SealedStore

/// The composer: new mail, reply and forward, sent through the OpenPGP / PGP-MIME path.
///
/// Trust-model row **outbox (composer)**: the quoted message of a reply or forward is sanitized
/// (MailSafety's ``ComposerContent``, remote content blocked, active content removed) before it
/// goes into the editor; the page runs only the app's scripts, by nonce, under a CSP that allows
/// no remote load of any kind; before sending, the page says which recipients will not get the
/// message end-to-end encrypted, and the result says it again.
struct ComposeRoutes {
    let app: WebApp

    /// The composer page's policy: the app's scripts by nonce, no remote loads.
    static func policy(nonce: String) -> String {
        "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src data:; "
            + "connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; frame-src 'none'; frame-ancestors 'none'"
    }

    func register(_ router: Router<WebContext>) {
        router.get("/compose") { request, context in
            try await app.page(context) { session, csrf in try composer(request, session, csrf) }
        }
        router.get("/api/recipients") { request, context in
            try await app.page(context) { session, _ in
                let addresses = Self.addresses(request.uri.queryParameters.get("to") ?? "")
                let contacts = ContactKeys(account: session.account)
                var entries: [String] = []
                try await session.withAPI { api in
                    for address in addresses {
                        var encrypted = (try? contacts.pinned(address)) != nil
                        if !encrypted {
                            do { _ = try await api.publicKey(of: address); encrypted = true } catch ClientError.http(404, _) { encrypted = false }
                        }
                        entries.append("{\"address\":\(Self.jsonString(address)),\"e2ee\":\(encrypted)}")
                    }
                }
                return WebHeaders.json("[" + entries.joined(separator: ",") + "]")
            }
        }
        router.put("/compose/attachment") { request, context in
            try await app.page(context) { session, _ in
                let name = DriveRoutes.fileName(request.uri.queryParameters.get("name") ?? "")
                let folder = try DriveRoutes.privateFolder(session)
                let file = folder.appendingPathComponent(name)
                do {
                    try await DriveRoutes.receive(request, into: file, limit: OutgoingMail.maximumAttachmentBytes)
                } catch {
                    DriveRoutes.erase(folder)
                    throw error
                }
                return WebHeaders.json("{\"id\":\(Self.jsonString(app.holdAttachment(file)))}")
            }
        }
        router.post("/compose/send") { _, context in
            try await app.page(context) { session, csrf in try await send(context, session, csrf) }
        }
    }

    static func addresses(_ text: String) -> [String] {
        text.split(whereSeparator: { $0 == "," || $0 == ";" || $0.isWhitespace }).map(String.init).filter { $0.contains("@") }
    }

    static func jsonString(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    func composer(_ request: Request, _ session: AccountSession, _ csrf: String) throws -> Response {
        let query = request.uri.queryParameters
        var to = "", subject = "", quoted = ""
        if let id = query.get("reply") ?? query.get("forward") {
            let original = try MessageReader(account: session.account).message(id)
            let isReply = query.get("reply") != nil
            to = isReply ? original.sender.address : ""
            subject = (isReply ? "Re: " : "Fwd: ") + original.subject
            // Sanitized before it goes in: the quoted part is mail from outside.
            let clean = try ComposerContent().sanitize(original.body, as: .quoted)
            let intro = "\(original.sender.name.isEmpty ? original.sender.address : original.sender.name) wrote:"
            quoted = "<p><br></p><p>\(WebPage.escape(intro))</p><blockquote type=\"cite\">\(clean.html)</blockquote>"
        }
        let account = try session.account.session()
        let addresses = account.addresses.isEmpty ? [account.username] : account.addresses
        let from = addresses.map { "<option value=\"\(WebPage.escape($0))\">\(WebPage.escape($0))</option>" }.joined()
        let nonce = MailSafety.ContentSecurityPolicy.makeNonce()
        let body = """
        <h1>New message</h1><form method="post" action="/compose/send" id="composer">\(WebPage.csrfField(csrf))\
        <p><label for="from">From</label> <select id="from" name="from">\(from)</select></p>\
        <p><label for="to">To</label> <input id="to" name="to" type="text" required value="\(WebPage.escape(to))" \
        aria-describedby="e2ee-status"></p><p id="e2ee-status" role="status" aria-live="polite"></p>\
        <p><label for="subject">Subject</label> <input id="subject" name="subject" type="text" value="\(WebPage.escape(subject))"></p>\
        <p><label for="attach">Attach files</label> <input id="attach" type="file" multiple> \
        <span id="attach-status" role="status" aria-live="polite"></span></p><ul id="attached"></ul>\
        <p id="editor-label">Message</p><div id="editor" contenteditable="true" role="textbox" aria-multiline="true" \
        aria-labelledby="editor-label" tabindex="0">\(quoted)</div>\
        <textarea id="body" name="body" hidden aria-hidden="true"></textarea>\
        <p><button type="submit" id="send">Send</button></p></form>
        """
        var response = WebHeaders.html(WebPage.document(title: "Compose", csrf: csrf, page: "compose", nonce: nonce, body: body))
        response.headers[.contentSecurityPolicy] = Self.policy(nonce: nonce)
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        return response
    }

    func send(_ context: WebContext, _ session: AccountSession, _ csrf: String) async throws -> Response {
        let to = Self.addresses(context.field("to") ?? "")
        guard !to.isEmpty else { throw HTTPError(.badRequest, message: "Give at least one recipient address.") }
        let account = try session.account.session()
        let chosen = context.field("from").flatMap { from in account.addresses.first { $0.lowercased() == from.lowercased() } }
        let sender = Correspondent(name: account.displayName, address: chosen ?? account.addresses.first ?? account.username)
        var html = context.field("body") ?? ""
        if html.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { html = "<p></p>" }
        // Attachments the page uploaded first (each a cleartext file in a private lease folder, erased after the send).
        let attachments = (context.form["attachment"] ?? []).compactMap { app.takeAttachment($0) }
        defer { attachments.forEach { DriveRoutes.erase($0.deletingLastPathComponent()) } }
        let mail = OutgoingMail(to: to, subject: context.field("subject") ?? "", body: html, isPlainText: false, attachments: attachments)
        let signer = try session.account.mailboxKey()
        let result = try await session.withAPI {
            try await SendFlow.send(mail, from: sender, signer: signer, api: $0, contacts: ContactKeys(account: session.account))
        }
        let outside = (result.response.deliveries ?? []).filter { $0.route == .outbox }.map(\.address)
        var lines = result.notices.map { "<li>\(WebPage.escape($0))</li>" }.joined()
        if !outside.isEmpty {
            lines += "<li id=\"not-e2ee\"><strong>\(WebPage.escape(result.outsideLine ?? "NOT end-to-end encrypted: \(outside.joined(separator: ", "))."))</strong></li>"
        }
        let body = """
        <h1>Sent</h1><p id="sent" role="status">Sent to \(WebPage.escape(to.joined(separator: ", "))) with \(attachments.count) attachment\(attachments.count == 1 ? "" : "s"): encrypted with OpenPGP \
        to every recipient on this server and signed with your key.</p><ul>\(lines)</ul><p><a href="/mail">Back to the mailbox</a></p>
        """
        return WebHeaders.html(WebPage.document(title: "Sent", csrf: csrf, page: "sent", body: body))
    }
}
