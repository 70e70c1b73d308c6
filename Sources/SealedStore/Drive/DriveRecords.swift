import Foundation
import GRDB

// Trust-model row for every type here: **drive database (nodes, revisions, blocks, thumbnails,
// shares, volumes, share URLs) — critical to read, disclose and modify**. Names, hashes, local
// URLs, key material and share-URL passwords are sealed; ids, sizes, states and times stay clear
// for tree walking, sync and quota.

/// A drive volume (clear: ids, state and used space are quota data, nothing personal).
public struct DriveVolume: Sendable, Hashable, SealedRecord {
    public var id: String
    public var state: Int
    public var usedSpace: Int64
    public var rootShareID: String

    public init(id: String, state: Int, usedSpace: Int64, rootShareID: String) {
        self.id = id
        self.state = state
        self.usedSpace = usedSpace
        self.rootShareID = rootShareID
    }

    static let table = SealedTable(name: "volumes", keyColumns: ["id"],
                                   clearColumns: ["state", "used_space", "root_share_id"], sealedColumns: [])
    var keyValues: [DatabaseValue] { [id.databaseValue] }
    var clearValues: [DatabaseValue] { [state.databaseValue, usedSpace.databaseValue, rootShareID.databaseValue] }
    var sealedPlaintexts: [[UInt8]] { [] }
    init(row: Row, opened: [Data]) throws {
        self.init(id: try row.decode(forColumn: "id"), state: try row.decode(forColumn: "state"), usedSpace: try row.decode(forColumn: "used_space"), rootShareID: try row.decode(forColumn: "root_share_id"))
    }
}

/// A share: creator address and (armored, still encrypted) key material sealed.
public struct DriveShare: Sendable, Hashable, SealedRecord {
    public var id: String
    public var volumeID: String
    public var kind: Int
    public var rootNodeID: String
    public var creator: String
    public var keyMaterial: Data

    public init(id: String, volumeID: String, kind: Int, rootNodeID: String, creator: String, keyMaterial: Data) {
        self.id = id
        self.volumeID = volumeID
        self.kind = kind
        self.rootNodeID = rootNodeID
        self.creator = creator
        self.keyMaterial = keyMaterial
    }

    static let table = SealedTable(name: "shares", keyColumns: ["id"],
                                   clearColumns: ["volume_id", "kind", "root_node_id"],
                                   sealedColumns: ["creator", "key_material"])
    var keyValues: [DatabaseValue] { [id.databaseValue] }
    var clearValues: [DatabaseValue] { [volumeID.databaseValue, kind.databaseValue, rootNodeID.databaseValue] }
    var sealedPlaintexts: [[UInt8]] { [creator.sealedBytes, keyMaterial.sealedBytes] }
    init(row: Row, opened: [Data]) throws {
        self.init(id: try row.decode(forColumn: "id"), volumeID: try row.decode(forColumn: "volume_id"), kind: try row.decode(forColumn: "kind"), rootNodeID: try row.decode(forColumn: "root_node_id"),
                  creator: try opened.string(0), keyMaterial: opened.data(1))
    }
}

/// A file or folder: name, MIME type and node key material sealed.
public struct DriveNode: Sendable, Hashable, SealedRecord {
    public var id: String
    public var shareID: String
    public var parentID: String?
    public var kind: Int
    public var state: Int
    public var size: Int64
    public var modified: Int64
    public var name: String
    public var mimeType: String
    public var keyMaterial: Data

    public init(id: String, shareID: String, parentID: String?, kind: Int, state: Int, size: Int64, modified: Int64,
                name: String, mimeType: String, keyMaterial: Data) {
        self.id = id
        self.shareID = shareID
        self.parentID = parentID
        self.kind = kind
        self.state = state
        self.size = size
        self.modified = modified
        self.name = name
        self.mimeType = mimeType
        self.keyMaterial = keyMaterial
    }

    static let table = SealedTable(name: "nodes", keyColumns: ["id"],
                                   clearColumns: ["share_id", "parent_id", "kind", "state", "size", "modified"],
                                   sealedColumns: ["name", "mime_type", "key_material"])
    var keyValues: [DatabaseValue] { [id.databaseValue] }
    var clearValues: [DatabaseValue] {
        [shareID.databaseValue, parentID.databaseValue, kind.databaseValue, state.databaseValue, size.databaseValue,
         modified.databaseValue]
    }
    var sealedPlaintexts: [[UInt8]] { [name.sealedBytes, mimeType.sealedBytes, keyMaterial.sealedBytes] }
    init(row: Row, opened: [Data]) throws {
        self.init(id: try row.decode(forColumn: "id"), shareID: try row.decode(forColumn: "share_id"), parentID: try row.decode(forColumn: "parent_id"), kind: try row.decode(forColumn: "kind"),
                  state: try row.decode(forColumn: "state"), size: try row.decode(forColumn: "size"), modified: try row.decode(forColumn: "modified"), name: try opened.string(0),
                  mimeType: try opened.string(1), keyMaterial: opened.data(2))
    }
}

/// A revision of a file: the manifest signature is sealed.
public struct DriveRevision: Sendable, Hashable, SealedRecord {
    public var id: String
    public var nodeID: String
    public var state: Int
    public var size: Int64
    public var created: Int64
    public var manifestSignature: Data

    public init(id: String, nodeID: String, state: Int, size: Int64, created: Int64, manifestSignature: Data) {
        self.id = id
        self.nodeID = nodeID
        self.state = state
        self.size = size
        self.created = created
        self.manifestSignature = manifestSignature
    }

    static let table = SealedTable(name: "revisions", keyColumns: ["id"],
                                   clearColumns: ["node_id", "state", "size", "created"],
                                   sealedColumns: ["manifest_signature"])
    var keyValues: [DatabaseValue] { [id.databaseValue] }
    var clearValues: [DatabaseValue] {
        [nodeID.databaseValue, state.databaseValue, size.databaseValue, created.databaseValue]
    }
    var sealedPlaintexts: [[UInt8]] { [manifestSignature.sealedBytes] }
    init(row: Row, opened: [Data]) throws {
        self.init(id: try row.decode(forColumn: "id"), nodeID: try row.decode(forColumn: "node_id"), state: try row.decode(forColumn: "state"), size: try row.decode(forColumn: "size"),
                  created: try row.decode(forColumn: "created"), manifestSignature: opened.data(0))
    }
}

/// A block of a revision: its hash and the URL of its local encrypted copy are sealed (the hash
/// could confirm a known file; the URL reveals the cache layout).
public struct DriveBlock: Sendable, Hashable, SealedRecord {
    public var revisionID: String
    public var index: Int
    public var size: Int64
    public var hash: Data
    public var localURL: String

    public init(revisionID: String, index: Int, size: Int64, hash: Data, localURL: String) {
        self.revisionID = revisionID
        self.index = index
        self.size = size
        self.hash = hash
        self.localURL = localURL
    }

    static let table = SealedTable(name: "blocks", keyColumns: ["revision_id", "block_index"],
                                   clearColumns: ["size"], sealedColumns: ["hash", "local_url"])
    var keyValues: [DatabaseValue] { [revisionID.databaseValue, index.databaseValue] }
    var clearValues: [DatabaseValue] { [size.databaseValue] }
    var sealedPlaintexts: [[UInt8]] { [hash.sealedBytes, localURL.sealedBytes] }
    init(row: Row, opened: [Data]) throws {
        self.init(revisionID: try row.decode(forColumn: "revision_id"), index: try row.decode(forColumn: "block_index"), size: try row.decode(forColumn: "size"), hash: opened.data(0),
                  localURL: try opened.string(1))
    }
}

/// A thumbnail of a revision: hash and local URL sealed.
public struct DriveThumbnail: Sendable, Hashable, SealedRecord {
    public var revisionID: String
    public var kind: Int
    public var size: Int64
    public var hash: Data
    public var localURL: String

    public init(revisionID: String, kind: Int, size: Int64, hash: Data, localURL: String) {
        self.revisionID = revisionID
        self.kind = kind
        self.size = size
        self.hash = hash
        self.localURL = localURL
    }

    static let table = SealedTable(name: "thumbnails", keyColumns: ["revision_id", "kind"],
                                   clearColumns: ["size"], sealedColumns: ["hash", "local_url"])
    var keyValues: [DatabaseValue] { [revisionID.databaseValue, kind.databaseValue] }
    var clearValues: [DatabaseValue] { [size.databaseValue] }
    var sealedPlaintexts: [[UInt8]] { [hash.sealedBytes, localURL.sealedBytes] }
    init(row: Row, opened: [Data]) throws {
        self.init(revisionID: try row.decode(forColumn: "revision_id"), kind: try row.decode(forColumn: "kind"), size: try row.decode(forColumn: "size"), hash: opened.data(0),
                  localURL: try opened.string(1))
    }
}

/// A public share link: URL and password sealed (either opens the share to anyone).
public struct DriveShareURL: Sendable, Hashable, SealedRecord {
    public var id: String
    public var shareID: String
    public var expiration: Int64?
    public var permissions: Int
    public var url: String
    public var password: String

    public init(id: String, shareID: String, expiration: Int64?, permissions: Int, url: String, password: String) {
        self.id = id
        self.shareID = shareID
        self.expiration = expiration
        self.permissions = permissions
        self.url = url
        self.password = password
    }

    static let table = SealedTable(name: "share_urls", keyColumns: ["id"],
                                   clearColumns: ["share_id", "expiration", "permissions"],
                                   sealedColumns: ["url", "password"])
    var keyValues: [DatabaseValue] { [id.databaseValue] }
    var clearValues: [DatabaseValue] { [shareID.databaseValue, expiration.databaseValue, permissions.databaseValue] }
    var sealedPlaintexts: [[UInt8]] { [url.sealedBytes, password.sealedBytes] }
    init(row: Row, opened: [Data]) throws {
        self.init(id: try row.decode(forColumn: "id"), shareID: try row.decode(forColumn: "share_id"), expiration: try row.decode(forColumn: "expiration"),
                  permissions: try row.decode(forColumn: "permissions"), url: try opened.string(0), password: try opened.string(1))
    }
}
