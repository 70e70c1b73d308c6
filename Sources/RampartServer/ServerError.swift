import Foundation
import Hummingbird
import RampartAPI
import RampartCore

/// Every failure of the embedded backend, as a typed value: what the client is told (an HTTP
/// status and an `APIErrorBody`) and what an operator is told when the server cannot start.
///
/// Trust-model row **transport (network), low trust**: a request the server cannot accept gets a
/// precise 4xx answer, never a crash or a half-done change; the messages never echo a secret.
public enum ServerError: RampartError, Equatable {
    /// The request body or a parameter is not what the route takes.
    case badRequest(String)
    /// The body is not JSON of the expected shape.
    case malformedJSON(String)
    /// No `Authorization: Bearer` header, or a token the server does not know.
    case invalidToken
    /// The access token's lifetime is over: refresh it.
    case tokenExpired
    /// Wrong username or login password (the answer does not say which).
    case wrongCredentials
    /// Too many failed logins for this account in a short time.
    case tooManyAttempts(retryAfterSeconds: Int)
    /// The object does not exist or belongs to another user.
    case notFound(String)
    /// The request conflicts with the current state (a reused push key, another session's id).
    case conflict(String)
    /// The body is larger than the route accepts.
    case payloadTooLarge(limit: Int)
    /// A recipient address that no local account has.
    case unknownRecipient(String)
    /// The server's storage failed (the change was rolled back).
    case storage(String)
    /// The data folder, certificate or port cannot be used; the server did not start.
    case startFailed(String)
    /// One of the abuse limits (``ServerLimits``): recipients, sizes, quota, request rate.
    case limitExceeded(ServerLimitViolation)
    /// A sign-up refused by one of its rules (``SignupRefusal``); nothing was created.
    case signupRefused(SignupRefusal)
    /// The operator disabled the account (`rampart server users disable`): no login, no session.
    case accountDisabled
    /// The remote-content proxy would not or could not fetch a resource (``RemoteFetchRefusal``).
    case remoteFetchRefused(RemoteFetchRefusal)

    /// The category the CLI's exit status uses.
    public var kind: RampartErrorKind {
        switch self {
        case .badRequest, .invalidToken: .badInput
        case .notFound, .unknownRecipient: .notFound
        case .malformedJSON, .tokenExpired, .wrongCredentials, .tooManyAttempts, .conflict, .payloadTooLarge,
             .storage, .startFailed, .limitExceeded: .failure
        case .signupRefused(let refusal): refusal.kind
        case .accountDisabled: .failure
        case .remoteFetchRefused(let refusal): refusal.kind
        }
    }

    public var code: String {
        switch self {
        case .badRequest: "request.invalid"
        case .malformedJSON: "request.malformedJSON"
        case .invalidToken: "auth.invalidToken"
        case .tokenExpired: "auth.expired"
        case .wrongCredentials: "auth.wrongCredentials"
        case .tooManyAttempts: "auth.tooManyAttempts"
        case .notFound: "notFound"
        case .conflict: "conflict"
        case .payloadTooLarge: "request.tooLarge"
        case .unknownRecipient: "send.unknownRecipient"
        case .storage: "server.storage"
        case .startFailed: "server.startFailed"
        case .limitExceeded(let violation): violation.code
        case .signupRefused(let refusal): refusal.code
        case .accountDisabled: "account.disabled"
        case .remoteFetchRefused(let refusal): refusal.code
        }
    }

    public var description: String {
        switch self {
        case .badRequest(let why): "Bad request: \(why)."
        case .malformedJSON(let why): "The request body is not valid JSON for this call: \(why)."
        case .invalidToken: "Not logged in, or the session was ended. Log in again."
        case .tokenExpired: "The access token has expired. Refresh the session (or log in again)."
        case .wrongCredentials: "Wrong username or password."
        case .tooManyAttempts(let seconds): "Too many failed logins. Wait \(seconds) seconds and try again."
        case .notFound(let what): "\(what) was not found."
        case .conflict(let why): "Conflict: \(why)."
        case .payloadTooLarge(let limit): "The request body is larger than the \(limit) bytes this call accepts."
        case .unknownRecipient(let address): "No local account has the address \(address); this server delivers only to its own users."
        case .storage(let why): "The server's storage failed (\(why)); nothing was changed. Try again."
        case .startFailed(let why): "The Rampart server cannot start: \(why)."
        case .limitExceeded(let violation): violation.message
        case .signupRefused(let refusal): refusal.message
        case .accountDisabled: "This account is disabled by the server's operator; ask them to enable it again."
        case .remoteFetchRefused(let refusal): refusal.description
        }
    }

    /// The HTTP status this error is answered with.
    public var status: HTTPResponse.Status {
        switch self {
        case .badRequest, .malformedJSON: .badRequest
        case .invalidToken, .tokenExpired, .wrongCredentials: .unauthorized
        case .tooManyAttempts: .tooManyRequests
        case .notFound: .notFound
        case .conflict: .conflict
        case .payloadTooLarge: .contentTooLarge
        case .unknownRecipient: .unprocessableContent
        case .storage, .startFailed: .internalServerError
        case .limitExceeded(let violation): violation.status
        case .signupRefused(let refusal): HTTPResponse.Status(code: refusal.status)
        case .accountDisabled: .forbidden
        case .remoteFetchRefused(let refusal): refusal.kind == .badInput ? .unprocessableContent : .badGateway
        }
    }

    /// The JSON body sent with ``status``.
    public var body: APIErrorBody { APIErrorBody(code: code, message: description) }
}
