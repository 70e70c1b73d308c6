import Foundation
import RampartAPI
import RampartCore

/// Every failure of the reference client, with a message a person can act on.
///
/// Trust-model rows **transport (low)** — a pin mismatch is its own case, shown as an alert, and
/// the connection is cut — and **access token** — an expired session logs out cleanly.
public enum ClientError: DescribedRampartError, Equatable {
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
    /// The server refused a sign-up (its code, such as `signup.usernameTaken`, and its sentence);
    /// nothing was created.
    case signupRefused(code: String, message: String)
    /// The server refused a recovery, a reset, a recovery copy or a deletion (its code and sentence;
    /// nothing was changed).
    case recoveryRefused(code: String, message: String)
    /// The server refused to add or remove an address (its code, such as `signup.addressDomain`,
    /// and its sentence); nothing was changed.
    case addressRefused(code: String, message: String)

    /// The code, category (the CLI's exit status) and message of each case.
    public var info: RampartErrorInfo {
        switch self {
        case .pinMismatch(let host, let served): RampartErrorInfo(code: "client.pinMismatch", kind: .pinMismatch, message: """
            ALERT: the certificate of \(host) does not match the pinned keys; the connection was cut. \
            Someone may be intercepting the connection. Served key pins: \(served.joined(separator: ", ")).
            """)
        case .sessionExpired: RampartErrorInfo(code: "client.sessionExpired", kind: .sessionExpired, message: "The session expired or was ended; run `rampart login` again.")
        case .http(let status, let body?): RampartErrorInfo(code: "client.http.\(status)", kind: .failure, message: "The server refused the request (HTTP \(status), \(body.error.code)): \(body.error.message)")
        case .http(let status, .none): RampartErrorInfo(code: "client.http.\(status)", kind: .failure, message: "The server refused the request (HTTP \(status)).")
        case .transport(let why): RampartErrorInfo(code: "client.transport", kind: .failure, message: "Cannot reach the server: \(why)")
        case .malformedResponse(let what): RampartErrorInfo(code: "client.malformedResponse", kind: .failure, message: "The server sent an unreadable answer: \(what)")
        case .notLoggedIn(let user): RampartErrorInfo(code: "client.notLoggedIn", kind: .notFound, message: "No account is logged in as '\(user)'; run `rampart login` first (or pick another with --user).")
        case .alreadyLoggedIn(let user): RampartErrorInfo(code: "client.alreadyLoggedIn", kind: .failure, message: "An account is already logged in as '\(user)'; run `rampart logout` first or use another --user.")
        case .loginRefused(let why): RampartErrorInfo(code: "client.loginRefused", kind: .failure, message: "Login refused: \(why)")
        case .notFound(let kind, let id): RampartErrorInfo(code: "client.notFound", kind: .notFound, message: "No \(kind) '\(id)' (run `rampart sync` if it is new).")
        case .file(let why): RampartErrorInfo(code: "client.file", kind: .failure, message: why)
        case .tampered(let what): RampartErrorInfo(code: "client.tampered", kind: .tampered, message: "\(what) was modified or does not belong here; it was not opened.")
        case .badServer(let why): RampartErrorInfo(code: "client.badServer", kind: .badInput, message: "The server description is unusable: \(why)")
        case .badInput(let why): RampartErrorInfo(code: "client.badInput", kind: .badInput, message: why)
        case .signupRefused(let code, let message):
            RampartErrorInfo(code: code, kind: ["signup.usernameInvalid", "signup.addressInvalid", "signup.addressDomain", "signup.malformed"]
                                .contains(code) ? .badInput : .failure, message: "Sign-up refused: \(message)")
        case .recoveryRefused(let code, let message):
            RampartErrorInfo(code: code, kind: code == "recovery.malformed" ? .badInput : .failure, message: "Refused: \(message)")
        case .addressRefused(let code, let message):
            RampartErrorInfo(code: code, kind: ["signup.addressInvalid", "signup.addressDomain", "signup.malformed", "request.invalid"]
                                .contains(code) ? .badInput : .failure, message: "Address refused: \(message)")
        }
    }

}
