import Foundation
import RampartAPI
import RampartCore

/// Every failure of the reference client, with a message a person can act on.
///
/// Trust-model rows **transport (low)** — a pin mismatch is its own case, shown as an alert, and
/// the connection is cut — and **access token** — an expired session logs out cleanly.
public enum ClientError: RampartError, Equatable {
    /// The server's certificate key does not match the pins: the connection was cut.
    case pinMismatch(host: String, served: [String])
    /// The access token expired and refreshing it failed (or the session was ended elsewhere).
    case sessionExpired
    /// The server answered with an HTTP error.
    case http(status: Int, body: APIErrorBody?)
    /// The network or TLS failed (other than a pin mismatch).
    case transport(String)
    /// The server answered something that is not the API's JSON.
    case malformedResponse(String)
    /// No account is logged in under this local user id.
    case notLoggedIn(UserID)
    /// A logged-in account already exists under this local user id.
    case alreadyLoggedIn(UserID)
    /// The login username or password was refused.
    case loginRefused(String)
    /// Something asked for is not in the local store nor on the server.
    case notFound(kind: String, id: String)
    /// A local file could not be read or written.
    case file(String)
    /// A part received from the server failed its integrity check.
    case tampered(String)
    /// The server endpoint description is unusable.
    case badServer(String)
    /// Input the user gave (a file to import, a recipient, an option) cannot be used.
    case badInput(String)

    /// The category the CLI's exit status uses.
    public var kind: RampartErrorKind {
        switch self {
        case .pinMismatch: .pinMismatch
        case .sessionExpired: .sessionExpired
        case .notLoggedIn, .notFound: .notFound
        case .tampered: .tampered
        case .badServer, .badInput: .badInput
        case .http, .transport, .malformedResponse, .alreadyLoggedIn, .loginRefused, .file: .failure
        }
    }

    public var code: String {
        switch self {
        case .pinMismatch: "client.pinMismatch"
        case .sessionExpired: "client.sessionExpired"
        case .http(let status, _): "client.http.\(status)"
        case .transport: "client.transport"
        case .malformedResponse: "client.malformedResponse"
        case .notLoggedIn: "client.notLoggedIn"
        case .alreadyLoggedIn: "client.alreadyLoggedIn"
        case .loginRefused: "client.loginRefused"
        case .notFound: "client.notFound"
        case .file: "client.file"
        case .tampered: "client.tampered"
        case .badServer: "client.badServer"
        case .badInput: "client.badInput"
        }
    }

    public var description: String {
        switch self {
        case .pinMismatch(let host, let served):
            """
            ALERT: the certificate of \(host) does not match the pinned keys; the connection was cut. \
            Someone may be intercepting the connection. Served key pins: \(served.joined(separator: ", ")).
            """
        case .sessionExpired:
            "The session expired or was ended; run `rampart login` again."
        case .http(let status, let body):
            if let body { "The server refused the request (HTTP \(status), \(body.error.code)): \(body.error.message)" }
            else { "The server refused the request (HTTP \(status))." }
        case .transport(let why): "Cannot reach the server: \(why)"
        case .malformedResponse(let what): "The server sent an unreadable answer: \(what)"
        case .notLoggedIn(let user): "No account is logged in as '\(user)'; run `rampart login` first (or pick another with --user)."
        case .alreadyLoggedIn(let user): "An account is already logged in as '\(user)'; run `rampart logout` first or use another --user."
        case .loginRefused(let why): "Login refused: \(why)"
        case .notFound(let kind, let id): "No \(kind) '\(id)' (run `rampart sync` if it is new)."
        case .file(let why): why
        case .tampered(let what): "\(what) was modified or does not belong here; it was not opened."
        case .badServer(let why): "The server description is unusable: \(why)"
        case .badInput(let why): why
        }
    }
}
