import Foundation
import Hummingbird
import Logging
import MailSafety
import NIOCore
import RampartClient
import RampartCore
import RampartRuntime
import ServiceLifecycle

/// `rampart web`: the local web app over one account, on 127.0.0.1.
///
/// Trust-model rows **local web access** (who may use it: ``WebAccessControl``, the guard every
/// request passes, ``LoopbackPeer``) and **inbox (low)** (how mail is shown: the mail routes). The account is
/// opened through the composition root as a client of the agent (``WebAccount``).
public final class WebApp: @unchecked Sendable {
    public let account: WebAccount
    public let access: WebAccessControl
    let lock = NSLock()
    private var remoteAllowed: Set<String> = []
    private var synced = false
    private var heldAttachments: [String: URL] = [:]
    private var renderings: [String: ViewerRendering] = [:]
    /// How long a rendering's token works (the frame loads its images at once).
    static let remoteTokenLifetime: Duration = .seconds(300)

    init(account: WebAccount, access: WebAccessControl) {
        self.account = account
        self.access = access
    }

    // MARK: - per-process choices

    func allowRemote(for id: String) { lock.withLock { _ = remoteAllowed.insert(id) } }
    func remoteAllowed(for id: String) -> Bool { lock.withLock { remoteAllowed.contains(id) } }

    /// A fresh token for one rendering of a message, with the remote proxy's prefix and the path
    /// its embedded images are served at (see ``RemoteRoutes``).
    func renderingLinks() -> (token: String, proxy: RemoteProxy, embedded: String) {
        let token = WebAccessControl.randomToken()
        return (token, RemoteProxy(prefix: "http://127.0.0.1:\(access.port)/remote/\(token)/")!, Self.embeddedPrefix(port: access.port, token: token))
    }

    /// `http://127.0.0.1:PORT/viewer/TOKEN/cid/`: where a rendering's embedded images are served.
    static func embeddedPrefix(port: Int, token: String) -> String { "http://127.0.0.1:\(port)/viewer/\(token)/cid/" }

    /// Records what a rendering made with `token` may load (its user, message, remote URLs and
    /// embedded images).
    func recordRendering(token: String, messageID: String, urls: [String], embedded: [String: ViewerRendering.Embedded]) {
        let now = ContinuousClock.now
        lock.withLock {
            renderings = renderings.filter { $0.value.expires > now }
            renderings[token] = ViewerRendering(userID: account.userID.description, messageID: messageID, urls: Set(urls),
                                                embedded: embedded, expires: now + Self.remoteTokenLifetime)
        }
    }

    /// The current rendering `token` names, when it is this account's user's.
    func rendering(_ token: String) -> ViewerRendering? {
        lock.withLock {
            guard let render = renderings[token], render.expires > .now, render.userID == account.userID.description else { return nil }
            return render
        }
    }

    /// Whether `token` is a current rendering's, of this account's user, that wrote `url`.
    func remoteRenderAllows(token: String, url: String) -> Bool { rendering(token)?.urls.contains(url) ?? false }

    /// Keeps a composer attachment's file until the send names its id.
    func holdAttachment(_ file: URL) -> String {
        let id = WebAccessControl.randomToken()
        lock.withLock { heldAttachments[id] = file }
        return id
    }

    /// The file of an attachment id (once).
    func takeAttachment(_ id: String) -> URL? { lock.withLock { heldAttachments.removeValue(forKey: id) } }

    /// Fetches new mail the first time the mailbox is shown after an unlock.
    func syncOnce(_ session: AccountSession) async throws {
        guard lock.withLock({ !synced }) else { return }
        _ = try await session.withAPI { try await MailSync(account: session.account).run(api: $0) }
        lock.withLock { synced = true }
    }

    /// Runs a signed-in page: the unlock form while locked, activity recorded for autolock, and a
    /// readable error page when the operation fails.
    func page(_ context: WebContext, _ body: (AccountSession, String) async throws -> Response) async throws -> Response {
        guard let csrf = context.session?.csrfToken else { throw HTTPError(.unauthorized) }
        switch account.state() {
        case .unlocked: break
        case .locked: return WebHeaders.redirect("/unlock")
        case .noAccount:
            return WebHeaders.html(WebPage.document(title: "No account", csrf: nil, nav: false, body:
                "<h1>No account here</h1><p>Log in with <code>rampart login</code> on this machine first.</p>"), status: .notFound)
        }
        account.touch()
        do {
            return try await account.withSession { try await body($0, csrf) }
        } catch is LockedError {
            return WebHeaders.redirect("/unlock")
        } catch let error as HTTPError {
            throw error
        } catch {
            let page = WebPage.document(title: "Error", csrf: csrf, body: "<h1>That did not work</h1><p role=\"alert\" id=\"error\">\(WebPage.escape("\(error)"))</p>")
            return WebHeaders.html(page, status: .badRequest)
        }
    }

    // MARK: - serving

    /// The app's routes. Every request, unknown paths included, goes through ``WebGuard`` first
    /// (see ``AccessHolder``).
    func router() -> Router<WebContext> {
        let router = Router(context: WebContext.self)
        SessionRoutes(app: self).register(router)
        MailRoutes(app: self).register(router)
        ComposeRoutes(app: self).register(router)
        DriveRoutes(app: self).register(router)
        SettingsRoutes(app: self).register(router)
        RemoteRoutes(app: self).register(router)
        return router
    }

    /// A running web app: its port and one-time URL, and a way to stop it.
    public struct Running: Sendable {
        public let port: Int
        public let url: String
        let group: ServiceGroup
        let task: Task<Void, Never>

        public func stop() async {
            await group.triggerGracefulShutdown()
            await task.value
        }

        public func waitUntilStopped() async { await task.value }
    }

    /// Starts serving `account` on 127.0.0.1:`port` (0: any free port), on threads of its own.
    public static func start(account: WebAccount, port: Int, logger: Logger = Logger(label: "rampart.web")) async throws -> (WebApp, Running) {
        let bound = AsyncStream<Int>.makeStream()
        // The port is known only once bound; the access control is made for it right after.
        let holder = AccessHolder()
        let threads = ServerTasks.makeThreads(count: 2, name: "rampart-web")
        let responder = CallbackResponder<WebContext> { request, context in
            guard let (guardian, routes) = holder.current else { return WebHeaders.refusal(.serviceUnavailable, "Starting.") }
            return try await guardian.handle(request, context: context) { try await routes.respond(to: $0, context: $1) }
        }
        let application = Application(
            responder: responder,
            configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: "rampart-web"),
            onServerRunning: { channel in
                bound.continuation.yield(channel.localAddress?.port ?? 0)
                bound.continuation.finish()
            },
            logger: logger)
        let group = ServiceGroup(configuration: .init(services: [application], logger: logger))
        let task = ServerTasks.start(on: threads) {
            defer { bound.continuation.finish(); ServerTasks.shutdown(threads) }
            try? await group.run()
        }
        var iterator = bound.stream.makeAsyncIterator()
        guard let actual = await iterator.next(), actual > 0 else {
            await task.value
            throw RuntimeError.badInput("Cannot listen on 127.0.0.1:\(port) (is the port in use?).")
        }
        let app = WebApp(account: account, access: WebAccessControl(port: actual))
        holder.set(WebGuard(access: app.access), app.router())
        return (app, Running(port: actual, url: app.access.oneTimeURL(token: app.access.pendingToken ?? ""), group: group, task: task))
    }
}

/// The guard and the routes, set once the port is known (the Host and Origin checks need it).
final class AccessHolder: @unchecked Sendable {
    private let lock = NSLock()
    private var value: (WebGuard, RouterResponder<WebContext>)?
    func set(_ guardian: WebGuard, _ router: Router<WebContext>) { lock.withLock { value = (guardian, router.buildResponder()) } }
    var current: (WebGuard, RouterResponder<WebContext>)? { lock.withLock { value } }
}
