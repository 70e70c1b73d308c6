import Foundation
import Testing
@testable import RampartWeb

#if canImport(Glibc)
import Glibc
#endif

/// The access rules of `rampart web` without a browser (the browser test shows them in chromium).
@Suite("rampart web: access control")
struct WebAccessControlTests {
    @Test func theOneTimeTokenWorksOnceAndOnlyWhenRight() throws {
        let access = WebAccessControl(port: 4321)
        let token = try #require(access.pendingToken)
        #expect(access.oneTimeURL(token: token) == "http://127.0.0.1:4321/login?token=\(token)")
        #expect(access.redeem(token: "wrong") == nil)
        #expect(access.redeem(token: nil) == nil)
        let session = try #require(access.redeem(token: token))
        #expect(access.redeem(token: token) == nil, "a used token is refused")
        #expect(access.pendingToken == nil)
        #expect(session.id != session.csrfToken && session.id.count >= 43)
        #expect(WebAccessControl.setCookie(session).contains("HttpOnly"))
        #expect(WebAccessControl.setCookie(session).contains("SameSite=Strict"))
    }

    @Test func onlyLoopbackNamesAtTheServersPortPassTheHostCheck() {
        let access = WebAccessControl(port: 4321)
        for host in ["127.0.0.1:4321", "localhost:4321", "[::1]:4321", "LOCALHOST:4321"] { #expect(access.hostIsAllowed(host), "\(host)") }
        for host in ["evil.test:4321", "127.0.0.1:4322", "127.0.0.1", "localhost", "127.0.0.2:4321", "localhost.evil.test:4321", ""] {
            #expect(!access.hostIsAllowed(host), "\(host)")
        }
        #expect(!access.hostIsAllowed(nil))
    }

    @Test func stateChangesNeedTheAppsOriginAndTheSessionsCSRFToken() throws {
        let access = WebAccessControl(port: 4321)
        let session = try #require(access.redeem(token: access.pendingToken))
        let host = "127.0.0.1:4321", origin = "http://127.0.0.1:4321"
        #expect(access.decide(host: host, origin: nil, cookie: session.id, changesState: false, csrf: nil) == .allowed(session))
        #expect(access.decide(host: host, origin: origin, cookie: session.id, changesState: true, csrf: session.csrfToken) == .allowed(session))
        for (o, c) in [(nil, session.csrfToken), ("http://127.0.0.1:9999", session.csrfToken), ("http://evil.test", session.csrfToken),
                       (origin, nil), (origin, "x"), (origin, session.id)] as [(String?, String?)] {
            guard case .forbidden = access.decide(host: host, origin: o, cookie: session.id, changesState: true, csrf: c) else {
                Issue.record("origin \(o ?? "none") csrf \(c ?? "none") was not refused")
                continue
            }
        }
        // The app's own form posts: `Origin: null` (no-referrer pages) passes only with `Sec-Fetch-Site: same-origin`.
        #expect(access.decide(host: host, origin: "null", fetchSite: "same-origin", cookie: session.id, changesState: true,
                              csrf: session.csrfToken) == .allowed(session))
        for site in ["same-site", "cross-site", "none", nil] as [String?] {
            guard case .forbidden = access.decide(host: host, origin: "null", fetchSite: site, cookie: session.id, changesState: true,
                                                  csrf: session.csrfToken) else {
                Issue.record("Origin null with Sec-Fetch-Site \(site ?? "none") was not refused"); continue
            }
        }
        guard case .unauthorized = access.decide(host: host, origin: nil, cookie: "bogus", changesState: false, csrf: nil) else {
            Issue.record("a wrong cookie was accepted"); return
        }
        guard case .unauthorized = access.decide(host: host, origin: nil, cookie: nil, changesState: false, csrf: nil) else {
            Issue.record("no cookie was accepted"); return
        }
        guard case .forbidden = access.decide(host: "evil.test:4321", origin: nil, cookie: session.id, changesState: false, csrf: nil) else {
            Issue.record("a foreign Host was accepted"); return
        }
    }

    #if os(Linux)
    @Test func theKernelNamesTheUserOfALoopbackClient() throws {
        // A listening socket and a client of it, both of this process: the client's uid is ours.
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(server) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                #expect(bind(server, $0, length) == 0)
                #expect(listen(server, 1) == 0)
                #expect(getsockname(server, $0, &length) == 0)
            }
        }
        let serverPort = Int(UInt16(bigEndian: address.sin_port))
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { #expect(connect(client, $0, length) == 0) }
        }
        var mine = sockaddr_in()
        var mineLength = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &mine) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(client, $0, &mineLength) }
        }
        let clientPort = Int(UInt16(bigEndian: mine.sin_port))
        #expect(LoopbackPeer.uid(clientPort: clientPort, serverPort: serverPort) == getuid())
        #expect(LoopbackPeer.isSameUser(clientPort: clientPort, serverPort: serverPort))
        #expect(LoopbackPeer.uid(clientPort: clientPort, serverPort: serverPort + 1 == 65536 ? 1 : serverPort + 1) == nil)
    }
    #endif
}
