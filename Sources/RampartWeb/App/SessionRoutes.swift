import Foundation
import Hummingbird
import Keymaker
import RampartAgent
import RampartCore
import RampartRuntime

/// Signing in with the one-time token, unlocking and locking, the account state the pages'
/// script polls, the app's static files, and the account page.
///
/// Trust-model rows **local web access** (the token becomes an `HttpOnly`, `SameSite=Strict`
/// cookie; a used or wrong token answers 401) and **device memory (moderate)** (the PIN goes to
/// the agent as `SecretBytes`; a lock anywhere empties the open pages within a second).
struct SessionRoutes {
    let app: WebApp

    func register(_ router: Router<WebContext>) {
        router.get("/login") { request, _ in
            guard let session = app.access.redeem(token: request.uri.queryParameters.get("token")) else {
                return WebHeaders.refusal(.unauthorized, "This sign-in link is wrong or was already used. Run `rampart web` again for a new one.")
            }
            return Response(status: .seeOther, headers: [.location: "/", .setCookie: WebAccessControl.setCookie(session)])
        }
        router.get("/static/app.js") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/javascript; charset=utf-8"], body: .init(byteBuffer: .init(string: WebAssets.script)))
        }
        router.get("/static/app.css") { _, _ in
            Response(status: .ok, headers: [.contentType: "text/css; charset=utf-8"], body: .init(byteBuffer: .init(string: WebAssets.styleSheet)))
        }
        router.get("/api/state") { _, _ in WebHeaders.json("{\"state\":\"\(app.account.state().rawValue)\"}") }
        router.get("/unlock") { _, context in unlockPage(context, message: nil) }
        router.post("/unlock") { _, context in
            let text = context.field("pin") ?? ""
            var bytes = Array(text.utf8)
            let pin: SecretBytes? = text.isEmpty ? nil : SecretBytes(consuming: &bytes)
            do {
                try app.account.unlock(pin: pin)
                return WebHeaders.redirect("/mail")
            } catch {
                return unlockPage(context, message: "\(error)", status: .unauthorized)
            }
        }
        router.post("/lock") { _, _ in
            app.account.lockNow()
            return WebHeaders.redirect("/unlock")
        }
        // Ending another session of the account changes state: a POST with the CSRF token.
        router.post("/account/sessions/:id/end") { _, context in
            let id = try context.parameters.require("id")
            return try await app.page(context) { session, _ in
                try await session.withAPI { try await $0.endSession(id) }
                return WebHeaders.redirect("/account")
            }
        }
        router.get("/account") { _, context in
            try await app.page(context) { session, csrf in
                let protectors = (try? session.keymaker.activeProtectors().map(\.rawValue)) ?? []
                let account = try session.account.session()
                let sessions = try await session.withAPI { try await $0.sessions() }
                var rows = ""
                for item in sessions {
                    let created = Date(timeIntervalSince1970: TimeInterval(item.created)).formatted(.iso8601)
                    rows += "<li>Logged in \(WebPage.escape(created))" + (item.current ? " <strong>(this device)</strong>"
                        : " " + WebPage.button("End the session of \(created)", action: "/account/sessions/\(item.id)/end", csrf: csrf)) + "</li>"
                }
                let body = """
                <h1>Account</h1><dl class="headers"><dt>User</dt><dd>\(WebPage.escape(session.userID.rawValue))</dd>\
                <dt>Name</dt><dd>\(WebPage.escape(account.displayName))</dd>\
                <dt>Addresses</dt><dd>\(account.addresses.map(WebPage.escape).joined(separator: ", "))</dd>\
                <dt>Protectors</dt><dd id="protectors">\(protectors.map(WebPage.escape).joined(separator: ", "))</dd>\
                <dt>This session</dt><dd>Signed in through the one-time URL; ends when <code>rampart web</code> stops.</dd></dl>\
                <section aria-labelledby="sessions-title"><h2 id="sessions-title">Sessions of the account</h2><ul id="sessions">\(rows)</ul></section>\
                <p>Change the PIN or the protectors with <code>rampart change-pin</code> and <code>rampart protect</code>.</p>
                """
                return WebHeaders.html(WebPage.document(title: "Account", csrf: csrf, page: "account", body: body))
            }
        }
    }

    func unlockPage(_ context: WebContext, message: String?, status: HTTPResponse.Status = .ok) -> Response {
        guard let csrf = context.session?.csrfToken else { return WebHeaders.refusal(.unauthorized, "Not signed in.") }
        if app.account.state() == .unlocked, message == nil { return WebHeaders.redirect("/mail") }
        let needsPIN = app.account.unlockNeedsPIN()
        let field = needsPIN
            ? "<label for=\"pin\">PIN</label> <input id=\"pin\" name=\"pin\" type=\"password\" inputmode=\"numeric\" autocomplete=\"off\" required autofocus>"
            : "<p>No PIN is needed on this machine.</p>"
        let body = """
        <h1>Locked</h1><p>Rampart is locked for \(WebPage.escape(app.account.userID.rawValue)): no mail is shown.</p>\
        \(message.map { "<p role=\"alert\" id=\"error\">\(WebPage.escape($0))</p>" } ?? "")\
        <form method="post" action="/unlock" id="unlock-form">\(WebPage.csrfField(csrf))\(field) <button type="submit">Unlock</button></form>
        """
        return WebHeaders.html(WebPage.document(title: "Locked", csrf: csrf, nav: false, page: "unlock", body: body), status: status)
    }
}
