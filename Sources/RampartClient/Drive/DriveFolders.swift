import Foundation
import RampartAPI

/// Drive folders: a folder is a node without blocks whose metadata, like a file's, holds its
/// name sealed to the user's own key and signed (``DriveNodeManifest``, type
/// ``DriveClient/folderType``, bound to the node id and ``DriveClient/folderRevision``).
///
/// Trust-model row **database (nodes, revisions, blocks…) — critical**: the server sees that a
/// node is a folder, its parent and its children, never its name. A folder's metadata has no
/// revision (the server keeps none for folders), so the server could show an older name of a
/// renamed folder; it cannot make one up, or move a file's metadata onto a folder.
extension DriveClient {
    /// The revision id a folder's metadata is signed for.
    public static let folderRevision = "folder"
    /// The type a folder's metadata names.
    public static let folderType = "inode/directory"

    /// A name for a file or folder: trimmed; not empty, `.` or `..`, at most 255 characters, no
    /// `/` or control characters. - Throws: ``ClientError/badInput(_:)``.
    public static func validName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed != ".", trimmed != "..", trimmed.count <= 255,
              !trimmed.unicodeScalars.contains(where: { $0 == "/" || $0.value < 0x20 || $0.value == 0x7F }) else {
            throw ClientError.badInput("\"\(name)\" cannot be a file or folder name (empty, \".\" or \"..\", over 255 characters, or with / or a control character).")
        }
        return trimmed
    }

    /// Creates folder `name` in `parent` (a folder's id; nil: the root folder).
    /// - Throws: ``ClientError/badInput(_:)`` for a bad name or one that `parent` already holds,
    ///   ``ClientError/notFound(kind:id:)`` for an unknown parent.
    public func createFolder(_ name: String, in parent: String? = nil, api: APIClient) async throws -> DriveEntry {
        let trimmed = try Self.validName(name)
        if try await list(in: parent, api: api).contains(where: { $0.name == trimmed }) {
            throw ClientError.badInput("\"\(trimmed)\" already exists in this folder.")
        }
        let manifest = DriveNodeManifest(name: trimmed, mimeType: Self.folderType, key: "", fileId: "", size: 0, blockSize: 0, blocksDigest: "")
        let nodeID = DriveNodeRequest.newID("n")
        let sealedName = try manifest.sealed(user: try account.session().serverUserID, nodeID: nodeID, revisionID: Self.folderRevision,
                                             key: try account.mailboxKey())
        let volume = try await api.driveVolume()
        let node: DriveNodeResponse
        do {
            node = try await api.createNode(DriveNodeRequest(sealedName: sealedName.base64EncodedString(), parentId: parent ?? volume.rootNodeId,
                                                             blockIds: [], size: 0, isFolder: true, nodeId: nodeID))
        } catch ClientError.http(404, _) {
            throw ClientError.notFound(kind: "drive folder", id: parent ?? volume.rootNodeId)
        }
        guard node.id == nodeID, node.isFolder == true else {
            throw ClientError.tampered("The server's answer for the new drive folder (another id than the one signed, or not a folder)")
        }
        return DriveEntry(id: node.id, name: trimmed, size: 0, modified: node.modified, isFolder: true)
    }

    /// The folder at `path` (names separated by `/`, from the root folder): nil for the root
    /// folder itself (`""` or `/`), else the folder's entry.
    /// - Throws: ``ClientError/notFound(kind:id:)`` when a name of the path is no folder there.
    public func folder(atPath path: String, api: APIClient) async throws -> DriveEntry? {
        var current: DriveEntry?
        for name in path.split(separator: "/").map(String.init) where name != "." {
            guard let next = try await list(in: current?.id, api: api).first(where: { $0.isFolder && $0.name == name }) else {
                throw ClientError.notFound(kind: "drive folder", id: path)
            }
            current = next
        }
        return current
    }

    /// Creates the folder `path` names (its parent must exist): `rampart drive mkdir a/b`.
    /// - Throws: as ``createFolder(_:in:api:)`` and ``folder(atPath:api:)``.
    public func createFolder(atPath path: String, api: APIClient) async throws -> DriveEntry {
        var names = path.split(separator: "/").map(String.init).filter { $0 != "." }
        guard let last = names.popLast() else { throw ClientError.badInput("Name the folder to create, e.g. `Documents` or `Documents/2026`.") }
        let parent = try await folder(atPath: names.joined(separator: "/"), api: api)
        return try await createFolder(last, in: parent?.id, api: api)
    }

    /// The folder's parent: nil for a folder in the root folder (and for the root itself), else
    /// the parent's entry, name opened.
    public func parent(of folder: String, api: APIClient) async throws -> DriveEntry? {
        let volume = try await api.driveVolume()
        guard folder != volume.rootNodeId else { return nil }
        let node = try await self.node(folder, kind: "drive folder", api: api)
        guard let parentID = node.parentId, parentID != volume.rootNodeId else { return nil }
        return try await folderEntry(parentID, api: api)
    }

    /// Node `id` from the server, a 404 answered as ``ClientError/notFound(kind:id:)`` of `kind`
    /// (`drive file`, `drive folder`).
    func node(_ id: String, kind: String, api: APIClient) async throws -> DriveNodeResponse {
        do { return try await api.node(id) } catch ClientError.http(404, _) { throw ClientError.notFound(kind: kind, id: id) }
    }

    /// The entry of folder `id`, name opened. - Throws: ``ClientError/notFound(kind:id:)`` when it
    /// is no folder of this user.
    public func folderEntry(_ id: String, api: APIClient) async throws -> DriveEntry {
        let node = try await self.node(id, kind: "drive folder", api: api)
        guard node.isFolder == true else { throw ClientError.notFound(kind: "drive folder", id: id) }
        return DriveEntry(id: node.id, name: try open(node).name, size: 0, modified: node.modified, isFolder: true)
    }
}
