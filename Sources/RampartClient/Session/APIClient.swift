import Foundation
import PinnedTransport
import RampartAPI
import RampartCore

/// Where the backend is and which keys it may present.
///
/// Trust-model row **transport (network), low**: the client trusts only `certificatePEM` as a
/// root (for the embedded backend, its own self-signed CA) and, on top, requires the served key
/// to match one of `pins` (the live key and a backup key).
public struct ServerEndpoint: Codable, Sendable, Equatable {
    /// `https://host:port` (no path).
    public var url: URL
    /// SPKI pins, base64 SHA-256 (at least two: live and backup).
    public var pins: [String]
    /// PEM of the only trusted root, or nil for the system's roots.
    public var certificatePEM: String?
    /// The pinned fingerprint (40 hex) of the OpenPGP key that signs the SRP modulus; login
    /// refuses a modulus not signed by it (see `SRPLogin`).
    public var modulusKeyFingerprint: String?
    /// That key's public key, armored.
    public var modulusPublicKey: String?
    /// The pinned key log (its origin and key, the witnesses whose cosignature a head needs):
    /// directory keys are used only with a proof in it (``KeyTransparency``); nil for a server
    /// that publishes no log.
    public var keyLog: KeyLogPins?
    /// More addresses of the same server (other processes on one database, behind the same pins
    /// and modulus key), tried in order when the current one cannot be reached or answers 503
    /// (``APIClient``); nil or empty for one address.
    public var alternateURLs: [URL]?

    public init(url: URL, pins: [String], certificatePEM: String? = nil, modulusKeyFingerprint: String? = nil,
                modulusPublicKey: String? = nil, keyLog: KeyLogPins? = nil, alternateURLs: [URL]? = nil) {
        self.url = url; self.pins = pins; self.certificatePEM = certificatePEM
        self.modulusKeyFingerprint = modulusKeyFingerprint; self.modulusPublicKey = modulusPublicKey; self.keyLog = keyLog
        self.alternateURLs = alternateURLs
    }

    /// Every address of the server: ``url`` first, then ``alternateURLs`` (duplicates dropped).
    public var urls: [URL] {
        var seen = Set<String>()
        return ([url] + (alternateURLs ?? [])).filter { seen.insert($0.absoluteString).inserted }
    }

    /// The endpoint of a local server from its `server.json`.
    public init(serverInfo: ServerInfo) {
        self.init(url: serverInfo.baseURL, pins: serverInfo.pins, certificatePEM: serverInfo.certificatePEM,
                  modulusKeyFingerprint: serverInfo.modulusKeyFingerprint, modulusPublicKey: serverInfo.modulusPublicKey,
                  keyLog: serverInfo.keyLog)
    }

    /// Reads a `server.json` file written by `rampart server start`.
    /// - Throws: ``ClientError/badServer(_:)``.
    public static func fromServerInfoFile(_ url: URL) throws -> ServerEndpoint {
        do {
            let info = try JSONDecoder().decode(ServerInfo.self, from: Data(contentsOf: url))
            return ServerEndpoint(serverInfo: info)
        } catch {
            throw ClientError.badServer("cannot read \(url.path): \(error)")
        }
    }

    func transportConfiguration() throws -> PinnedHTTPClientConfiguration {
        do {
            // One policy per host name, each with the same pins: every address is the same server.
            var hosts: [String] = []
            for host in urls.map({ ($0.host ?? "localhost").lowercased() }) where !hosts.contains(host) { hosts.append(host) }
            let policy = try PinningPolicy(try hosts.map { try DomainPinningPolicy(domain: $0, pins: pins) })
            let roots: PinnedTrustRoots = try certificatePEM.map {
                .certificates(try SPKIPin.pins(fromPEM: $0).map(\.certificate))
            } ?? .system
            // Loopback names resolve to IPv4 here (the embedded server listens on 127.0.0.1).
            let overrides = hosts.contains("localhost") ? ["localhost": "127.0.0.1"] : [:]
            return PinnedHTTPClientConfiguration(policy: policy, trustRoots: roots, connectAddressOverrides: overrides,
                                                 connectTimeout: .seconds(10), requestTimeout: .seconds(60),
                                                 maxResponseBytes: 64 << 20)
        } catch let error as any RampartError {
            throw ClientError.badServer(error.description)
        }
    }
}

/// The backend API over a pinned TLS connection.
///
/// Trust-model rows **transport (low)** (every request goes through `PinnedHTTPClient`: chain
/// validation to the endpoint's root, then the SPKI pins; a mismatch is ``ClientError/pinMismatch(host:served:)``)
/// and **access token (read: high)** (tokens live in memory here only for the command's run;
/// on disk they are sealed by ``SessionVault``). An expired access token is refreshed once; if
/// that fails the call throws ``ClientError/sessionExpired``.
public final class APIClient: @unchecked Sendable {
    public let endpoint: ServerEndpoint
    private let http: PinnedHTTPClient
    private let lock = NSLock()
    private var tokens: SessionTokens?
    /// The index in ``ServerEndpoint/urls`` of the address requests go to.
    private var currentURL = 0
    private let tokensChanged: (@Sendable (SessionTokens) -> Void)?

    /// - Parameters:
    ///   - tokens: the session's tokens, if logged in.
    ///   - tokensChanged: called after a refresh, so the caller can store the new tokens sealed.
    ///   - endpoint: the server's URL, SPKI pins and CA.
    public init(endpoint: ServerEndpoint, tokens: SessionTokens? = nil,
                tokensChanged: (@Sendable (SessionTokens) -> Void)? = nil) throws {
        self.endpoint = endpoint
        do {
            self.http = try PinnedHTTPClient(configuration: try endpoint.transportConfiguration())
        } catch let error as ClientError {
            throw error
        } catch {
            throw ClientError.transport(String(describing: error))
        }
        self.tokens = tokens
        self.tokensChanged = tokensChanged
    }

    /// The current tokens (after any refresh).
    public var currentTokens: SessionTokens? { lock.withLock { tokens } }

    /// Closes the connection machinery.
    public func shutdown() async { try? await http.shutdown() }

    /// Runs `body` with this client, then shuts it down, whether `body` returned or threw.
    public func closing<R>(_ body: (APIClient) async throws -> R) async throws -> R {
        do {
            let result = try await body(self)
            await shutdown()
            return result
        } catch {
            await shutdown()
            throw error
        }
    }

    // MARK: Auth

    /// SRP login (`POST /auth/info`, `POST /auth`; see `SRPLogin`): the password never leaves
    /// the device, and the server's proof is checked before the answer is used.
    public func login(username: String, password: SecretBytes) async throws -> LoginResponse {
        let response = try await SRPLogin.run(api: self, username: username, password: password)
        lock.withLock { tokens = response.tokens }
        return response
    }

    /// ``login(username:password:)`` with a `String` password (demo accounts, tests); the copy is
    /// wiped after use.
    public func login(username: String, password: String) async throws -> LoginResponse {
        let secret = SecretBytes(copying: Array(password.utf8))
        defer { secret.wipe() }
        return try await login(username: username, password: secret)
    }

    /// Changes the login password with SRP (`POST /v1/account/password`): proves `old`, sends a
    /// new salt and verifier for `new`; in one-password mode (`old` opens the user key) the user
    /// key re-locked under `new` goes in the same request. Returns the sessions ended and whether
    /// the mailbox password followed.
    public func changeLoginPassword(username: String, old: SecretBytes, new: SecretBytes,
                                    endOtherSessions: Bool = true) async throws -> LoginPasswordChange {
        try await SRPLogin.changePassword(api: self, username: username, old: old, new: new, endOtherSessions: endOtherSessions)
    }

    /// `POST /v1/auth/logout`: ends the session on the server.
    public func logout() async throws {
        _ = try await send(.POST, APIRoute.logout, body: Data("{}".utf8), authenticated: true, refreshOnExpiry: false)
    }

    /// `POST /v1/auth/refresh`: new tokens for the session.
    /// - Throws: ``ClientError/sessionExpired`` when the refresh token is refused.
    public func refresh() async throws -> SessionTokens {
        guard let refreshToken = currentTokens?.refreshToken else { throw ClientError.sessionExpired }
        let fresh: SessionTokens
        do {
            fresh = try await json(.POST, APIRoute.refresh, body: RefreshRequest(refreshToken: refreshToken), authenticated: false)
        } catch ClientError.http(let status, _) where (400..<500).contains(status) {
            throw ClientError.sessionExpired
        }
        lock.withLock { tokens = fresh }
        tokensChanged?(fresh)
        return fresh
    }

    // MARK: Mail

    /// `GET /v1/events?since=<cursor>`.
    public func events(since cursor: Int64) async throws -> EventsResponse {
        try await json(.GET, APIRoute.events + "?since=\(cursor)")
    }

    /// `GET /v1/labels`.
    public func labels() async throws -> [APILabel] {
        let list: LabelListResponse = try await json(.GET, APIRoute.labels)
        return list.labels
    }

    /// `GET /v1/messages/<id>`.
    public func message(_ id: String) async throws -> MessageResponse { try await json(.GET, APIRoute.message(Self.escape(id))) }

    /// `GET /v1/attachments/<id>`: the attachment's `MailPart` (binary OpenPGP).
    public func attachment(_ id: String) async throws -> Data {
        try await send(.GET, APIRoute.attachment(Self.escape(id))).body
    }

    /// `POST /v1/push/subscriptions`: registers this session's push public key.
    public func registerPush(_ registration: some Encodable) async throws {
        _ = try await send(.POST, APIRoute.pushSubscriptions, body: try Self.encoder.encode(registration))
    }

    /// `POST /v1/mail/send`: the server seals the message to each recipient's public key.
    public func send(_ request: SendRequest) async throws -> SendResponse {
        try await json(.POST, APIRoute.send, body: request)
    }

    /// `POST /v1/remote/fetch`: a remote image or font of a message, fetched by the backend (the
    /// remote-content proxy: the sender's server sees the backend's address, not this device's).
    /// - Returns: the media type (an image or font type) and the bytes.
    public func fetchRemote(_ url: String) async throws -> (contentType: String, body: Data) {
        let response = try await send(.POST, APIRoute.remoteFetch, body: try Self.encoder.encode(RemoteFetchRequest(url: url)))
        return (response.headers.first(name: "Content-Type") ?? "application/octet-stream", response.body)
    }

    // MARK: Drive

    /// `POST /v1/drive/blocks`: stores one encrypted block (raw bytes).
    public func uploadBlock(_ sealed: Data) async throws -> DriveBlockResponse {
        let response = try await send(.POST, APIRoute.driveBlocks, body: sealed, contentType: "application/octet-stream")
        return try Self.decode(DriveBlockResponse.self, response.body)
    }

    /// `GET /v1/drive/blocks/<id>`: one encrypted block.
    public func block(_ id: String) async throws -> Data { try await send(.GET, APIRoute.driveBlock(Self.escape(id))).body }

    /// `POST /v1/drive/nodes`.
    public func createNode(_ request: DriveNodeRequest) async throws -> DriveNodeResponse {
        try await json(.POST, APIRoute.driveNodes, body: request)
    }

    /// `GET /v1/drive/nodes`.
    public func nodes(parent: String? = nil) async throws -> [DriveNodeResponse] {
        let list: DriveNodeListResponse = try await json(.GET, APIRoute.driveNodes + (parent.map { "?parent=\(Self.escape($0))" } ?? ""))
        return list.nodes
    }

    /// `GET /v1/drive/volume`: the volume, its share and root folder.
    public func driveVolume() async throws -> DriveVolumeResponse { try await json(.GET, APIRoute.driveVolume) }

    /// `GET /v1/drive/nodes/<id>`.
    public func node(_ id: String) async throws -> DriveNodeResponse { try await json(.GET, APIRoute.driveNode(Self.escape(id))) }

    /// `GET /v1/auth/sessions`: the account's sessions (this one marked current).
    public func sessions() async throws -> [SessionSummary] {
        let list: SessionListResponse = try await json(.GET, APIRoute.sessions)
        return list.sessions
    }

    /// `DELETE /v1/auth/sessions/<id>`: ends another session of the account.
    public func endSession(_ id: String) async throws { _ = try await send(.DELETE, APIRoute.session(Self.escape(id))) }

    /// `PUT /v1/drive/nodes/<id>`: a new revision (new sealed metadata; for a file, its block list).
    public func updateNode(_ id: String, _ request: DriveNodeRequest) async throws -> DriveNodeResponse {
        try await json(.PUT, APIRoute.driveNode(Self.escape(id)), body: request)
    }

    /// `DELETE /v1/drive/nodes/<id>`: the node, its revisions and blocks (and a folder's contents).
    public func deleteNode(_ id: String) async throws { _ = try await send(.DELETE, APIRoute.driveNode(Self.escape(id))) }

    // MARK: Plumbing

    static let encoder = JSONEncoder()

    static func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        do { return try JSONDecoder().decode(type, from: data) } catch {
            throw ClientError.malformedResponse("expected \(type): \(error)")
        }
    }

    static func escape(_ id: String) -> String {
        id.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? id
    }

    func json<T: Decodable>(_ method: PinnedMethod, _ path: String, authenticated: Bool = true) async throws -> T {
        try Self.decode(T.self, try await send(method, path, body: nil, authenticated: authenticated).body)
    }

    func json<T: Decodable, B: Encodable>(_ method: PinnedMethod, _ path: String, body: B, authenticated: Bool = true) async throws -> T {
        let data = try Self.encoder.encode(body)
        return try Self.decode(T.self, try await send(method, path, body: data, authenticated: authenticated).body)
    }

    /// Sends one request; on 401 refreshes the session once and retries.
    func send(_ method: PinnedMethod, _ path: String, body: Data? = nil, contentType: String = "application/json",
              authenticated: Bool = true, refreshOnExpiry: Bool = true) async throws -> PinnedResponse {
        let first = try await exchangeAfterRetries(method, path, body: body, contentType: contentType, authenticated: authenticated)
        if first.statusCode == 401 && authenticated {
            guard refreshOnExpiry else { throw ClientError.sessionExpired }
            _ = try await refresh()
            let second = try await exchangeAfterRetries(method, path, body: body, contentType: contentType, authenticated: true)
            if second.statusCode == 401 { throw ClientError.sessionExpired }
            return try Self.check(second)
        }
        return try Self.check(first)
    }

    /// ``exchange(_:_:body:contentType:authenticated:)``, sent again when every address answered
    /// 503 with a `Retry-After` of at most 5 seconds (the server's database restarting: nothing of
    /// the request was stored), after that wait, up to 3 more times.
    private func exchangeAfterRetries(_ method: PinnedMethod, _ path: String, body: Data?, contentType: String,
                                      authenticated: Bool) async throws -> PinnedResponse {
        var retries = 0
        while true {
            let response = try await exchange(method, path, body: body, contentType: contentType, authenticated: authenticated)
            guard response.statusCode == 503, retries < 3,
                  let seconds = response.headers.first(name: "Retry-After").flatMap(Int.init), (0...5).contains(seconds) else {
                return response
            }
            retries += 1
            try await Task.sleep(for: .seconds(seconds))
        }
    }

    static func check(_ response: PinnedResponse) throws -> PinnedResponse {
        guard (200..<300).contains(response.statusCode) else {
            throw ClientError.http(status: response.statusCode, body: try? JSONDecoder().decode(APIErrorBody.self, from: response.body))
        }
        return response
    }

    /// Sends one request to the server's current address; when it cannot be reached or answers
    /// 503, to the next of ``ServerEndpoint/urls`` (each once), and the address that answered is
    /// the current one from then on. A request is sent again elsewhere only when the first
    /// address cannot have acted on it: the connection failed before a byte was written, or it
    /// answered 503; a GET (which changes nothing) also after a timeout or a connection cut
    /// mid-answer. A pin mismatch or an untrusted chain stops at once: a person in the middle is
    /// never routed around.
    private func exchange(_ method: PinnedMethod, _ path: String, body: Data?, contentType: String,
                          authenticated: Bool) async throws -> PinnedResponse {
        var headers: [(name: String, value: String)] = [("Accept", "application/json")]
        if let body {
            headers.append(("Content-Type", contentType))
            headers.append(("Content-Length", String(body.count)))
        }
        if authenticated {
            guard let token = currentTokens?.accessToken else { throw ClientError.sessionExpired }
            headers.append(("Authorization", "Bearer \(token)"))
        }
        let urls = endpoint.urls
        let first = lock.withLock { currentURL } % urls.count
        for step in 0..<urls.count {
            let index = (first + step) % urls.count
            let last = step == urls.count - 1
            guard let url = URL(string: path, relativeTo: urls[index])?.absoluteURL else {
                throw ClientError.badServer("cannot build a URL for \(path)")
            }
            do {
                let response = try await http.send(PinnedRequest(method: method, url: url, headerFields: headers, body: body))
                if response.statusCode == 503 && !last { continue }
                lock.withLock { currentURL = index }
                return response
            } catch let error as PinnedTransportError {
                if case .pinMismatch(let host, _, let served) = error {
                    throw ClientError.pinMismatch(host: host, served: served.map(\.base64))
                }
                guard !last, Self.mayTryNext(error, method: method) else { throw ClientError.transport(error.description) }
            }
        }
        throw ClientError.transport("no address of the server answered")   // not reached: the last one returns or throws
    }

    /// Whether a request that failed with `error` may be sent to another address (see ``exchange(_:_:body:contentType:authenticated:)``).
    static func mayTryNext(_ error: PinnedTransportError, method: PinnedMethod) -> Bool {
        switch error {
        case .connectionFailed: true
        case .timedOut, .malformedResponse, .tlsFailed: method == .GET || method == .HEAD
        default: false
        }
    }

}
