import Foundation
import MailboxCrypto
import NIOHTTP1
import OpenPGP
import PinnedTransport
import RampartAPI
import RampartCore
import RampartServer
import RampartTestSupport
import X509

/// A real embedded backend in a temporary folder, and a pinned HTTPS client that trusts only its
/// CA and pins the keys it published in `server.json`.
final class TestBackend: Sendable {
    let server: RunningServer
    let client: PinnedHTTPClient
    let folder: URL
    let clock: ManualClock

    private init(server: RunningServer, client: PinnedHTTPClient, folder: URL, clock: ManualClock) {
        self.server = server; self.client = client; self.folder = folder; self.clock = clock
    }

    static func newFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("rampart-server-test-\(UUID().uuidString)", isDirectory: true)
    }

    static func start(folder: URL = newFolder(), clock: ManualClock = ManualClock(now: Date()), seedDemo: Bool = true,
                      signup: SignupPolicy = SignupPolicy(), limits: ServerLimits? = nil) async throws -> TestBackend {
        var configuration = EmbeddedServerConfiguration(
            dataDirectory: folder, seedDemo: seedDemo, clock: clock, threads: 2, signup: signup, limits: limits)
        configuration.storage = try await onThreadOfItsOwn { try TestEngine.current.opener(folder: folder) }
        let server = try await EmbeddedServer.start(configuration: configuration)
        return TestBackend(server: server, client: try client(for: server.info), folder: folder, clock: clock)
    }

    /// Runs `body` against a fresh backend, then stops it and deletes its folder (also on failure).
    static func with(_ body: (TestBackend) async throws -> Void) async throws {
        let backend = try await start()
        do {
            try await body(backend)
        } catch {
            await backend.close()
            throw error
        }
        await backend.close()
    }

    /// A client configured only from what `server.json` says (as the real client does).
    static func client(for info: ServerInfo, pins: [String]? = nil) throws -> PinnedHTTPClient {
        let ca = try Certificate(pemEncoded: info.certificatePEM)
        let policy = try PinningPolicy([DomainPinningPolicy(domain: info.host ?? "localhost", pins: pins ?? info.pins)])
        return try PinnedHTTPClient(configuration: PinnedHTTPClientConfiguration(
            policy: policy, trustRoots: .certificates([ca]),
            connectAddressOverrides: ["localhost": "127.0.0.1"],
            connectTimeout: .seconds(60), requestTimeout: .seconds(120)))
    }

    /// Stops the server and the client (the folder stays, for restart tests).
    func stop() async {
        try? await client.shutdown()
        await server.stop()
    }

    /// Stops and deletes the folder (and its database on PostgreSQL).
    func close() async {
        await stop()
        try? FileManager.default.removeItem(at: folder)
        let folder = folder
        await onThreadOfItsOwn { TestEngine.current.dropDatabase(folder: folder) }
    }

    @discardableResult
    func send(_ method: HTTPMethod, _ path: String, token: String? = nil, body: Data? = nil,
              contentType: String = "application/json") async throws -> PinnedResponse {
        var headers = HTTPHeaders()
        if let token { headers.add(name: "Authorization", value: "Bearer \(token)") }
        if body != nil { headers.add(name: "Content-Type", value: contentType) }
        return try await client.send(PinnedRequest(method: method, url: URL(string: server.baseURL.absoluteString + path)!,
                                                   headers: headers, body: body))
    }

    func send(_ method: HTTPMethod, _ path: String, token: String? = nil, json: some Encodable) async throws -> PinnedResponse {
        try await send(method, path, token: token, body: try JSONEncoder().encode(json))
    }

    /// Sends and decodes a 200 answer; fails the test with the error body otherwise.
    func call<T: Decodable>(_ type: T.Type, _ method: HTTPMethod, _ path: String, token: String? = nil,
                            body: Data? = nil) async throws -> T {
        let response = try await send(method, path, token: token, body: body)
        guard response.status == .ok else {
            throw TestFailure("\(method) \(path) answered \(response.status.code): \(String(decoding: response.body, as: UTF8.self))")
        }
        return try JSONDecoder().decode(T.self, from: response.body)
    }

    func login(_ account: DemoAccount, password: String? = nil) async throws -> LoginResponse {
        // SRP (/auth/info, /auth), with the modulus signature and the server proof checked (SRPAuthTests.swift).
        try await srpLogin(username: account.username, password: password ?? account.loginPassword)
    }

    static func errorBody(_ response: PinnedResponse) -> APIErrorBody? {
        try? JSONDecoder().decode(APIErrorBody.self, from: response.body)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension LoginResponse {
    /// Unlocks the user key with the mailbox password and the primary address's key through its
    /// token, as the client does; returns the address key (mail is encrypted to it).
    func mailboxKeys(_ mailboxPassword: String) throws -> PGPPrivateKey {
        try keyring(mailboxPassword).primary
    }

    /// The user key and every address key, opened as the client opens them.
    func keyring(_ mailboxPassword: String) throws -> AccountKeyring {
        try AccountKeyring.unlock(keys, keyPassword: SecretBytes(copying: Array(mailboxPassword.utf8)))
    }
}

extension MessageResponse {
    func open(with keys: PGPPrivateKey, userID: String) throws -> MessageContent {
        let plaintext = try MailPart.open(Data(base64Encoded: sealedBody)!, with: [keys], messageID: id, part: SealedPartName.body).data
        return try JSONDecoder().decode(MessageContent.self, from: plaintext)
    }
}

/// Test shorthands over ``MailPart`` (the user id of the old format is not part of the binding).
enum TestParts {
    static func seal(_ data: Data, to key: PGPPublicKey, userID: String, messageID: String, part: String) throws -> Data {
        try MailPart.seal(data, to: [key], signedBy: nil, messageID: messageID, part: part)
    }
    static func open(_ sealed: Data, with key: PGPPrivateKey, userID: String, messageID: String, part: String) throws -> Data {
        try MailPart.open(sealed, with: [key], messageID: messageID, part: part).data
    }
    static func newKey() throws -> PGPPrivateKey { try PGPPrivateKey.generate(name: "Test", address: "test@elsewhere.example") }
}

extension TestBackend {
    /// An encrypted, signed submission as the client builds one: the body and attachments
    /// encrypted to the recipients' keys from the key directory and the sender's own, signed by
    /// the sender (`account` is the logged-in sender).
    func sendRequest(_ login: LoginResponse, _ account: DemoAccount, to: [String], subject: String, html: String,
                     attachments: [(name: String, type: String, data: Data)] = [], mime: Data? = nil) async throws -> SendRequest {
        let signer = try login.mailboxKeys(account.mailboxPassword)
        var keys = [signer.publicKey]
        for address in to {
            let response = try await send(.GET, APIRoute.publicKey + "?address=\(address)", token: login.accessToken)
            if response.status == .ok {
                keys.append(try PGPPublicKey(armored: try JSONDecoder().decode(PublicKeyResponse.self, from: response.body).publicKey))
            }
        }
        return try SendRequest.encrypted(signer: signer, account: account, keys: keys, to: to, subject: subject, html: html,
                                         attachments: attachments, mime: mime)
    }
}

extension SendRequest {
    /// The submission a client builds, encrypted to `keys` and signed by `signer`.
    static func encrypted(signer: PGPPrivateKey, account: DemoAccount, keys: [PGPPublicKey], to: [String], subject: String, html: String,
                          attachments: [(name: String, type: String, data: Data)] = [], mime: Data? = nil) throws -> SendRequest {
        let id = SendRequest.newID()
        let content = MessageContent(subject: subject, sender: Correspondent(name: account.displayName, address: account.address),
                                     to: to.map { Correspondent(name: "", address: $0) }, html: html)
        let body = try MailPart.seal(try JSONEncoder().encode(content), to: keys, signedBy: signer, messageID: id, part: SealedPartName.body)
        let parts = try attachments.enumerated().map { index, file in
            OutgoingAttachment(name: file.name, mimeType: file.type, size: file.data.count,
                               encryptedData: try MailPart.seal(file.data, to: keys, signedBy: signer, messageID: id,
                                                                part: SealedPartName.attachment(index)).base64EncodedString())
        }
        return SendRequest(to: to, id: id, subject: subject, encryptedBody: body.base64EncodedString(),
                           attachments: parts.isEmpty ? nil : parts, mime: mime?.base64EncodedString())
    }
}
