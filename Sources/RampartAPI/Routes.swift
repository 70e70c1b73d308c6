/// The paths of the Rampart backend API, version 1. Both the embedded server and the client use
/// these constants, so they cannot drift apart.
///
/// Every route but the SRP login (`authInfo`, `auth`), sign-up (`signupInfo`, `signup`) and `refresh` needs
/// `Authorization: Bearer <accessToken>`. Errors come
/// as ``APIErrorBody`` with a 4xx/5xx status; an expired or unknown access token gives 401 with
/// code `auth.expired` / `auth.invalidToken` (refresh, then retry once).
///
/// - Login is SRP: `POST authInfo`, `POST auth` (``SRPAuthInfoRequest``, ``SRPAuthRequest``,
///   Proton's field names, see SRPModels.swift) → ``SRPAuthResponse``; `POST refresh` ``RefreshRequest`` →
///   ``SessionTokens`` (the refresh token is rotated: the old one stops working);
///   `POST logout` → ``OKResponse`` (ends the session, its tokens and its push inbox).
/// - Sign-up is made on the device: `GET signupInfo` → ``SignupInfoResponse``; `POST signup`
///   ``SignupRequest`` (SRP verifier, salts, public key, passphrase-locked private key) →
///   ``SignupResponse`` (SignupModels.swift).
/// - `GET events?since=N` → ``EventsResponse`` (events with id > N, oldest first, at most 500).
/// - `GET labels` → ``LabelListResponse``.
/// - `GET messages?label=ID&page=0&pageSize=50` → ``MessageListResponse``; `GET message(id)` →
///   ``MessageResponse``; `DELETE message(id)`; `POST markRead(id)`; `POST messageLabels(id)`
///   ``LabelChangeRequest``.
/// - `GET attachment(id)` → the `MailPart` bytes (`application/octet-stream`, OpenPGP), opened
///   with ``SealedPartName/attachment(_:)`` of its position and its message's id.
/// - `GET publicKey?address=A` → ``PublicKeyResponse`` (the key directory; 404 for an address
///   without a key here).
/// - `POST send` ``SendRequest`` → ``SendResponse``.
/// - `POST pushSubscriptions` with PushCrypto's `PushRegistration` JSON (`sessionId` must be the
///   caller's session; a public key is accepted only once) → ``OKResponse``.
/// - `GET driveVolume` → ``DriveVolumeResponse``; `POST driveBlocks` (raw encrypted bytes, at most
///   4 MiB) → ``DriveBlockResponse``; `GET driveBlock(id)` → the bytes; `POST driveNodes`
///   ``DriveNodeRequest`` → ``DriveNodeResponse``; `GET driveNodes[?parent=ID]` →
///   ``DriveNodeListResponse``; `GET`/`PUT` (new revision)/`DELETE` `driveNode(id)`;
///   `GET driveRevisions(id)` → `[DriveRevisionResponse]`.
/// - `POST remoteFetch` ``RemoteFetchRequest`` → an image or font the backend fetched (public
///   addresses only, at most 5 MiB, tracking parameters stripped), so the sender sees the server's address.
///
/// Trust-model rows **access token (high)** (every route but the SRP login and refresh needs a session)
/// and **transport (network), low trust** (the client reaches these paths only over pinned TLS).
public enum APIRoute {
    /// `POST` ``RefreshRequest`` → ``SessionTokens`` (public; rotates the refresh token).
    public static let refresh = "/v1/auth/refresh"
    /// `POST` → ``OKResponse``: ends the session, its tokens and its push inbox.
    public static let logout = "/v1/auth/logout"
    /// `GET` → ``SessionListResponse``: the account's sessions (the caller's marked current).
    public static let sessions = "/v1/auth/sessions"
    /// `DELETE` → ``OKResponse``: ends another session of the account (its tokens and push inbox).
    public static func session(_ id: String) -> String { "/v1/auth/sessions/\(id)" }
    /// `GET ?since=N` → ``EventsResponse``.
    public static let events = "/v1/events"
    /// `GET` → ``LabelListResponse``.
    public static let labels = "/v1/labels"
    /// `GET ?label=ID&page=0&pageSize=50` → ``MessageListResponse``.
    public static let messages = "/v1/messages"
    /// `GET` → ``MessageResponse``; `DELETE` → ``OKResponse``.
    public static func message(_ id: String) -> String { "/v1/messages/\(id)" }
    /// `POST` → ``OKResponse``: marks the message read.
    public static func markRead(_ id: String) -> String { "/v1/messages/\(id)/read" }
    /// `GET` → the attachment's `MailPart` bytes.
    public static func attachment(_ id: String) -> String { "/v1/attachments/\(id)" }
    /// `POST` ``SendRequest`` → ``SendResponse``.
    public static let send = "/v1/mail/send"
    /// `GET ?address=A` → ``PublicKeyResponse``: the key directory (the public key of a user of
    /// this server, by address).
    public static let publicKey = "/v1/keys"
    /// `POST` a `PushRegistration` (PushCrypto) for the caller's session → ``OKResponse``.
    public static let pushSubscriptions = "/v1/push/subscriptions"
    /// `POST` raw encrypted bytes (at most 4 MiB) → ``DriveBlockResponse``.
    public static let driveBlocks = "/v1/drive/blocks"
    /// `GET` → the block's bytes.
    public static func driveBlock(_ id: String) -> String { "/v1/drive/blocks/\(id)" }
    /// `POST` ``DriveNodeRequest`` → ``DriveNodeResponse``; `GET ?parent=ID` → ``DriveNodeListResponse``.
    public static let driveNodes = "/v1/drive/nodes"
    /// `GET` → ``DriveNodeResponse``; `PUT` ``DriveNodeRequest`` (a new revision); `DELETE` → ``OKResponse``.
    public static func driveNode(_ id: String) -> String { "/v1/drive/nodes/\(id)" }
    /// `POST` ``LabelChangeRequest`` → ``OKResponse``.
    public static func messageLabels(_ id: String) -> String { "/v1/messages/\(id)/labels" }
    /// `GET` → ``DriveVolumeResponse``.
    public static let driveVolume = "/v1/drive/volume"
    /// `GET` → `[DriveRevisionResponse]`, oldest first.
    public static func driveRevisions(_ nodeID: String) -> String { "/v1/drive/nodes/\(nodeID)/revisions" }
    /// `POST` ``RemoteFetchRequest`` → the resource's bytes with its `Content-Type` (an image or
    /// font): the backend fetches a message's remote content for the reader (the remote-content proxy).
    public static let remoteFetch = "/v1/remote/fetch"
}

/// The `part` names a `MailPart` is bound to (the literal packet's file name), so a body cannot
/// be swapped for an attachment or one attachment for another.
///
/// Trust-model row **database (critical)**: a sealed part moved elsewhere does not open.
public enum SealedPartName {
    /// The JSON ``MessageContent`` of a message.
    public static let body = "body"
    /// The content of the attachment at `position` in its message's attachment list.
    public static func attachment(_ position: Int) -> String { "attachment:\(position)" }
}
