import Foundation
import GRDB

/// Typed access to the drive tables of a ``SealedStore``.
///
/// Trust-model row: **drive database — critical to read, disclose and modify**. Same rules as
/// ``MailStore``: `locked` while locked, `tampered` for anything that does not authenticate.
public struct DriveStore: Sendable {
    let store: SealedStore

    public func insert(volume: DriveVolume) throws { try save(volume) }
    public func volume(id: String) throws -> DriveVolume { try one(key: [id.databaseValue], kind: "volume", id: id) }

    public func insert(share: DriveShare) throws { try save(share) }
    public func share(id: String) throws -> DriveShare { try one(key: [id.databaseValue], kind: "share", id: id) }

    public func insert(node: DriveNode) throws { try save(node) }
    /// Inserts or replaces several nodes in one transaction.
    public func insert(nodes: [DriveNode]) throws {
        try store.mutate { db, keys, state in
            let sealer = try keys.columns()
            for node in nodes { try SealedRows.save(node, in: db, sealer: sealer, state: state) }
        }
    }
    public func node(id: String) throws -> DriveNode { try one(key: [id.databaseValue], kind: "node", id: id) }
    /// The children of a folder, most recently modified first.
    public func children(of parentID: String, limit: Int = 1_000) throws -> [DriveNode] {
        try all(where: "parent_id = ?", [parentID], orderBy: "modified DESC, rowid DESC", limit: limit)
    }
    @discardableResult
    public func deleteNode(id: String) throws -> Bool { try delete(DriveNode.self, key: [id.databaseValue]) }

    public func insert(revision: DriveRevision) throws { try save(revision) }
    public func revision(id: String) throws -> DriveRevision {
        try one(key: [id.databaseValue], kind: "revision", id: id)
    }
    public func revisions(nodeID: String) throws -> [DriveRevision] {
        try all(where: "node_id = ?", [nodeID], orderBy: "created, rowid")
    }

    public func insert(block: DriveBlock) throws { try save(block) }
    /// Inserts or replaces several blocks in one transaction.
    public func insert(blocks: [DriveBlock]) throws {
        try store.mutate { db, keys, state in
            let sealer = try keys.columns()
            for block in blocks { try SealedRows.save(block, in: db, sealer: sealer, state: state) }
        }
    }
    public func block(revisionID: String, index: Int) throws -> DriveBlock {
        try one(key: [revisionID.databaseValue, index.databaseValue], kind: "block", id: "\(revisionID)/\(index)")
    }
    /// The blocks of a revision, in index order.
    public func blocks(revisionID: String) throws -> [DriveBlock] {
        try all(where: "revision_id = ?", [revisionID], orderBy: "block_index")
    }

    public func insert(thumbnail: DriveThumbnail) throws { try save(thumbnail) }
    public func thumbnails(revisionID: String) throws -> [DriveThumbnail] {
        try all(where: "revision_id = ?", [revisionID], orderBy: "kind")
    }

    public func insert(shareURL: DriveShareURL) throws { try save(shareURL) }
    public func shareURL(id: String) throws -> DriveShareURL {
        try one(key: [id.databaseValue], kind: "share URL", id: id)
    }
    public func shareURLs(shareID: String) throws -> [DriveShareURL] {
        try all(where: "share_id = ?", [shareID], orderBy: "rowid")
    }

    // MARK: - Generic

    private func save<R: SealedRecord>(_ record: R) throws {
        try store.mutate { db, keys, state in try SealedRows.save(record, in: db, sealer: try keys.columns(), state: state) }
    }

    private func one<R: SealedRecord>(key: [DatabaseValue], kind: String, id: String) throws -> R {
        try store.read(checking: [R.table.name]) { db, keys in
            guard let found = try SealedRows.fetchOne(R.self, key: key, in: db, sealer: try keys.columns()) else {
                throw SealedStoreError.notFound(kind: kind, id: id)
            }
            return found
        }
    }

    private func all<R: SealedRecord>(where condition: String, _ arguments: StatementArguments,
                                      orderBy: String, limit: Int? = nil) throws -> [R] {
        try store.read(checking: [R.table.name]) { db, keys in
            try SealedRows.fetchAll(R.self, in: db, sealer: try keys.columns(), where: condition,
                                    arguments: arguments, orderBy: orderBy, limit: limit)
        }
    }

    private func delete<R: SealedRecord>(_ type: R.Type, key: [DatabaseValue]) throws -> Bool {
        try store.mutate([]) { db, _, state in try SealedRows.delete(R.self, key: key, in: db, state: state) }
    }
}
