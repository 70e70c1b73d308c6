import Foundation
import Hummingbird
import RampartRuntime
import SealedStore

/// The settings page: remote content, trusted senders, autolock.
///
/// Trust-model row **settings (modified: high)**: the stored settings are the sealed store's
/// MAC-protected privacy settings (a value changed on disk falls back to its safe default and the
/// page shows the warning). "Block all remote content" is one of them: it wins over "load remote
/// content", automatic loading and trusted senders, here and in `rampart read`.
struct SettingsRoutes {
    let app: WebApp

    func register(_ router: Router<WebContext>) {
        router.get("/settings") { _, context in
            try await app.page(context) { session, csrf in
                let readout = try session.account.store().privacySettings()
                let settings = readout.settings
                var trusted = ""
                for sender in settings.trustedSenders {
                    trusted += "<li>\(WebPage.escape(sender)) "
                        + WebPage.button("Remove", action: "/settings/untrust", csrf: csrf,
                                         extra: "<input type=\"hidden\" name=\"address\" value=\"\(WebPage.escape(sender))\">") + "</li>"
                }
                let autolock: String = switch settings.autolock {
                case .never: "never"
                case .onBackground: "on background"
                case .afterMinutes(let minutes): "after \(minutes) min idle"
                }
                let warnings = readout.warnings.map { "<p role=\"alert\">\(WebPage.escape($0.description))</p>" }.joined()
                let body = """
                <h1>Settings</h1>\(warnings)\
                <form method="post" action="/settings" id="settings-form">\(WebPage.csrfField(csrf))\
                <fieldset><legend>Remote content</legend>\
                <p><input type="checkbox" id="block-all" name="blockAll" value="on"\(settings.blockAllRemoteContent ? " checked" : "")> \
                <label for="block-all">Block all remote content (wins over everything below)</label></p>\
                <p><input type="checkbox" id="auto-load" name="autoLoad" value="on"\(settings.autoLoadRemoteContent ? " checked" : "")> \
                <label for="auto-load">Load remote content automatically (lets senders track you)</label></p></fieldset>\
                <fieldset><legend>Autolock</legend><label for="autolock">Lock after minutes idle (0: never)</label> \
                <input id="autolock" name="autolock" type="number" min="0" max="1440" value="\(Self.minutes(settings.autolock))"> \
                <span>now: \(WebPage.escape(autolock))</span></fieldset>\
                <button type="submit">Save settings</button></form>\
                <section aria-labelledby="trusted-title"><h2 id="trusted-title">Trusted senders</h2>\
                <p>Remote content of a trusted sender loads only when the message's signature verifies against their pinned key.</p>\
                <ul id="trusted">\(trusted.isEmpty ? "<li>None.</li>" : trusted)</ul>\
                <form method="post" action="/settings/trust">\(WebPage.csrfField(csrf))<label for="trust-address">Address</label> \
                <input id="trust-address" name="address" type="email" required> <button type="submit">Trust this sender</button></form></section>
                """
                return WebHeaders.html(WebPage.document(title: "Settings", csrf: csrf, page: "settings", body: body))
            }
        }
        router.post("/settings") { _, context in
            try await app.page(context) { session, _ in
                let store = try session.account.store()
                var settings = try store.privacySettings().settings
                settings.autoLoadRemoteContent = context.field("autoLoad") == "on"
                if let minutes = context.field("autolock").flatMap(Int.init), (0...1440).contains(minutes) {
                    settings.autolock = minutes == 0 ? .never : .afterMinutes(minutes)
                }
                settings.blockAllRemoteContent = context.field("blockAll") == "on"
                try store.setPrivacySettings(settings)
                return WebHeaders.redirect("/settings")
            }
        }
        for (path, add) in [("/settings/trust", true), ("/settings/untrust", false)] {
            router.post(RouterPath(path)) { _, context in
                try await app.page(context) { session, _ in
                    let address = (context.field("address") ?? "").trimmingCharacters(in: .whitespaces).lowercased()
                    guard address.contains("@") else { throw HTTPError(.badRequest, message: "Give an e-mail address.") }
                    let store = try session.account.store()
                    var settings = try store.privacySettings().settings
                    settings.trustedSenders.removeAll { $0.lowercased() == address }
                    if add { settings.trustedSenders.append(address) }
                    try store.setPrivacySettings(settings)
                    return WebHeaders.redirect("/settings")
                }
            }
        }
    }

    static func minutes(_ setting: AutolockSetting) -> Int {
        if case .afterMinutes(let minutes) = setting { return minutes }
        return 0
    }
}
