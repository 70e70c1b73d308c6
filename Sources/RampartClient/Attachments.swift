import Foundation
import RampartAPI
import RampartCore
import SealedStore

/// A cleartext copy of an attachment that exists only while it is open.
///
/// Trust-model row **cleartext files (critical)** — "the cleartext file exists only while the
/// preview is open, then is deleted": the file is written 0600 in a fresh 0700 folder under the
/// user's client folder (excluded from backups); ``end()`` overwrites it with zeros and removes
/// it, and so does `deinit`. Leases a crashed process left behind are removed by the next
/// ``AttachmentVault`` (and by logout).
public final class CleartextLease: @unchecked Sendable {
    public let url: URL
    private let folder: URL
    private let lock = NSLock()
    private var ended = false

    init(folder: URL, name: String, contents: Data) throws {
        self.folder = folder
        let safeName = Self.safeFileName(name)
        url = folder.appendingPathComponent(safeName)
        do {
            try PrivateFiles.ensurePrivateDirectory(folder)
            try PrivateFiles.writeAtomically(contents, to: url)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw ClientError.file("Cannot write the cleartext lease: \(error)")
        }
    }

    /// Whether the cleartext file still exists.
    public var isActive: Bool { lock.withLock { !ended } && FileManager.default.fileExists(atPath: url.path) }

    /// Overwrites and deletes the cleartext. Idempotent.
    public func end() {
        let first = lock.withLock { () -> Bool in defer { ended = true }; return !ended }
        guard first else { return }
        ClientFiles.overwrite(url)
        try? FileManager.default.removeItem(at: folder)
    }

    deinit { end() }

    /// A file name without path separators or control characters (the name comes from mail).
    static func safeFileName(_ name: String) -> String {
        var cleaned = String(name.unicodeScalars.map { scalar -> Character in
            if scalar == "/" || scalar == "\\" || scalar.value < 0x20 || scalar.value == 0x7F { return "_" }
            return Character(scalar)
        })
        while cleaned.hasPrefix(".") { cleaned.removeFirst() }
        if cleaned.isEmpty { cleaned = "attachment" }
        return String(cleaned.prefix(200))
    }
}

/// Attachments: metadata from the sealed store, contents from an encrypted cache or the server.
///
/// Trust-model rows **database (critical)** — names and types are sealed in the store; and
/// **device storage (low)** / **attachments** — "kept encrypted in a cache for a few days or
/// until logout": the cache holds the server's HPKE ``SealedPart`` as received (openable only
/// with the private key, which is sealed under the MainKey), files older than
/// ``cacheLifetime`` are removed, and logout removes the folder.
///
/// Note: this is the client's own cache and lease; FileVault (issue 9) had not landed in `main`
/// when it was written, so its block store and leases are not used yet.
public struct AttachmentVault: Sendable {
    public let account: ClientAccount
    /// How long an encrypted attachment stays cached (3–4 days in the trust model).
    public var cacheLifetime: TimeInterval = 4 * 24 * 3600

    public init(account: ClientAccount) { self.account = account }

    static func encodeContentID(_ contentID: String?) -> Data { Data((contentID ?? "").utf8) }
    /// The Content-ID of an embedded image (kept in the record's `keyPackets` column: Rampart's
    /// HPKE parts carry their encapsulated key inside, so there are no separate key packets).
    public static func contentID(of attachment: AttachmentMetadata) -> String? {
        let text = String(decoding: attachment.keyPackets, as: UTF8.self)
        return text.isEmpty ? nil : text
    }

    /// The attachment's record. - Throws: ``ClientError/notFound(kind:id:)``.
    public func metadata(_ id: String) throws -> AttachmentMetadata {
        do { return try account.store().mail.attachment(id: id) } catch SealedStoreError.notFound {
            throw ClientError.notFound(kind: "attachment", id: id)
        }
    }

    /// The attachment's cleartext, in memory (fetched once, then from the encrypted cache).
    public func contents(of attachment: AttachmentMetadata, api: APIClient) async throws -> Data {
        let sealed = try await sealedPart(attachment, api: api)
        let keys = try account.mailboxKey()
        let userID = try account.session().serverUserID
        return try SealedPart.open(sealed, with: keys, userID: userID, messageID: attachment.messageID,
                                   part: SealedPartName.attachment(attachment.id))
    }

    /// Opens a cleartext lease on the attachment; end it when the preview closes.
    public func lease(_ attachment: AttachmentMetadata, api: APIClient) async throws -> CleartextLease {
        var clear = try await contents(of: attachment, api: api)
        defer { clear.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        let folder = account.files.leases(for: account.userID).appendingPathComponent(UUID().uuidString, isDirectory: true)
        return try CleartextLease(folder: folder, name: attachment.name, contents: clear)
    }

    /// Removes expired cache entries and leftover leases of crashed processes.
    public func prune(now: Date = Date()) {
        let fm = FileManager.default
        let cache = account.files.attachments(for: account.userID)
        for file in (try? fm.contentsOfDirectory(at: cache, includingPropertiesForKeys: [.contentModificationDateKey])) ?? [] {
            let modified = (try? file.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate) ?? .distantPast
            if now.timeIntervalSince(modified) > cacheLifetime { try? fm.removeItem(at: file) }
        }
    }

    /// Removes leases no live process holds (call at start, before opening new ones).
    public func removeStaleLeases() {
        let fm = FileManager.default
        let leases = account.files.leases(for: account.userID)
        for folder in (try? fm.contentsOfDirectory(at: leases, includingPropertiesForKeys: nil)) ?? [] {
            for file in (try? fm.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? [] { ClientFiles.overwrite(file) }
            try? fm.removeItem(at: folder)
        }
    }

    func sealedPart(_ attachment: AttachmentMetadata, api: APIClient) async throws -> Data {
        let files = account.files
        try files.prepare(for: account.userID)
        let cached = files.attachments(for: account.userID).appendingPathComponent(Self.cacheName(attachment.id))
        if let data = try? Data(contentsOf: cached) { return data }
        let data: Data
        do { data = try await api.attachment(attachment.id) } catch ClientError.http(404, _) {
            throw ClientError.notFound(kind: "attachment", id: attachment.id)
        }
        try? PrivateFiles.writeAtomically(data, to: cached)
        return data
    }

    /// A cache file name that does not reveal the id's text (hex of its UTF-8).
    static func cacheName(_ id: String) -> String { id.utf8.map { String(format: "%02x", $0) }.joined() + ".part" }
}

extension ClientAccount {
    /// A cleartext lease holding a rendered (sanitized) message document, for a browser to open.
    public func leaseDocument(_ document: String, name: String = "message.html") throws -> CleartextLease {
        try files.prepare(for: userID)
        let folder = files.leases(for: userID).appendingPathComponent(UUID().uuidString, isDirectory: true)
        return try CleartextLease(folder: folder, name: name, contents: Data(document.utf8))
    }
}
