import Foundation
import HTTPTypes
import Hummingbird
import MailSafety
import RampartAPI
import NIOCore
import RampartClient
import RampartCore
import RampartRuntime
import SealedStore

/// The mailbox, the message page and the viewer frame.
///
/// Trust-model row **inbox (low)**, as the seeds' rendering design says: the body is sanitized
/// (MailSafety) before anything of it is served, and then only from its own path, into an
/// `<iframe sandbox>` without `allow-scripts`, with its CSP as an HTTP header (lockdown for every
/// answer of that path that is not a sanitized document; embedded images only; remote content
/// only when asked for this message or for a trusted sender whose signature verified, never
/// while "block all remote content" is on).
struct MailRoutes {
    let app: WebApp
    static let pageSize = 25

    func register(_ router: Router<WebContext>) {
        router.get("/") { _, _ in WebHeaders.redirect("/mail") }
        router.get("/mail") { request, context in try await app.page(context) { session, csrf in try await mailbox(request, session, csrf) } }
        router.post("/sync") { _, context in
            try await app.page(context) { session, _ in
                _ = try await session.withAPI { try await MailSync(account: session.account).run(api: $0) }
                return WebHeaders.redirect("/mail")
            }
        }
        router.get("/message/:id") { _, context in
            try await app.page(context) { session, csrf in try await message(try context.parameters.require("id"), session, csrf) }
        }
        router.post("/message/:id/remote") { _, context in
            let id = try context.parameters.require("id")
            return try await app.page(context) { _, _ in
                app.allowRemote(for: id)
                return WebHeaders.redirect("/message/\(Self.pathComponent(id))")
            }
        }
        // Marking read changes state, so it is a POST with the CSRF token (sent by the app's own
        // script once the message page has loaded): a link from another page, even one on another
        // port of this machine (same site: the cookie goes along), only shows the message.
        router.post("/message/:id/read") { _, context in
            let id = try context.parameters.require("id")
            return try await app.page(context) { session, _ in
                let store = try session.account.store()
                let message = try store.mail.message(id: id)
                if message.flags.contains(.unread) { try store.mail.setFlags(message.flags.subtracting(.unread), messageID: id) }
                return Response(status: .noContent)
            }
        }
        router.get("/viewer/:id") { _, context in try await viewer(try context.parameters.require("id"), context) }
        router.get("/attachment/:id") { _, context in
            let id = try context.parameters.require("id")
            return try await app.page(context) { session, _ in
                let vault = try AttachmentVault(account: session.account)
                let attachment = try vault.metadata(id)
                let data = try await session.withAPI { try await vault.contents(of: attachment, api: $0) }
                return Self.download(data, name: attachment.name)
            }
        }
    }

    /// A download: always `application/octet-stream` with `attachment` disposition, so no file
    /// from mail or drive is ever rendered in the app's origin.
    static func download(_ data: Data, name: String) -> Response {
        let safe = String(name.unicodeScalars.filter { $0.isASCII && $0.value >= 0x20 && $0 != "\"" && $0 != "\\" }.map(Character.init))
        let encoded = name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "file"
        return Response(status: .ok, headers: [.contentType: "application/octet-stream",
                                               .contentDisposition: "attachment; filename=\"\(safe.isEmpty ? "file" : safe)\"; filename*=UTF-8''\(encoded)"],
                        body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }

    static func pathComponent(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-_."))) ?? id
    }

    // MARK: - mailbox

    func mailbox(_ request: Request, _ session: AccountSession, _ csrf: String) async throws -> Response {
        try await app.syncOnce(session)
        let store = try session.account.store()
        let labels = try store.mail.labels()
        let query = request.uri.queryParameters
        let labelID = query.get("label") ?? SystemLabel.inbox
        let search = query.get("q")?.trimmingCharacters(in: .whitespaces) ?? ""
        let cursor = query.get("before").flatMap { PageCursor(String($0)) }
        // The pages before this one (newest first), for the link back: "top" is the first page.
        let newer = (query.get("newer") ?? "").split(separator: ",").map(String.init)
        var messages: [MailMessage]
        if !search.isEmpty {
            let words = search.split(whereSeparator: { $0.isWhitespace }).map(String.init)
            messages = try store.mail.search(MailSearchQuery(words: words, limit: 200)).map { try store.mail.message(id: $0) }
            messages.sort { ($0.time, $0.id) > ($1.time, $1.id) }
            if let cursor { messages = Array(messages.filter { $0.time <= cursor.time }.dropFirst(cursor.skip)) }
            messages = Array(messages.prefix(Self.pageSize + 1))
        } else if let cursor {
            // From the first message at the cursor's second, without the ones shown already.
            messages = Array(try store.mail.messages(label: labelID, limit: Self.pageSize + 1 + cursor.skip, before: cursor.time + 1).dropFirst(cursor.skip))
        } else {
            messages = try store.mail.messages(label: labelID, limit: Self.pageSize + 1)
        }
        let more = messages.count > Self.pageSize
        messages = Array(messages.prefix(Self.pageSize))
        var side = "<nav aria-label=\"Labels\" id=\"labels\"><ul>"
        // Exact counts in one statement over the clear flags and label links (nothing decrypted).
        let unreadCounts = try store.mail.unreadCounts()
        for label in labels {
            let unread = unreadCounts[label.id] ?? 0
            let current = label.id == labelID && search.isEmpty ? " aria-current=\"page\"" : ""
            side += "<li><a href=\"/mail?label=\(WebPage.escape(Self.pathComponent(label.id)))\"\(current)>\(WebPage.escape(label.name))"
                + (unread > 0 ? " <span class=\"unread-count\" aria-label=\"\(unread) unread\">\(unread)</span>" : "") + "</a></li>"
        }
        side += "</ul></nav>"
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        var rows = ""
        for message in messages {
            let unread = message.flags.contains(.unread)
            let from = message.sender.name.isEmpty ? message.sender.address : message.sender.name
            rows += "<li class=\"message\(unread ? " unread" : "")\"><a href=\"/message/\(WebPage.escape(Self.pathComponent(message.id)))\">"
                + "<span class=\"from\">\(WebPage.escape(from))</span> <span class=\"subject\">\(WebPage.escape(message.subject.isEmpty ? "(no subject)" : message.subject))</span> "
                + "<time>\(formatter.string(from: Date(timeIntervalSince1970: TimeInterval(message.time))))</time>"
                + (unread ? " <span class=\"badge\">unread</span>" : "")
                + (message.flags.contains(.hasAttachments) ? " <span class=\"badge\">attachment</span>" : "") + "</a></li>"
        }
        if messages.isEmpty { rows = "<li>\(search.isEmpty ? "No messages." : "No message matches.")</li>" }
        var pager = ""
        let list = "/mail?label=\(Self.pathComponent(labelID))" + (search.isEmpty ? "" : "&q=\(Self.pathComponent(search))")
        if let previous = newer.last {
            let back = list + (previous == "top" ? "" : "&before=\(Self.pathComponent(previous))")
                + (newer.count > 1 ? "&newer=\(Self.pathComponent(newer.dropLast().joined(separator: ",")))" : "")
            pager += "<a href=\"\(WebPage.escape(back))\" id=\"previous-page\">Newer messages</a> "
        }
        if more, let next = PageCursor(after: messages, from: cursor) {
            let here = newer + [cursor?.text ?? "top"]
            pager += "<a href=\"\(WebPage.escape(list + "&before=\(Self.pathComponent(next.text))&newer=\(Self.pathComponent(here.joined(separator: ",")))"))\" id=\"next-page\">Older messages</a>"
        }
        let first = newer.count * Self.pageSize + 1
        if !messages.isEmpty {
            pager = "<p id=\"page-range\">Messages \(first)–\(first + messages.count - 1)</p>" + pager
        }
        let title = search.isEmpty ? (labels.first { $0.id == labelID }?.name ?? labelID) : "Search: \(search)"
        let body = """
        <div class="columns">\(side)<section aria-labelledby="list-title"><h1 id="list-title">\(WebPage.escape(title))</h1>\
        <form method="get" action="/mail" role="search"><label for="q">Search mail</label> \
        <input id="q" name="q" type="search" value="\(WebPage.escape(search))"> <button type="submit">Search</button></form> \
        \(WebPage.button("Check for new mail", action: "/sync", csrf: csrf))\
        <ul id="messages">\(rows)</ul>\(pager)</section></div>
        """
        return WebHeaders.html(WebPage.document(title: title, csrf: csrf, page: "mailbox", body: body))
    }

    // MARK: - message

    /// The remote-content decision for the page and the frame: what was asked, what the stored
    /// settings say ("block all remote content" wins, as in `rampart read`).
    /// Embedded images are never opened for this: they are written as `embedded` (a rendering's
    /// path, see ``RemoteRoutes``) and served from there.
    func render(_ id: String, _ session: AccountSession, proxy: RemoteProxy? = nil, embedded: String) async throws -> RenderedMessage {
        try await session.withAPI {
            try await MessageReader(account: session.account).render(id, loadRemote: app.remoteAllowed(for: id), api: $0, proxy: proxy,
                                                                     servedImages: embedded)
        }
    }

    func message(_ id: String, _ session: AccountSession, _ csrf: String) async throws -> Response {
        // The page shows no body: its rendering's image path is never recorded, so it serves nothing.
        let rendered = try await render(id, session, embedded: app.renderingLinks().embedded)
        let message = rendered.message
        let store = try session.account.store()
        let settings = try store.privacySettings().settings
        let sender = message.sender.address.lowercased()
        let trusted = settings.trustedSenders.contains { $0.lowercased() == sender }
        let signature = rendered.signature ?? SignatureVerdict(.none)
        var trust = trusted ? "Trusted sender: remote content loads when the signature verifies." : "Not a trusted sender."
        if rendered.unverifiedTrustedSender { trust = "Trusted sender, but this message's signature did not verify: remote content stays blocked." }
        var remote: String
        switch rendered.remote {
        case .block:
            remote = "<p id=\"remote-state\">Remote content blocked (\(rendered.blockedRemoteCount) remote resource\(rendered.blockedRemoteCount == 1 ? "" : "s"), \(rendered.trackerCount) tracker\(rendered.trackerCount == 1 ? "" : "s")).</p>"
            if rendered.blockedBySettings {
                remote += "<p>“Block all remote content” is on in the settings.</p>"
            } else if rendered.blockedRemoteCount > 0 {
                remote += WebPage.button("Load remote content", action: "/message/\(Self.pathComponent(id))/remote", csrf: csrf, id: "load-remote")
            }
        default:
            remote = "<p id=\"remote-state\">Remote content loaded (trackers stay blocked: \(rendered.trackerCount)).</p>"
        }
        var attachments = ""
        for attachment in rendered.attachments {
            attachments += "<li><a href=\"/attachment/\(WebPage.escape(Self.pathComponent(attachment.id)))\" download>\(WebPage.escape(attachment.name))</a> "
                + "(\(WebPage.escape(attachment.mimeType)), \(attachment.size) bytes)</li>"
        }
        for attachment in rendered.protectedAttachments {
            attachments += "<li>\(WebPage.escape(attachment.name)) (inside the OpenPGP message, \(attachment.size) bytes)</li>"
        }
        let to = message.recipients.map { WebPage.escape($0.address) }.joined(separator: ", ")
        let body = """
        <article aria-labelledby="subject"\(message.flags.contains(.unread) ? " data-mark-read=\"/message/\(WebPage.escape(Self.pathComponent(id)))/read\"" : "")><h1 id="subject">\(WebPage.escape(message.subject.isEmpty ? "(no subject)" : message.subject))</h1>\
        <dl class="headers"><dt>From</dt><dd id="from">\(WebPage.escape(message.sender.name)) &lt;\(WebPage.escape(message.sender.address))&gt;</dd>\
        <dt>To</dt><dd>\(to)</dd>\
        <dt>Date</dt><dd>\(WebPage.escape(Date(timeIntervalSince1970: TimeInterval(message.time)).description))</dd>\
        <dt>Signature</dt><dd id="signature">\(WebPage.escape(signature.line))</dd>\
        <dt>Sender</dt><dd id="trust">\(WebPage.escape(trust))</dd></dl>\
        \(remote)\
        <p class="actions"><a href="/compose?reply=\(WebPage.escape(Self.pathComponent(id)))">Reply</a> \
        <a href="/compose?forward=\(WebPage.escape(Self.pathComponent(id)))">Forward</a></p>\
        \(attachments.isEmpty ? "" : "<section aria-label=\"Attachments\"><h2>Attachments</h2><ul id=\"attachments\">\(attachments)</ul></section>")\
        <iframe id="viewer" title="Message body" sandbox="allow-popups allow-popups-to-escape-sandbox" \
        src="/viewer/\(WebPage.escape(Self.pathComponent(id)))"></iframe></article>
        """
        return WebHeaders.html(WebPage.document(title: message.subject, csrf: csrf, page: "message", body: body))
    }

    // MARK: - viewer

    /// The viewer's CSP as a header: MailSafety's stage, framed only by the app itself, and
    /// sandboxed by the header too (no scripts even when the document is opened on its own).
    static func viewerPolicy(_ stage: MailSafety.ContentSecurityPolicy.ViewerStage, proxyOrigin: String? = nil, embedded: String? = nil) -> String {
        MailSafety.ContentSecurityPolicy.viewer(stage, proxyOrigin: proxyOrigin, servedPrefix: embedded).headerValue.replacingOccurrences(of: "frame-ancestors 'none'", with: "frame-ancestors 'self'")
            + "; sandbox allow-popups allow-popups-to-escape-sandbox"
    }

    func viewer(_ id: String, _ context: WebContext) async throws -> Response {
        // Until the sanitized document is served, the viewer's path answers under lockdown.
        let lockdown: HTTPFields = [.contentSecurityPolicy: Self.viewerPolicy(.lockdown)]
        guard app.account.state() == .unlocked else {
            return WebHeaders.html("<!DOCTYPE html><title>Locked</title><p>Locked.</p>", status: .forbidden, headers: lockdown)
        }
        do {
            return try await app.account.withSession { session in
                // Remote content, when allowed, goes through the backend, and embedded images come
                // from the file vault: URLs and images of this rendering's token only.
                let (token, proxy, prefix) = app.renderingLinks()
                let rendered = try await render(id, session, proxy: proxy, embedded: prefix)
                var embedded: [String: ViewerRendering.Embedded] = [:]
                for attachment in rendered.attachments {
                    if let contentID = AttachmentVault.contentID(of: attachment) { embedded[RemoteProxy.encode(contentID)] = .attachment(id: attachment.id) }
                }
                for part in rendered.protectedAttachments {
                    if let contentID = part.contentID, !contentID.isEmpty { embedded[RemoteProxy.encode(contentID)] = .protected(contentID: contentID) }
                }
                let remote = rendered.remote.allowsRemote
                app.recordRendering(token: token, messageID: id, urls: remote ? proxy.remoteURLs(in: rendered.sanitized.html) : [], embedded: embedded)
                let policy = Self.viewerPolicy(remote ? .remoteAllowed : .embeddedImagesOnly, proxyOrigin: remote ? proxy.origin : nil, embedded: prefix)
                return WebHeaders.html(rendered.document, headers: [.contentSecurityPolicy: policy])
            }
        } catch {
            return WebHeaders.html("<!DOCTYPE html><title>Not shown</title><p>\(WebPage.escape("\(error)"))</p>", status: .notFound, headers: lockdown)
        }
    }
}

/// Where a mailbox page starts: before the `skip`-th message (newest first) of second `time`, so
/// that messages of one second on both sides of a page's end are neither skipped nor shown twice.
/// Written `TIME.SKIP` in the page's link.
struct PageCursor: Equatable {
    var time: Int64
    var skip: Int

    init(time: Int64, skip: Int) { (self.time, self.skip) = (time, skip) }

    init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let time = Int64(parts[0]), time >= 0 else { return nil }
        let skip = parts.count == 2 ? Int(parts[1]) : 0
        guard let skip, skip >= 0, skip < 1_000_000 else { return nil }
        (self.time, self.skip) = (time, skip)
    }

    /// The cursor after `page` (newest first), which began at `previous`; none after an empty page.
    init?(after page: [MailMessage], from previous: PageCursor?) {
        guard let last = page.last else { return nil }
        let sameSecond = page.filter { $0.time == last.time }.count
        self.init(time: last.time, skip: sameSecond + (previous?.time == last.time ? previous?.skip ?? 0 : 0))
    }

    var text: String { "\(time).\(skip)" }
}
