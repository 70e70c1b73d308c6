import Foundation

// Authentication: login, refresh, the session tokens and the account the server keeps.
// The JSON bodies of the API carry binary values as base64 strings (standard alphabet).

/// `POST /v1/auth/refresh`: new tokens for the session a refresh token belongs to.
///
/// Trust-model row **access token (high)**: the refresh token is rotated, the old one stops
/// working at once.
public struct RefreshRequest: Codable, Sendable {
    /// The current refresh token (`rrt_…`).
    public var refreshToken: String
    /// A refresh request.
    public init(refreshToken: String) { self.refreshToken = refreshToken }
}

/// Who the account is, as the login answer describes it.
///
/// Trust-model row **username (critical)**: it ties the account to a person; the client keeps it
/// only in its sealed store.
public struct UserInfo: Codable, Sendable, Equatable {
    /// The account name (lower case).
    public var username: String
    /// The name shown as the sender of mail.
    public var displayName: String
    /// The account's mail addresses; the first is the sending address.
    public var addresses: [String]
    /// A user description.
    public init(username: String, displayName: String, addresses: [String]) {
        self.username = username; self.displayName = displayName; self.addresses = addresses
    }
}

/// The user key as the server keeps it, and the address keys it opens: the OpenPGP public key, the private key locked with a
/// passphrase derived from the mailbox password (`MailboxKey` in MailboxCrypto: bcrypt of the mailbox password
/// with ``keySalt``), which the server cannot unlock, and the key salt.
///
/// Trust-model rows **the user's private and public keys (critical)** and **mailbox password
/// (critical)**: zero access — only the client, given the mailbox password, unlocks the key.
public struct UserKeys: Codable, Sendable {
    /// The armored OpenPGP public key ("-----BEGIN PGP PUBLIC KEY BLOCK-----").
    public var publicKey: String
    /// The armored locked private key ("-----BEGIN PGP PRIVATE KEY BLOCK-----").
    public var privateKey: String
    /// base64 of the 16-byte key salt of the passphrase (`MailboxKey.unlock(locked:keySalt:mailboxPassword:)`).
    public var keySalt: String
    /// The address keys (``AddressKey``): each locked with a token the user key opens; the first
    /// is the primary address's. Removed addresses keep theirs (`active` false) for old mail.
    public var addressKeys: [AddressKey]
    /// The keys as sent by the server.
    public init(publicKey: String, privateKey: String, keySalt: String, addressKeys: [AddressKey] = []) {
        self.publicKey = publicKey; self.privateKey = privateKey; self.keySalt = keySalt; self.addressKeys = addressKeys
    }
}

/// The tokens of a session (answer of `POST /v1/auth/refresh`, and part of ``LoginResponse``).
///
/// Trust-model row **access token (high)**: 256-bit random values the server stores only as
/// SHA-256 hashes; the client keeps them in its sealed store.
public struct SessionTokens: Codable, Sendable {
    /// The session's id (also the push inbox's name).
    public var sessionId: String
    /// The bearer token of every call (`rat_…`, 1 hour by default).
    public var accessToken: String
    /// The token that renews the session (`rrt_…`, 30 days by default, rotated at each refresh).
    public var refreshToken: String
    /// Seconds until the access token expires.
    public var expiresIn: Int
    /// A set of session tokens.
    public init(sessionId: String, accessToken: String, refreshToken: String, expiresIn: Int) {
        self.sessionId = sessionId; self.accessToken = accessToken; self.refreshToken = refreshToken; self.expiresIn = expiresIn
    }
}

/// The login answer (``SRPAuthResponse/login``, after an SRP login): the new session's tokens, the user and their keys.
///
/// Trust-model rows **access token (high)** (the tokens) and **the user's private and public keys
/// (critical)** (``keys`` carries the private key only locked under the mailbox password).
public struct LoginResponse: Codable, Sendable {
    /// The server's id of the user.
    public var userId: String
    /// The new session's id.
    public var sessionId: String
    /// The new access token.
    public var accessToken: String
    /// The new refresh token.
    public var refreshToken: String
    /// Seconds until the access token expires.
    public var expiresIn: Int
    /// Who the account is.
    public var user: UserInfo
    /// The public key, the locked private key and its key salt.
    public var keys: UserKeys
    /// A login answer made from a session's tokens.
    public init(userId: String, tokens: SessionTokens, user: UserInfo, keys: UserKeys) {
        self.userId = userId; sessionId = tokens.sessionId; accessToken = tokens.accessToken
        refreshToken = tokens.refreshToken; expiresIn = tokens.expiresIn; self.user = user; self.keys = keys
    }
    /// The session's tokens, as one value.
    public var tokens: SessionTokens { SessionTokens(sessionId: sessionId, accessToken: accessToken, refreshToken: refreshToken, expiresIn: expiresIn) }
}

/// One session of the account (`GET /v1/auth/sessions`): its id, when it logged in and when its
/// current access token was issued (Unix seconds), and whether it is the session of the request.
/// The server keeps no device name, address or other trace of the client.
public struct SessionSummary: Codable, Sendable, Equatable {
    public var id: String, created: Int64, lastRefreshed: Int64, current: Bool
    public init(id: String, created: Int64, lastRefreshed: Int64, current: Bool) {
        (self.id, self.created, self.lastRefreshed, self.current) = (id, created, lastRefreshed, current)
    }
}

/// `GET /v1/auth/sessions`: the account's sessions, oldest first.
public struct SessionListResponse: Codable, Sendable, Equatable {
    public var sessions: [SessionSummary]
    public init(sessions: [SessionSummary]) { self.sessions = sessions }
}
