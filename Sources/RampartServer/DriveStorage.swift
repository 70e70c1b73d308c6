import Crypto
import Foundation
import RampartAPI
import RampartCore

/// Drive objects of each user: a volume with one share whose root folder holds nodes; a file node
/// has revisions, each listing the blocks that make its content.
///
/// Trust-model rows **encrypted file blocks (low)** and **database (nodes, revisions, blocks…)**:
/// block contents and node names arrive already encrypted by the client and are stored as opaque
/// bytes; the server checks only ownership, sizes and the SHA-256 of each block (which it returns
/// so the client can verify a download).
struct DriveStorage: Sendable {
    let store: BackendStore
    let clock: any RampartClock
    /// The largest block accepted (4 MiB, as Proton Drive's blocks).
    static let maximumBlockSize = 4 * 1024 * 1024
    /// The most blocks one revision may list.
    static let maximumBlocksPerRevision = 4096

    func volume(userID: String) throws -> DriveVolumeResponse {
        try store.write { db in
            if let row = try StorageRow.fetchOne(db, sql: "SELECT * FROM driveVolumes WHERE userId = ?", arguments: [userID]) {
                return DriveVolumeResponse(volumeId: row["id"], shareId: row["shareId"], rootNodeId: row["rootNodeId"])
            }
            let volume = DriveVolumeResponse(volumeId: BackendStore.newID("v"), shareId: BackendStore.newID("sh"),
                                             rootNodeId: BackendStore.newID("n"))
            try db.execute(sql: "INSERT INTO driveVolumes (id, userId, shareId, rootNodeId) VALUES (?, ?, ?, ?)",
                           arguments: [volume.volumeId, userID, volume.shareId, volume.rootNodeId])
            try db.execute(sql: """
                INSERT INTO driveNodes (id, userId, parentId, sealedName, isFolder, revisionId, modified) VALUES (?, ?, NULL, ?, 1, NULL, ?)
                """, arguments: [volume.rootNodeId, userID, Data(), now])
            return volume
        }
    }

    var now: Int64 { Int64(clock.now.timeIntervalSince1970) }

    func storeBlock(userID: String, data: Data) throws -> DriveBlockResponse {
        guard !data.isEmpty else { throw ServerError.badRequest("a block cannot be empty") }
        guard data.count <= Self.maximumBlockSize else { throw ServerError.payloadTooLarge(limit: Self.maximumBlockSize) }
        let id = BackendStore.newID("b")
        let digest = SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
        try store.write { db in
            try db.execute(sql: "INSERT INTO driveBlocks (id, userId, sha256, data) VALUES (?, ?, ?, ?)", arguments: [id, userID, digest, data])
        }
        return DriveBlockResponse(blockId: id, sha256: digest)
    }

    func block(userID: String, id: String) throws -> Data {
        try store.read { db in
            guard let data = try Data.fetchOne(db, sql: "SELECT data FROM driveBlocks WHERE id = ? AND userId = ?", arguments: [id, userID])
            else { throw ServerError.notFound("The block \(id)") }
            return data
        }
    }

    func createNode(userID: String, _ request: DriveNodeRequest) throws -> DriveNodeResponse {
        let root = try volume(userID: userID).rootNodeId
        let sealedName = try Self.decodeName(request.sealedName)
        let isFolder = request.isFolder ?? false
        if let chosen = request.nodeId, !DriveNodeRequest.isID(chosen, prefix: "n") {
            throw ServerError.badRequest("a node id is n followed by 24 hex digits")
        }
        let nodeID = request.nodeId ?? BackendStore.newID("n")
        return try store.write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM driveNodes WHERE id = ?", arguments: [nodeID]) != true else {
                throw ServerError.conflict("the node id \(nodeID) is taken")
            }
            let parent = request.parentId ?? root
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM driveNodes WHERE id = ? AND userId = ? AND isFolder = 1",
                                    arguments: [parent, userID]) == true
            else { throw ServerError.notFound("The parent folder \(parent)") }
            var revisionID: String?
            try db.execute(sql: """
                INSERT INTO driveNodes (id, userId, parentId, sealedName, isFolder, revisionId, modified) VALUES (?, ?, ?, ?, ?, NULL, ?)
                """, arguments: [nodeID, userID, parent, sealedName, isFolder ? 1 : 0, now])
            if !isFolder {
                revisionID = try Self.addRevision(db, userID: userID, nodeID: nodeID, request: request, now: now)
            } else if !request.blockIds.isEmpty {
                throw ServerError.badRequest("a folder has no blocks")
            }
            try BackendStore.appendEvent(db, userID: userID, kind: .drive, action: .create, objectID: nodeID)
            return DriveNodeResponse(id: nodeID, sealedName: request.sealedName, parentId: parent, blockIds: isFolder ? [] : request.blockIds,
                                     size: isFolder ? 0 : request.size, modified: now, revisionId: revisionID, isFolder: isFolder)
        }
    }

    /// A new revision of a file (new blocks, and the name given in the request).
    func updateNode(userID: String, id: String, _ request: DriveNodeRequest) throws -> DriveNodeResponse {
        let sealedName = try Self.decodeName(request.sealedName)
        return try store.write { db in
            guard let row = try StorageRow.fetchOne(db, sql: "SELECT * FROM driveNodes WHERE id = ? AND userId = ?", arguments: [id, userID]),
                  row["parentId"] as String? != nil
            else { throw ServerError.notFound("The node \(id)") }
            try db.execute(sql: "UPDATE driveNodes SET sealedName = ?, modified = ? WHERE id = ?", arguments: [sealedName, now, id])
            if (row["isFolder"] as Int) == 0 {
                _ = try Self.addRevision(db, userID: userID, nodeID: id, request: request, now: now)
            }
            try BackendStore.appendEvent(db, userID: userID, kind: .drive, action: .update, objectID: id)
            return try Self.node(db, userID: userID, id: id)
        }
    }

    static func addRevision(_ db: any StorageConnection, userID: String, nodeID: String, request: DriveNodeRequest, now: Int64) throws -> String {
        guard request.blockIds.count <= maximumBlocksPerRevision else {
            throw ServerError.badRequest("a revision lists at most \(maximumBlocksPerRevision) blocks")
        }
        guard request.size >= 0 else { throw ServerError.badRequest("the size cannot be negative") }
        for block in request.blockIds {
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM driveBlocks WHERE id = ? AND userId = ?", arguments: [block, userID]) == true
            else { throw ServerError.notFound("The block \(block)") }
        }
        if let chosen = request.revisionId, !DriveNodeRequest.isID(chosen, prefix: "r") {
            throw ServerError.badRequest("a revision id is r followed by 24 hex digits")
        }
        let revisionID = request.revisionId ?? BackendStore.newID("r")
        guard try Bool.fetchOne(db, sql: "SELECT 1 FROM driveRevisions WHERE id = ?", arguments: [revisionID]) != true else {
            throw ServerError.conflict("the revision id \(revisionID) is taken")
        }
        let blocks = String(decoding: try JSONEncoder().encode(request.blockIds), as: UTF8.self)
        try db.execute(sql: "INSERT INTO driveRevisions (id, nodeId, blockIds, size, created) VALUES (?, ?, ?, ?, ?)",
                       arguments: [revisionID, nodeID, blocks, request.size, now])
        try db.execute(sql: "UPDATE driveNodes SET revisionId = ? WHERE id = ?", arguments: [revisionID, nodeID])
        return revisionID
    }

    static func decodeName(_ text: String) throws -> Data {
        guard let data = Data(base64Encoded: text), !data.isEmpty, data.count <= 4096 else {
            throw ServerError.badRequest("sealedName must be base64 of 1 to 4096 bytes")
        }
        return data
    }

    static func node(_ db: any StorageConnection, userID: String, id: String) throws -> DriveNodeResponse {
        guard let row = try StorageRow.fetchOne(db, sql: "SELECT * FROM driveNodes WHERE id = ? AND userId = ?", arguments: [id, userID])
        else { throw ServerError.notFound("The node \(id)") }
        return try node(db, row)
    }

    static func node(_ db: any StorageConnection, _ row: StorageRow) throws -> DriveNodeResponse {
        var blocks: [String] = []
        var size: Int64 = 0
        if let revision = row["revisionId"] as String?,
           let revisionRow = try StorageRow.fetchOne(db, sql: "SELECT * FROM driveRevisions WHERE id = ?", arguments: [revision]) {
            blocks = (try? JSONDecoder().decode([String].self, from: Data((revisionRow["blockIds"] as String).utf8))) ?? []
            size = revisionRow["size"]
        }
        return DriveNodeResponse(id: row["id"], sealedName: row.data("sealedName").base64EncodedString(), parentId: row["parentId"],
                                 blockIds: blocks, size: size, modified: row["modified"], revisionId: row["revisionId"],
                                 isFolder: (row["isFolder"] as Int) != 0)
    }

    func node(userID: String, id: String) throws -> DriveNodeResponse {
        try store.read { db in try Self.node(db, userID: userID, id: id) }
    }

    func list(userID: String, parent: String?) throws -> DriveNodeListResponse {
        let root = try volume(userID: userID).rootNodeId
        return try store.read { db in
            let rows = try StorageRow.fetchAll(db, sql: "SELECT * FROM driveNodes WHERE userId = ? AND parentId = ? ORDER BY modified, id",
                                        arguments: [userID, parent ?? root])
            return DriveNodeListResponse(nodes: try rows.map { try Self.node(db, $0) })
        }
    }

    func revisions(userID: String, nodeID: String) throws -> [DriveRevisionResponse] {
        try store.read { db in
            _ = try Self.node(db, userID: userID, id: nodeID)
            return try StorageRow.fetchAll(db, sql: "SELECT * FROM driveRevisions WHERE nodeId = ? ORDER BY created, rowid", arguments: [nodeID]).map {
                DriveRevisionResponse(id: $0["id"], nodeId: nodeID,
                                      blockIds: (try? JSONDecoder().decode([String].self, from: Data(($0["blockIds"] as String).utf8))) ?? [],
                                      size: $0["size"], created: $0["created"])
            }
        }
    }

    /// Deletes a node, its children, their revisions and the blocks they listed.
    func delete(userID: String, id: String) throws {
        try store.write { db in
            guard let row = try StorageRow.fetchOne(db, sql: "SELECT parentId FROM driveNodes WHERE id = ? AND userId = ?", arguments: [id, userID]),
                  row["parentId"] as String? != nil
            else { throw ServerError.notFound("The node \(id)") }
            var pending = [id]
            var removed: [String] = []
            while let next = pending.popLast() {
                removed.append(next)
                pending += try String.fetchAll(db, sql: "SELECT id FROM driveNodes WHERE parentId = ? AND userId = ?", arguments: [next, userID])
            }
            for node in removed {
                for list in try String.fetchAll(db, sql: "SELECT blockIds FROM driveRevisions WHERE nodeId = ?", arguments: [node]) {
                    for block in (try? JSONDecoder().decode([String].self, from: Data(list.utf8))) ?? [] {
                        try db.execute(sql: "DELETE FROM driveBlocks WHERE id = ? AND userId = ?", arguments: [block, userID])
                    }
                }
                try db.execute(sql: "DELETE FROM driveNodes WHERE id = ?", arguments: [node])
                try BackendStore.appendEvent(db, userID: userID, kind: .drive, action: .delete, objectID: node)
            }
        }
    }
}
