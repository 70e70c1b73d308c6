import Crypto
import Foundation
import RampartCore

/// The encrypted cache of mail attachments.
///
/// Trust-model rows: **database (messages, attachments, …) — critical** and the mechanism
/// **"Attachments. Kept encrypted in a cache for a few days (3–4) or until logout. When one is
/// opened, the cleartext file exists only while the preview is open, then is deleted."**
///
/// - Each attachment is re-sealed at rest (AES-256-GCM, `ChunkedEnvelope` format, 1 MiB
///   chunks) under a MainKey sub-key bound to the user and the attachment id; the associated data
///   binds both again, so a blob cannot be moved to another entry or user. Blob files have
///   random names.
/// - The index (`AttachmentIndex`, GRDB) keeps the id only as an HMAC and seals file name,
///   MIME type and id (AD = table | column | row | user).
/// - Entries expire after ``Configuration/timeToLive`` (default 3 days, on the injected
///   `RampartClock`); an entry stamped in the future (the wall clock was set back) counts as
///   expired. The total is capped at ``Configuration/maxTotalBytes`` with least-recently-used
///   eviction.
/// - ``purgeAll()`` runs at logout; ``Vault`` also runs it on the Keymaker's wipe.
/// - Cleartext only through a ``CleartextLease`` in the ``PreviewArea``.
public final class AttachmentCache: CleartextLeasing, @unchecked Sendable {
    /// Tunables of the cache.
    public struct Configuration: Sendable {
        /// How long an attachment stays cached (default 3 days).
        public var timeToLive: TimeInterval
        /// The cap on the sealed bytes of all cached attachments (default 512 MiB).
        public var maxTotalBytes: Int64
        /// The largest single attachment accepted (default 256 MiB).
        public var maxAttachmentBytes: Int64
        /// Chunk size of the sealed envelope (default 1 MiB).
        public var chunkSize: Int

        public init(timeToLive: TimeInterval = 3 * 24 * 3600, maxTotalBytes: Int64 = 512 << 20,
                    maxAttachmentBytes: Int64 = 256 << 20, chunkSize: Int = 1 << 20) {
            precondition(chunkSize > 0 && chunkSize <= 16 << 20, "chunkSize must be 1 byte ... 16 MiB")
            self.timeToLive = timeToLive
            self.maxTotalBytes = maxTotalBytes
            self.maxAttachmentBytes = maxAttachmentBytes
            self.chunkSize = chunkSize
        }
    }

    /// What the cache knows about an attachment (decrypted on demand).
    public struct Entry: Sendable, Equatable {
        public let attachmentID: String
        public let fileName: String
        public let mimeType: String
        public let storedBytes: Int64
        public let storedAt: Date
        public let lastUsedAt: Date
    }

    public var userID: UserID { space.userID }
    public let configuration: Configuration
    /// The folder of sealed blobs.
    public var folder: URL { space.folder }
    private let space: VaultSpace
    private let clock: any RampartClock
    private let index: AttachmentIndex
    private let lock = NSRecursiveLock()

    /// Opens (or creates) the cache in `folder`.
    /// - Throws: ``FileVaultError``.
    public init(folder: URL, indexPath: URL, provider: any MainKeyProvider, clock: any RampartClock,
                previews: PreviewArea, configuration: Configuration = Configuration(),
                writeBudget: WriteBudget? = nil) throws {
        space = try VaultSpace(folder: folder, provider: provider, previews: previews, budget: writeBudget)
        self.clock = clock
        self.configuration = configuration
        index = try AttachmentIndex(path: indexPath)
        removeStrayFiles()
    }

    // MARK: Storing

    /// Seals `data` into the cache (replacing an earlier copy of the same attachment).
    /// - Throws: ``FileVaultError/fileTooLarge(size:limit:)``, ``FileVaultError/diskFull(path:)``,
    ///   ``FileVaultError/locked``.
    public func put(_ data: Data, attachment id: String, fileName: String, mimeType: String) throws {
        var offset = 0
        try put(length: Int64(data.count), attachment: id, fileName: fileName, mimeType: mimeType,
                  sourcePath: "(memory)") { count in
            let end = min(data.count, offset + count)
            defer { offset = end }
            return data.subdata(in: (data.startIndex + offset)..<(data.startIndex + end))
        }
    }

    /// Seals the file at `source` into the cache, reading it in chunks (memory stays flat).
    /// - Throws: as ``put(_:attachment:fileName:mimeType:)``, and
    ///   ``FileVaultError/sourceChanged(path:)``.
    public func put(contentsOf source: URL, attachment id: String, fileName: String, mimeType: String) throws {
        let input = try VaultInputFile(reading: source)
        try put(length: input.size, attachment: id, fileName: fileName, mimeType: mimeType,
                  sourcePath: source.path) { try input.read(upTo: $0) }
    }

    private func put(length: Int64, attachment id: String, fileName: String, mimeType: String,
                       sourcePath: String, read: (Int) throws -> Data) throws {
        try Self.validate(id)
        let envelope = ChunkedEnvelope(chunkSize: configuration.chunkSize, plaintextLength: length)
        let limit = min(configuration.maxAttachmentBytes, configuration.maxTotalBytes)
        guard length <= configuration.maxAttachmentBytes, envelope.sealedLength <= configuration.maxTotalBytes else {
            throw FileVaultError.fileTooLarge(size: length, limit: limit)
        }
        let lookup = try lookupKey(id)
        let blobName = UUID().uuidString.lowercased() + ".blob"
        let blob = folder.appendingPathComponent(blobName)
        let partial = folder.appendingPathComponent("." + blobName + ".partial")
        do {
            let output = try VaultOutputFile(creating: partial, budget: space.budget)
            do {
                try VaultKeys.with(space.provider, VaultKeys.attachmentBlob(userID, attachment: id)) { key in
                    try envelope.seal(from: read, to: output, key: key, base: blobAD(id), sourcePath: sourcePath)
                }
                try output.finish()
            } catch {
                output.abandon()
                throw error
            }
            let metadata = try JSONEncoder().encode(AttachmentMetadata(attachmentID: id, fileName: fileName, mimeType: mimeType))
            let sealed = try VaultKeys.with(space.provider, VaultKeys.attachmentIndex(userID)) { key in
                try SmallSeal.seal(metadata, key: key, ad: metadataAD(lookup))
            }
            try VaultDisk.rename(partial, to: blob)
            let now = clock.now
            let replaced = try lock.withLock {
                try index.upsert(AttachmentRow(lookup: lookup, sealedMetadata: sealed, blobName: blobName,
                                               storedBytes: envelope.sealedLength, storedAt: now, lastUsedAt: now))
            }
            if let replaced, replaced != blobName { VaultDisk.remove(folder.appendingPathComponent(replaced)) }
        } catch {
            VaultDisk.remove(partial)
            if VaultDisk.exists(blob), (try? lock.withLock({ try index.row(lookup: lookup) }))??.blobName != blobName {
                VaultDisk.remove(blob)
            }
            throw error
        }
        try evict(keeping: lookup)
    }

    // MARK: Reading

    /// Whether a live (not expired) copy of the attachment is cached.
    public func contains(_ id: String) throws -> Bool {
        (try? liveRow(id)) != nil
    }

    /// The decrypted index entry of an attachment.
    /// - Throws: ``FileVaultError/notCached(attachment:)``, ``FileVaultError/locked``.
    public func entry(_ id: String) throws -> Entry {
        let row = try liveRow(id)
        return try entry(of: row, id: id)
    }

    /// Decrypts the attachment into memory (for small attachments shown inline); nothing is
    /// written to disk. The whole attachment is authenticated before it is returned.
    /// - Throws: as ``lease(_:)``.
    public func get(_ id: String) throws -> Data {
        let row = try liveRow(id)
        var result = Data()
        result.reserveCapacity(Int(min(row.storedBytes, configuration.maxAttachmentBytes)))
        try openBlob(row: row, id: id) { result.append($0) }
        try? lock.withLock { try index.touch(lookup: row.lookup, at: clock.now) }
        return result
    }

    /// Decrypts the attachment into a new ``CleartextLease``; the cleartext exists until the
    /// lease ends (the preview closes, the lease is released, or the key locks).
    /// - Throws: ``FileVaultError/notCached(attachment:)``, ``FileVaultError/attachmentTampered(attachment:)``
    ///   (the entry is then dropped), ``FileVaultError/diskFull(path:)``, ``FileVaultError/locked``.
    public func lease(_ id: String) throws -> CleartextLease {
        let row = try liveRow(id)
        let meta = try entry(of: row, id: id)
        let lease = try space.previews.lease(fileName: meta.fileName) { url in
            try decrypt(row: row, id: id, to: url)
        }
        try? lock.withLock { try index.touch(lookup: row.lookup, at: clock.now) }
        return lease
    }

    // MARK: Expiry, eviction, purge

    /// Removes every expired entry; returns how many.
    @discardableResult
    public func purgeExpired() throws -> Int {
        let now = clock.now
        let rows = try lock.withLock { try index.all() }
        var removed = 0
        for row in rows where isExpired(row, now: now) {
            try remove(row)
            removed += 1
        }
        return removed
    }

    /// Removes every cached attachment and its index row (logout).
    public func purgeAll() throws {
        try lock.withLock {
            try index.deleteAll()
            if let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) {
                for name in names where name != "CACHEDIR.TAG" {
                    VaultDisk.remove(folder.appendingPathComponent(name))
                }
            }
        }
    }

    /// Removes one attachment.
    public func remove(_ id: String) throws {
        let lookup = try lookupKey(id)
        if let row = try lock.withLock({ try index.row(lookup: lookup) }) { try remove(row) }
    }

    /// The sealed bytes of every cached attachment.
    public var totalStoredBytes: Int64 {
        get throws { try lock.withLock { try index.totalBytes() } }
    }

    /// The number of cached attachments (expired ones included until purged).
    public var count: Int {
        get throws { try lock.withLock { try index.all().count } }
    }

    // MARK: Internals

    /// The index rows, still sealed (for tests and diagnostics).
    func indexRows() throws -> [AttachmentRow] { try lock.withLock { try index.all() } }

    private func liveRow(_ id: String) throws -> AttachmentRow {
        try Self.validate(id)
        let lookup = try lookupKey(id)
        guard let row = try lock.withLock({ try index.row(lookup: lookup) }) else {
            throw FileVaultError.notCached(attachment: id)
        }
        if isExpired(row, now: clock.now) {
            try remove(row)
            throw FileVaultError.notCached(attachment: id)
        }
        guard VaultDisk.exists(folder.appendingPathComponent(row.blobName)) else {
            try remove(row)
            throw FileVaultError.notCached(attachment: id)
        }
        return row
    }

    private func isExpired(_ row: AttachmentRow, now: Date) -> Bool {
        if row.storedAt.timeIntervalSince(now) > 300 { return true }  // the wall clock went back
        return now.timeIntervalSince(row.storedAt) >= configuration.timeToLive
    }

    private func entry(of row: AttachmentRow, id: String) throws -> Entry {
        let plain = try VaultKeys.with(space.provider, VaultKeys.attachmentIndex(userID)) { key in
            SmallSeal.open(row.sealedMetadata, key: key, ad: metadataAD(row.lookup))
        }
        guard let plain, let meta = try? JSONDecoder().decode(AttachmentMetadata.self, from: plain),
              meta.attachmentID == id else {
            try remove(row)
            throw FileVaultError.attachmentTampered(attachment: id)
        }
        return Entry(attachmentID: id, fileName: meta.fileName, mimeType: meta.mimeType,
                     storedBytes: row.storedBytes, storedAt: row.storedAt, lastUsedAt: row.lastUsedAt)
    }

    /// Authenticates and decrypts the blob chunk by chunk into `write`. A blob that fails
    /// authentication is dropped from the cache.
    private func openBlob(row: AttachmentRow, id: String, into write: (Data) throws -> Void) throws {
        let input: VaultInputFile
        do {
            input = try VaultInputFile(reading: folder.appendingPathComponent(row.blobName))
        } catch {
            try? remove(row)
            throw FileVaultError.notCached(attachment: id)
        }
        var authentic = false
        let header = try input.read(upTo: ChunkedEnvelope.headerSize)
        if let envelope = try ChunkedEnvelope(header: header) {
            authentic = try VaultKeys.with(space.provider, VaultKeys.attachmentBlob(userID, attachment: id)) { key in
                try envelope.open(from: input, key: key, base: blobAD(id), write: write)
            }
        }
        guard authentic else {
            try? remove(row)
            throw FileVaultError.attachmentTampered(attachment: id)
        }
    }

    /// Decrypts the blob into `url` through a temporary file in the same folder; the file
    /// appears under `url` only once every chunk authenticated.
    private func decrypt(row: AttachmentRow, id: String, to url: URL) throws {
        try VaultOutputFile.publish(to: url, partialName: "." + url.lastPathComponent + ".partial", budget: space.budget) { output in
            try openBlob(row: row, id: id) { try output.write($0) }
        }
    }

    private func remove(_ row: AttachmentRow) throws {
        try lock.withLock {
            try index.delete(lookup: row.lookup)
            VaultDisk.remove(folder.appendingPathComponent(row.blobName))
        }
    }

    private func evict(keeping lookup: String) throws {
        try lock.withLock {
            var total = try index.totalBytes()
            guard total > configuration.maxTotalBytes else { return }
            for row in try index.all() where row.lookup != lookup {  // oldest use first
                try remove(row)
                total -= row.storedBytes
                if total <= configuration.maxTotalBytes { break }
            }
        }
    }

    /// Removes blobs with no index row and interrupted writes (crash leftovers; ciphertext).
    private func removeStrayFiles() {
        guard let rows = try? index.all() else { return }
        let known = Set(rows.map(\.blobName))
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return }
        for name in names where name != "CACHEDIR.TAG" && !known.contains(name) {
            VaultDisk.remove(folder.appendingPathComponent(name))
        }
    }

    private func lookupKey(_ id: String) throws -> String {
        try VaultKeys.with(space.provider, VaultKeys.attachmentLookup(userID)) { key in
            HMAC<SHA256>.authenticationCode(for: Data(id.utf8), using: key)
                .map { String(format: "%02x", $0) }.joined()
        }
    }

    private func blobAD(_ id: String) -> AssociatedData {
        var ad = AssociatedData("rampart.filevault.attachment.chunk.v1")
        ad.append(userID.rawValue)
        ad.append(id)
        return ad
    }

    private func metadataAD(_ lookup: String) -> AssociatedData {
        var ad = AssociatedData("rampart.filevault.attachment.index.v1")
        ad.append("attachment")
        ad.append("sealedMetadata")
        ad.append(lookup)
        ad.append(userID.rawValue)
        return ad
    }

    private static func validate(_ id: String) throws {
        guard !id.isEmpty, id.utf8.count <= 1024 else { throw FileVaultError.invalidIdentifier(id) }
    }
}
