import Foundation

// The JSON bodies of the API. Binary values are base64 strings (standard alphabet).

public struct LoginRequest: Codable, Sendable {
    public var username: String
    public var password: String
    public init(username: String, password: String) { self.username = username; self.password = password }
}

public struct RefreshRequest: Codable, Sendable {
    public var refreshToken: String
    public init(refreshToken: String) { self.refreshToken = refreshToken }
}

public struct UserInfo: Codable, Sendable, Equatable {
    public var username: String
    public var displayName: String
    public var addresses: [String]
    public init(username: String, displayName: String, addresses: [String]) {
        self.username = username; self.displayName = displayName; self.addresses = addresses
    }
}

/// The user's key pair as the server keeps it: the public key, and the private key sealed under
/// the mailbox password (``SealedPrivateKey``), which the server cannot open.
public struct UserKeys: Codable, Sendable {
    public var publicKey: String
    public var sealedPrivateKey: String
    public init(publicKey: String, sealedPrivateKey: String) { self.publicKey = publicKey; self.sealedPrivateKey = sealedPrivateKey }
}

public struct SessionTokens: Codable, Sendable {
    public var sessionId: String
    public var accessToken: String
    public var refreshToken: String
    /// Seconds until the access token expires.
    public var expiresIn: Int
    public init(sessionId: String, accessToken: String, refreshToken: String, expiresIn: Int) {
        self.sessionId = sessionId; self.accessToken = accessToken; self.refreshToken = refreshToken; self.expiresIn = expiresIn
    }
}

public struct LoginResponse: Codable, Sendable {
    public var userId: String
    public var sessionId: String
    public var accessToken: String
    public var refreshToken: String
    public var expiresIn: Int
    public var user: UserInfo
    public var keys: UserKeys
    public init(userId: String, tokens: SessionTokens, user: UserInfo, keys: UserKeys) {
        self.userId = userId; sessionId = tokens.sessionId; accessToken = tokens.accessToken
        refreshToken = tokens.refreshToken; expiresIn = tokens.expiresIn; self.user = user; self.keys = keys
    }
    public var tokens: SessionTokens { SessionTokens(sessionId: sessionId, accessToken: accessToken, refreshToken: refreshToken, expiresIn: expiresIn) }
}

public struct APIEvent: Codable, Sendable, Equatable {
    public enum Kind: String, Codable, Sendable { case message, label, drive }
    public enum Action: String, Codable, Sendable { case create, update, delete }
    public var id: Int64
    public var kind: Kind
    public var action: Action
    public var objectId: String
    public init(id: Int64, kind: Kind, action: Action, objectId: String) { self.id = id; self.kind = kind; self.action = action; self.objectId = objectId }
}

public struct EventsResponse: Codable, Sendable {
    public var cursor: Int64
    public var more: Bool
    public var events: [APIEvent]
    public init(cursor: Int64, more: Bool, events: [APIEvent]) { self.cursor = cursor; self.more = more; self.events = events }
}

public struct APILabel: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public init(id: String, name: String) { self.id = id; self.name = name }
}

public struct AttachmentInfo: Codable, Sendable, Equatable {
    public var id: String
    public var name: String
    public var mimeType: String
    public var size: Int
    /// Set for an embedded image referenced as `cid:<contentId>` from the body.
    public var contentId: String?
    public init(id: String, name: String, mimeType: String, size: Int, contentId: String? = nil) {
        self.id = id; self.name = name; self.mimeType = mimeType; self.size = size; self.contentId = contentId
    }
}

public struct MessageResponse: Codable, Sendable {
    public var id: String
    public var conversationId: String
    public var labelIds: [String]
    /// Seconds since 1970.
    public var time: Int64
    public var size: Int64
    public var unread: Bool
    /// base64 of a ``SealedPart`` holding the JSON of a ``MessageContent``.
    public var sealedBody: String
    public var attachments: [AttachmentInfo]
    public init(id: String, conversationId: String, labelIds: [String], time: Int64, size: Int64, unread: Bool, sealedBody: String, attachments: [AttachmentInfo]) {
        self.id = id; self.conversationId = conversationId; self.labelIds = labelIds; self.time = time
        self.size = size; self.unread = unread; self.sealedBody = sealedBody; self.attachments = attachments
    }
}

public struct Correspondent: Codable, Sendable, Equatable {
    public var name: String
    public var address: String
    public init(name: String, address: String) { self.name = name; self.address = address }
}

/// What the sealed body of a message holds once opened: every header that says something about
/// the people involved is inside, so the server stores none of it in clear.
public struct MessageContent: Codable, Sendable, Equatable {
    public var subject: String
    public var sender: Correspondent
    public var to: [Correspondent]
    public var html: String
    public init(subject: String, sender: Correspondent, to: [Correspondent], html: String) {
        self.subject = subject; self.sender = sender; self.to = to; self.html = html
    }
}

public struct OutgoingAttachment: Codable, Sendable {
    public var name: String
    public var mimeType: String
    /// base64 of the content.
    public var data: String
    public var contentId: String?
    public init(name: String, mimeType: String, data: String, contentId: String? = nil) {
        self.name = name; self.mimeType = mimeType; self.data = data; self.contentId = contentId
    }
}

/// A submission (demo): the server seals it to each recipient's public key at once.
public struct SendRequest: Codable, Sendable {
    public var to: [String]
    public var subject: String
    public var html: String
    public var attachments: [OutgoingAttachment]?
    public init(to: [String], subject: String, html: String, attachments: [OutgoingAttachment]? = nil) {
        self.to = to; self.subject = subject; self.html = html; self.attachments = attachments
    }
}

public struct SendResponse: Codable, Sendable {
    public var messageIds: [String]
    public init(messageIds: [String]) { self.messageIds = messageIds }
}

public struct DriveBlockResponse: Codable, Sendable {
    public var blockId: String
    public var sha256: String
    public init(blockId: String, sha256: String) { self.blockId = blockId; self.sha256 = sha256 }
}

public struct DriveNodeRequest: Codable, Sendable {
    /// base64 of the client-sealed name.
    public var sealedName: String
    public var parentId: String?
    public var blockIds: [String]
    public var size: Int64
    /// A folder has no blocks (default: a file).
    public var isFolder: Bool?
    public init(sealedName: String, parentId: String?, blockIds: [String], size: Int64, isFolder: Bool? = nil) {
        self.sealedName = sealedName; self.parentId = parentId; self.blockIds = blockIds; self.size = size; self.isFolder = isFolder
    }
}

public struct DriveNodeResponse: Codable, Sendable, Equatable {
    public var id: String
    public var sealedName: String
    public var parentId: String?
    public var blockIds: [String]
    public var size: Int64
    public var modified: Int64
    /// The revision whose blocks ``blockIds`` lists (files only).
    public var revisionId: String?
    public var isFolder: Bool?
    public init(id: String, sealedName: String, parentId: String?, blockIds: [String], size: Int64, modified: Int64,
                revisionId: String? = nil, isFolder: Bool? = nil) {
        self.id = id; self.sealedName = sealedName; self.parentId = parentId; self.blockIds = blockIds; self.size = size; self.modified = modified
        self.revisionId = revisionId; self.isFolder = isFolder
    }
}

/// Every error body: `{"error": {"code": "...", "message": "..."}}`.
public struct APIErrorBody: Codable, Sendable, Equatable {
    public struct Detail: Codable, Sendable, Equatable {
        public var code: String
        public var message: String
    }
    public var error: Detail
    public init(code: String, message: String) { error = Detail(code: code, message: message) }
}

/// What `rampart server start` writes to `<home>/server.json` once it listens.
public struct ServerInfo: Codable, Sendable {
    public var port: Int
    /// SPKI pins (base64 SHA-256): the live key's first, then the backup key's.
    public var pins: [String]
    /// PEM of the self-signed CA certificate the client trusts as the only root.
    public var certificatePEM: String
    public var pid: Int32
    /// The host name the certificate is issued for (`localhost`; `127.0.0.1` is in it too).
    public var host: String?
    /// The folder holding one push inbox per session: `<pushDirectory>/<sessionId>/*.push`, each
    /// file one RFC 8291 `aes128gcm` body (what a push service would deliver).
    public var pushDirectory: String?
    public init(port: Int, pins: [String], certificatePEM: String, pid: Int32, host: String? = nil, pushDirectory: String? = nil) {
        self.port = port; self.pins = pins; self.certificatePEM = certificatePEM; self.pid = pid
        self.host = host; self.pushDirectory = pushDirectory
    }
    /// The base URL of the API (`https://localhost:<port>`).
    public var baseURL: URL { URL(string: "https://\(host ?? "localhost"):\(port)")! }
}

/// `GET /v1/messages`: one page of messages, newest first. Trust-model row **database
/// (critical)**: each message's content is a ``SealedPart`` only the mailbox key opens.
public struct MessageListResponse: Codable, Sendable {
    public var messages: [MessageResponse]
    /// Messages matching the filter, over all pages.
    public var total: Int
    public init(messages: [MessageResponse], total: Int) { self.messages = messages; self.total = total }
}

/// `GET /v1/labels`.
public struct LabelListResponse: Codable, Sendable {
    public var labels: [APILabel]
    public init(labels: [APILabel]) { self.labels = labels }
}

/// The well-known label ids every mailbox has (custom labels have random ids). Trust-model row
/// **database (critical)**: label membership is metadata the server sees.
public enum SystemLabel {
    public static let inbox = "inbox"
    public static let sent = "sent"
    public static let archive = "archive"
    public static let trash = "trash"
}

/// `POST /v1/messages/{id}/labels` (add) and `DELETE`-like removal with `remove`.
public struct LabelChangeRequest: Codable, Sendable {
    public var add: [String]
    public var remove: [String]
    public init(add: [String] = [], remove: [String] = []) { self.add = add; self.remove = remove }
}

/// `GET /v1/drive/volume`: the user's volume, its main share and the share's root folder
/// (created on first use). Trust-model row **drive database (critical)**: ids only.
public struct DriveVolumeResponse: Codable, Sendable, Equatable {
    public var volumeId: String
    public var shareId: String
    public var rootNodeId: String
    public init(volumeId: String, shareId: String, rootNodeId: String) {
        self.volumeId = volumeId; self.shareId = shareId; self.rootNodeId = rootNodeId
    }
}

/// `GET /v1/drive/nodes[?parent=ID]`.
public struct DriveNodeListResponse: Codable, Sendable {
    public var nodes: [DriveNodeResponse]
    public init(nodes: [DriveNodeResponse]) { self.nodes = nodes }
}

/// `GET /v1/drive/nodes/{id}/revisions`: every revision of a file, oldest first. Trust-model row
/// **encrypted file blocks (low)**: block ids only; the blocks are client-encrypted.
public struct DriveRevisionResponse: Codable, Sendable, Equatable {
    public var id: String
    public var nodeId: String
    public var blockIds: [String]
    public var size: Int64
    public var created: Int64
    public init(id: String, nodeId: String, blockIds: [String], size: Int64, created: Int64) {
        self.id = id; self.nodeId = nodeId; self.blockIds = blockIds; self.size = size; self.created = created
    }
}

/// `{"ok": true}`, the body of calls that return nothing else (logout, push registration).
public struct OKResponse: Codable, Sendable {
    public var ok: Bool
    public init() { ok = true }
}
