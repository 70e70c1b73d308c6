import Foundation

// Drive: the volume, opaque encrypted blocks, nodes and revisions.

/// `GET /v1/drive/volume`: the user's volume, its main share and the share's root folder
/// (created on first use).
///
/// Trust-model row **database (nodes, revisions, blocks, thumbnails, shares, volumes) —
/// critical**: ids only.
public struct DriveVolumeResponse: Codable, Sendable, Equatable {
    /// The volume's id.
    public var volumeId: String
    /// The main share's id.
    public var shareId: String
    /// The root folder's node id.
    public var rootNodeId: String
    /// A volume description.
    public init(volumeId: String, shareId: String, rootNodeId: String) {
        self.volumeId = volumeId; self.shareId = shareId; self.rootNodeId = rootNodeId
    }
}

/// `POST /v1/drive/blocks` answer: where the server stored an encrypted block.
///
/// Trust-model row **encrypted file blocks (low)**: the block is opaque to the server; the client
/// checks ``sha256`` against the block it sent.
public struct DriveBlockResponse: Codable, Sendable {
    /// The block's id, listed in a ``DriveNodeRequest``.
    public var blockId: String
    /// Lower-case hex SHA-256 of the bytes the server stored.
    public var sha256: String
    /// A block receipt.
    public init(blockId: String, sha256: String) { self.blockId = blockId; self.sha256 = sha256 }
}

/// `POST /v1/drive/nodes` (a new file or folder) and `PUT /v1/drive/nodes/{id}` (a new revision).
///
/// Trust-model row **database (nodes, revisions, blocks…) — critical**: the name (and whatever
/// the client keeps with it, such as the file key) travels sealed; the server sees sizes and the
/// block list.
public struct DriveNodeRequest: Codable, Sendable {
    /// base64 of the client-sealed name (1–4096 bytes).
    public var sealedName: String
    /// The folder the node goes into (`nil`: the root folder).
    public var parentId: String?
    /// The revision's blocks, in order (ids from ``DriveBlockResponse``).
    public var blockIds: [String]
    /// The cleartext size in bytes.
    public var size: Int64
    /// A folder has no blocks (default: a file).
    public var isFolder: Bool?
    /// The new node's id, chosen by the client (``DriveNodeRequest/newID(_:)`` with `n`) so that
    /// its signed metadata can name it; absent: the server picks one.
    public var nodeId: String?
    /// The new revision's id, chosen by the client (``DriveNodeRequest/newID(_:)`` with `r`).
    public var revisionId: String?
    /// A node request.
    public init(sealedName: String, parentId: String?, blockIds: [String], size: Int64, isFolder: Bool? = nil,
                nodeId: String? = nil, revisionId: String? = nil) {
        self.sealedName = sealedName; self.parentId = parentId; self.blockIds = blockIds; self.size = size; self.isFolder = isFolder
        self.nodeId = nodeId; self.revisionId = revisionId
    }

    /// A random id of the server's shape: `prefix` + 24 hex digits (96 random bits).
    public static func newID(_ prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        return prefix + (0..<12).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// Whether `id` is `prefix` + 24 lower-case hex digits.
    public static func isID(_ id: String, prefix: String) -> Bool { WireID.hasShape(id, prefix: prefix, hexDigits: 24) }
}

/// A drive node (file or folder) with its current revision.
///
/// Trust-model row **database (nodes, revisions, blocks…) — critical**: the server returns what
/// the client sealed; the client authenticates it when it opens ``sealedName``.
public struct DriveNodeResponse: Codable, Sendable, Equatable {
    /// The node's id.
    public var id: String
    /// base64 of the client-sealed name.
    public var sealedName: String
    /// The parent folder (`nil` for the root folder).
    public var parentId: String?
    /// The blocks of the current revision, in order.
    public var blockIds: [String]
    /// The cleartext size of the current revision.
    public var size: Int64
    /// Seconds since 1970 of the last change.
    public var modified: Int64
    /// The revision whose blocks ``blockIds`` lists (files only).
    public var revisionId: String?
    /// Whether the node is a folder.
    public var isFolder: Bool?
    /// A node as the server returns it.
    public init(id: String, sealedName: String, parentId: String?, blockIds: [String], size: Int64, modified: Int64,
                revisionId: String? = nil, isFolder: Bool? = nil) {
        self.id = id; self.sealedName = sealedName; self.parentId = parentId; self.blockIds = blockIds; self.size = size; self.modified = modified
        self.revisionId = revisionId; self.isFolder = isFolder
    }
}

/// `GET /v1/drive/nodes[?parent=ID]`.
public struct DriveNodeListResponse: Codable, Sendable {
    /// The children of the folder, oldest change first.
    public var nodes: [DriveNodeResponse]
    /// A list of nodes.
    public init(nodes: [DriveNodeResponse]) { self.nodes = nodes }
}

/// `GET /v1/drive/nodes/{id}/revisions`: every revision of a file, oldest first.
///
/// Trust-model row **encrypted file blocks (low)**: block ids only; the blocks are
/// client-encrypted.
public struct DriveRevisionResponse: Codable, Sendable, Equatable {
    /// The revision's id.
    public var id: String
    /// The file it belongs to.
    public var nodeId: String
    /// Its blocks, in order.
    public var blockIds: [String]
    /// Its cleartext size in bytes.
    public var size: Int64
    /// Seconds since 1970 of its upload.
    public var created: Int64
    /// A revision.
    public init(id: String, nodeId: String, blockIds: [String], size: Int64, created: Int64) {
        self.id = id; self.nodeId = nodeId; self.blockIds = blockIds; self.size = size; self.created = created
    }
}
