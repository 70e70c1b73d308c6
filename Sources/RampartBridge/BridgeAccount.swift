import Foundation
import IMAPServer
import MIME
import OpenPGP
import RampartAPI
import RampartClient
import RampartCore
import SealedStore

/// The account as the bridge serves it: mailboxes over the sealed store's labels, stable UIDs,
/// message bytes, flags, and the changes mail programs make, sent to the server.
///
/// Trust-model rows **database (critical)** and **device memory (moderate)**: everything the
/// bridge keeps (UID maps, flags only this device has, each message's bytes) is a sealed
/// `DeviceItemStore` item under the MainKey; while the account is locked (autolock,
/// `rampart lock`) no method reads the store — logins get `NO [UNAVAILABLE]`, open sessions
/// `BYE` — and the cached private key and snapshots are dropped.
public actor BridgeAccount {
    /// Device-item kinds the bridge keeps.
    enum Kind {
        static let uids = "bridge.uids"
        static let flags = "bridge.flags"
        static let body = "bridge.body"
        static let meta = "bridge.meta"
    }

    /// The version of the bridge's renderings its copies are known to match (``Kind/meta``,
    /// id `rendering`): 2 = renderings carry their attachments.
    static let renderingVersion = Data("2".utf8)

    /// One mailbox's UIDs: stable across restarts and re-syncs (kept sealed, keyed by label id).
    struct UIDMap: Codable {
        var validity: UInt32
        var next: UInt32
        var uids: [String: UInt32]
        var modSeq: UInt64
        var mods: [String: UInt64]
        var flags: [String: [String]]
    }

    struct Cached {
        var generation: Int
        var snapshot: IMAPMailboxSnapshot
        var ids: [UInt32: String]
    }

    let account: ClientAccount
    let api: APIClient
    let session: SessionRecord
    let isUnlocked: @Sendable () -> Bool
    let log: @Sendable (String) -> Void
    /// Messages fetched at once while the bridge copies new mail.
    let fetchBatch = 8

    private(set) var locked = false
    private var generation = 0
    private var maps: [String: UIDMap] = [:]
    private var localFlags: [String: [String]]?
    private var snapshots: [String: Cached] = [:]
    private var bodySizes: (generation: Int, sizes: [String: Int64])?
    private var labelCache: (generation: Int, boxes: [BridgeMailbox], starred: String?)?
    private var watchers: [UUID: AsyncStream<Void>.Continuation] = [:]
    private var keys: PGPPrivateKey?
    /// The account's attachment vault, opened once: one connection to its index (a vault per
    /// message, opened by messages fetched at once, made their writes wait on each other).
    private var attachmentVault: AttachmentVault?
    /// Message-IDs of mail sent through SMTP lately → the account's copy in Sent (one Sent copy).
    private var recentlySent: [String: (id: String?, at: Date)] = [:]

    /// The account's addresses (the IMAP/SMTP username is one of them).
    public nonisolated var addresses: [String] { session.addresses.isEmpty ? [session.username] : session.addresses }

    /// A bridge over `account`'s store, talking to the server with `api`.
    /// - Parameters:
    ///   - account: the client account (sealed store, private key, session).
    ///   - api: the API client of the stored session.
    ///   - session: the session record (addresses, server user id).
    ///   - isUnlocked: whether the MainKey is available now (the agent's answer).
    ///   - log: where the bridge's log lines go.
    public init(account: ClientAccount, api: APIClient, session: SessionRecord,
                isUnlocked: @escaping @Sendable () -> Bool, log: @escaping @Sendable (String) -> Void) {
        self.account = account; self.api = api; self.session = session; self.isUnlocked = isUnlocked; self.log = log
    }

    static let lockedText = "The Rampart account is locked: unlock it (rampart unlock), then log in again"

    /// Throws ``IMAPBackendError/unavailable(_:)`` while the account is locked.
    func ensureUnlocked() throws {
        if locked || !isUnlocked() { throw IMAPBackendError.unavailable(Self.lockedText) }
    }

    // MARK: Sync with the server

    /// One round: notices a lock (drops what it holds, wakes every IDLE session so it says BYE),
    /// or applies the server's new events, copies new messages' bytes and tells the sessions.
    /// - Returns: whether anything changed.
    @discardableResult
    public func tick() async -> Bool {
        guard isUnlocked() else {
            if !locked {
                locked = true
                keys = nil; maps = [:]; localFlags = nil; snapshots = [:]; bodySizes = nil; labelCache = nil; attachmentVault = nil
                log("account locked: mail programs are refused until it is unlocked")
                bump()
            }
            return false
        }
        if locked { locked = false; log("account unlocked: serving mail programs again") }
        do {
            let summary = try await MailSync(account: account).run(api: api)
            let copied = try await copyNewMessages()
            let changed = summary.messagesStored + summary.messagesDeleted + summary.labels + copied > 0
            if changed { bump() }
            return changed
        } catch {
            if !isUnlocked() { return false }
            log("sync failed: \(error)")
            return false
        }
    }

    private func bump() { generation += 1; notify() }

    private func notify() { for c in watchers.values { c.yield() } }

    private func privateKey() throws -> PGPPrivateKey {
        if let keys { return keys }
        let key = try account.mailboxKey()
        keys = key
        return key
    }

    /// Copies the bytes of every stored message the bridge has not copied yet (sealed, as device
    /// items), and drops copies of messages gone from the store. A message shows in IMAP once
    /// copied, so its RFC822.SIZE is exact from the start.
    func copyNewMessages() async throws -> Int {
        let store = try account.store()
        let all = try store.mail.summaries()
        var sizes = try store.deviceItems.sizes(kind: Kind.body)
        if try store.deviceItems.value(kind: Kind.meta, id: "rendering") != Self.renderingVersion {
            for id in try renderAgainWithAttachments(Array(sizes.keys)) { sizes[id] = nil }
            try store.deviceItems.save(kind: Kind.meta, id: "rendering", value: Self.renderingVersion)
        }
        let ids = Set(all.map(\.id))
        let stale = sizes.keys.filter { !ids.contains($0) }
        if !stale.isEmpty { try store.deviceItems.delete(kind: Kind.body, ids: Array(stale)) }
        let missing = all.filter { sizes[$0.id] == nil }.map(\.id)
        var copied = 0
        var start = 0
        while start < missing.count {
            try ensureUnlocked()
            let chunk = Array(missing[start..<min(missing.count, start + fetchBatch)])
            start += chunk.count
            let fetched = try await withThrowingTaskGroup(of: (String, [UInt8]?).self) { group in
                for id in chunk { group.addTask { (id, try await self.bytes(of: id)) } }
                var result: [(String, [UInt8]?)] = []
                for try await item in group { result.append(item) }
                return result
            }
            let items = fetched.compactMap { id, bytes in bytes.map { (kind: Kind.body, id: id, size: Int64($0.count), value: Data($0)) } }
            try store.deviceItems.save(items)
            copied += items.count
            if missing.count > fetchBatch { bump() }
        }
        if !stale.isEmpty { copied += stale.count }
        return copied
    }

    /// Copies made before renderings carried attachments (mail written in Rampart, copied by an
    /// older bridge): each is dropped with its UID in every mailbox, so the copy made again with
    /// its attachments shows as a new message (IMAP never changes a message's bytes under one UID:
    /// a mail program that kept the old copy gets EXPUNGE for it and fetches the new one). Runs
    /// once per store (a sealed marker then says the copies match); returns the ids dropped.
    func renderAgainWithAttachments(_ copied: [String]) throws -> [String] {
        let store = try account.store()
        var stale: [String] = []
        for id in copied {
            let records = try store.mail.attachments(messageID: id)
            guard !records.isEmpty, let copy = try store.deviceItems.value(kind: Kind.body, id: id),
                  BridgeRendering.isRenderingWithoutAttachments([UInt8](copy), id: id, attachments: records.count) else { continue }
            stale.append(id)
        }
        guard !stale.isEmpty else { return [] }
        for box in try mailboxes() where box.labelID != "" {
            var map = try uidMap(box)
            guard stale.contains(where: { map.uids[$0] != nil }) else { continue }
            for id in stale { map.uids[id] = nil; map.mods[id] = nil; map.flags[id] = nil }
            map.modSeq += 1
            try saveMap(map, for: box)
        }
        try store.deviceItems.delete(kind: Kind.body, ids: stale)
        bump()
        log("\(stale.count) copies of mail written in Rampart made before they carried attachments: copied again with them")
        return stale
    }

    /// A message's RFC 5322 bytes: the original of imported or delivered mail, else a MIME
    /// rendering of what Rampart stored (mail written in Rampart). Nil when it is gone.
    func bytes(of id: String) async throws -> [UInt8]? {
        // Every key that opens the account's mail (the user key and each address key).
        let keys = try account.mailboxKeys()
        do {
            return [UInt8](try await MailExporter(api: api, keys: keys, serverUserID: session.serverUserID).messageBytes(of: id))
        } catch ClientError.notFound {
            guard let message = try? account.store().mail.message(id: id) else { return nil }
            return try BridgeRendering.mime(of: message, attachments: try await renderedAttachments(of: id))
        }
    }

    /// The attachments of message `id` written in Rampart, opened through the account's
    /// attachment path (`AttachmentVault`: its encrypted cache, else the server's sealed part,
    /// opened with the mailbox keys and checked against the body's signer). A failure throws, so
    /// no copy without its attachments is stored; the next sync tries again.
    func renderedAttachments(of id: String) async throws -> [MessageBuilder.Attachment] {
        let records = try account.store().mail.attachments(messageID: id)
        guard !records.isEmpty else { return [] }
        let vault = try attachmentVault ?? AttachmentVault(account: account)
        attachmentVault = vault
        var parts: [MessageBuilder.Attachment] = []
        for record in records {
            var data = try await vault.contents(of: record, api: api)
            defer { data.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
            parts.append(BridgeRendering.attachment(record, contentID: AttachmentVault.contentID(of: record), data: [UInt8](data)))
        }
        return parts
    }

    // MARK: Mailboxes

    func mailboxes() throws -> [BridgeMailbox] {
        try ensureUnlocked()
        if let cached = labelCache, cached.generation == generation { return cached.boxes }
        let labels = try account.store().mail.labels().map { (id: $0.id, name: $0.name) }
        let boxes = BridgeMailboxes.list(labels: labels)
        labelCache = (generation, boxes, labels.first { $0.name == BridgeMailboxes.starredLabelName }?.id)
        return boxes
    }

    func mailbox(_ name: String) throws -> BridgeMailbox {
        let wanted = name.uppercased() == "INBOX" ? "INBOX" : name
        guard let box = try mailboxes().first(where: { $0.name == wanted }), box.labelID != "" else {
            throw IMAPBackendError.noSuchMailbox(name)
        }
        return box
    }

    private func starredLabel() throws -> String? { _ = try mailboxes(); return labelCache?.starred }

    /// Makes sure the labels behind Drafts and Spam exist (created on the server when missing).
    public func ensureLabels() async throws {
        let names = Set(try account.store().mail.labels().map(\.name))
        var created = false
        for name in [BridgeMailboxes.draftsLabelName, BridgeMailboxes.spamLabelName, BridgeMailboxes.starredLabelName] where !names.contains(name) {
            _ = try await api.label(named: name)
            created = true
        }
        if created { await tick() }
    }

    // MARK: Snapshots and UIDs

    private func uidMap(_ box: BridgeMailbox) throws -> UIDMap {
        if let map = maps[box.stateKey] { return map }
        if let data = try account.store().deviceItems.value(kind: Kind.uids, id: box.stateKey) {
            do {
                let map = try JSONDecoder().decode(UIDMap.self, from: data)
                maps[box.stateKey] = map
                return map
            } catch {
                log("the UID map of \(box.name) does not decode; starting a new UIDVALIDITY")
            }
        }
        let map = UIDMap(validity: UInt32.random(in: 1...UInt32.max), next: 1, uids: [:], modSeq: 1, mods: [:], flags: [:])
        maps[box.stateKey] = map
        return map
    }

    private func saveMap(_ map: UIDMap, for box: BridgeMailbox) throws {
        maps[box.stateKey] = map
        try account.store().deviceItems.save(kind: Kind.uids, id: box.stateKey, value: try JSONEncoder().encode(map))
    }

    private func flagsOnThisDevice() throws -> [String: [String]] {
        if let localFlags { return localFlags }
        let loaded = try account.store().deviceItems.value(kind: Kind.flags, id: "all")
            .flatMap { try? JSONDecoder().decode([String: [String]].self, from: $0) } ?? [:]
        localFlags = loaded
        return loaded
    }

    private func sizes() throws -> [String: Int64] {
        if let cached = bodySizes, cached.generation == generation { return cached.sizes }
        let sizes = try account.store().deviceItems.sizes(kind: Kind.body)
        bodySizes = (generation, sizes)
        return sizes
    }

    /// The flags a message shows: `\Seen` and `\Flagged` from the account (other devices see
    /// them), `\Answered`, `\Draft`, `\Deleted` and keywords from this device.
    private func flags(of summary: StoredMessageSummary, in box: BridgeMailbox, starred: String?, local: [String: [String]]) -> [String] {
        var flags: [String] = []
        if !summary.flags.contains(.unread) { flags.append(IMAPFlags.seen) }
        if let starred, summary.labelIDs.contains(starred) { flags.append("\\Flagged") }
        if summary.flags.contains(.replied) { flags.append("\\Answered") }
        if box.name == "Drafts" { flags.append("\\Draft") }
        for flag in local[summary.id] ?? [] where !IMAPFlags.contains(flags, flag) { flags.append(flag) }
        return flags
    }

    func snapshot(_ box: BridgeMailbox) throws -> Cached {
        try ensureUnlocked()
        if let cached = snapshots[box.stateKey], cached.generation == generation { return cached }
        let store = try account.store()
        let sizes = try sizes()
        let summaries = try (box.labelID.map { try store.mail.summaries(label: $0) } ?? store.mail.summaries()).filter { sizes[$0.id] != nil }
        let starred = try starredLabel()
        let local = try flagsOnThisDevice()
        var map = try uidMap(box)
        var changed = false
        let present = Set(summaries.map(\.id))
        for id in map.uids.keys where !present.contains(id) {
            map.uids[id] = nil; map.mods[id] = nil; map.flags[id] = nil
            map.modSeq += 1; changed = true
        }
        var messages: [IMAPMessageSummary] = []
        var ids: [UInt32: String] = [:]
        messages.reserveCapacity(summaries.count)
        for summary in summaries {
            let uid: UInt32
            if let known = map.uids[summary.id] { uid = known } else {
                uid = map.next; map.next += 1; map.uids[summary.id] = uid; changed = true
            }
            let flags = flags(of: summary, in: box, starred: starred, local: local)
            if map.flags[summary.id] != flags {
                map.modSeq += 1; map.mods[summary.id] = map.modSeq; map.flags[summary.id] = flags; changed = true
            }
            ids[uid] = summary.id
            messages.append(IMAPMessageSummary(uid: uid, flags: flags, internalDate: Date(timeIntervalSince1970: TimeInterval(summary.time)),
                                               size: Int(sizes[summary.id] ?? 0), modSeq: map.mods[summary.id] ?? 1))
        }
        messages.sort { $0.uid < $1.uid }
        if changed { try saveMap(map, for: box) }
        let cached = Cached(generation: generation,
                            snapshot: IMAPMailboxSnapshot(uidValidity: map.validity, uidNext: map.next, messages: messages, highestModSeq: map.modSeq,
                                                          revision: UInt64(generation)),
                            ids: ids)
        snapshots[box.stateKey] = cached
        return cached
    }

    func messageBytes(_ box: BridgeMailbox, uid: UInt32) throws -> [UInt8] {
        let cached = try snapshot(box)
        guard let id = cached.ids[uid], let data = try account.store().deviceItems.value(kind: Kind.body, id: id) else {
            throw IMAPBackendError.failed("Message UID \(uid) is no longer in \(box.name)")
        }
        return [UInt8](data)
    }

    func ids(_ box: BridgeMailbox, uids: [UInt32]) throws -> [String] {
        let cached = try snapshot(box)
        return uids.compactMap { cached.ids[$0] }
    }

    // MARK: Changes from mail programs

    func storeFlags(_ box: BridgeMailbox, uids: [UInt32], operation: IMAPFlagOperation, flags wanted: [String]) async throws -> [UInt32: [String]] {
        let cached = try snapshot(box)
        let byUID = Dictionary(cached.snapshot.messages.map { ($0.uid, $0) }, uniquingKeysWith: { a, _ in a })
        let wanted = wanted.map(IMAPFlags.canonical).filter { $0 != "\\Recent" }
        var local = try flagsOnThisDevice()
        let starred = try starredLabel()
        let store = try account.store()
        var result: [UInt32: [String]] = [:]
        for uid in uids {
            guard let current = byUID[uid], let id = cached.ids[uid] else { continue }
            var next = current.flags
            switch operation {
            case .replace: next = []; for f in wanted where !IMAPFlags.contains(next, f) { next.append(f) }
            case .add: for f in wanted where !IMAPFlags.contains(next, f) { next.append(f) }
            case .remove: next.removeAll { f in IMAPFlags.contains(wanted, f) }
            }
            let seenBefore = IMAPFlags.contains(current.flags, IMAPFlags.seen), seenAfter = IMAPFlags.contains(next, IMAPFlags.seen)
            if seenBefore != seenAfter {
                try await api.markRead(id, unread: !seenAfter)
                var message = try store.mail.message(id: id)
                if seenAfter { message.flags.remove(.unread) } else { message.flags.insert(.unread) }
                try store.mail.setFlags(message.flags, messageID: id)
            }
            let flaggedBefore = IMAPFlags.contains(current.flags, "\\Flagged"), flaggedAfter = IMAPFlags.contains(next, "\\Flagged")
            if flaggedBefore != flaggedAfter, let starred {
                try await relabel(id, add: flaggedAfter ? [starred] : [], remove: flaggedAfter ? [] : [starred])
            }
            let kept = next.filter { $0 != IMAPFlags.seen && $0 != "\\Flagged" }
            local[id] = kept.isEmpty ? nil : kept
            result[uid] = next
        }
        try saveLocalFlags(local)
        bump()
        let after = try snapshot(box)
        for uid in Array(result.keys) { result[uid] = after.snapshot.messages.first { $0.uid == uid }?.flags ?? result[uid] }
        return result
    }

    private func saveLocalFlags(_ flags: [String: [String]]) throws {
        localFlags = flags
        try account.store().deviceItems.save(kind: Kind.flags, id: "all", value: try JSONEncoder().encode(flags))
    }

    /// Changes one message's labels on the server and in the sealed store.
    private func relabel(_ id: String, add: [String], remove: [String]) async throws {
        try await api.changeLabels(of: id, add: add, remove: remove)
        let store = try account.store()
        var message = try store.mail.message(id: id)
        message.labelIDs = message.labelIDs.filter { !remove.contains($0) }
        for label in add where !message.labelIDs.contains(label) { message.labelIDs.append(label) }
        try store.mail.insert(message: message)
    }

    /// COPY adds the destination's label; MOVE to a folder also takes the message out of every
    /// other folder, MOVE to a label out of the source label. All Mail as a destination changes nothing.
    func copy(_ source: BridgeMailbox, uids: [UInt32], to destination: BridgeMailbox, move: Bool) async throws -> IMAPCopyResult {
        let cached = try snapshot(source)
        let pairs = uids.compactMap { uid in cached.ids[uid].map { (uid, $0) } }
        let ids = pairs.map(\.1)
        let folders = Set(try mailboxes().filter(\.isFolder).compactMap(\.labelID))
        for id in ids {
            var add: [String] = [], remove: [String] = []
            if let label = destination.labelID { add.append(label) }
            if move {
                if destination.isFolder {
                    let labels = try account.store().mail.message(id: id).labelIDs
                    remove = labels.filter { folders.contains($0) && $0 != destination.labelID }
                } else if let label = source.labelID, !source.isFolder, label != destination.labelID {
                    remove = [label]
                }
            }
            if !add.isEmpty || !remove.isEmpty { try await relabel(id, add: add, remove: remove) }
        }
        bump()
        let after = try snapshot(destination)
        let uidOf = Dictionary(after.ids.map { ($0.value, $0.key) }, uniquingKeysWith: { a, _ in a })
        return IMAPCopyResult(uidValidity: after.snapshot.uidValidity,
                              uids: pairs.compactMap { pair in uidOf[pair.1].map { (source: pair.0, destination: $0) } })
    }

    /// EXPUNGE: in Trash or Spam the messages are deleted for good; in a label the label is
    /// removed; in another folder the folder's label is removed and the message goes to Trash when
    /// it is in no other folder; in All Mail it moves to Trash.
    func expunge(_ box: BridgeMailbox, uids limit: [UInt32]?) async throws -> [UInt32] {
        let cached = try snapshot(box)
        let wanted = limit.map(Set.init)
        let targets = cached.snapshot.messages.filter {
            IMAPFlags.contains($0.flags, IMAPFlags.deleted) && (wanted?.contains($0.uid) ?? true)
        }
        guard !targets.isEmpty else { return [] }
        let store = try account.store()
        var local = try flagsOnThisDevice()
        let folders = Set(try mailboxes().filter(\.isFolder).compactMap(\.labelID))
        let spam = try mailboxes().first { $0.name == "Spam" }?.labelID
        for message in targets {
            guard let id = cached.ids[message.uid] else { continue }
            if box.labelID == SystemLabel.trash || (spam != nil && box.labelID == spam) {
                do { try await api.deleteMessage(id) } catch ClientError.http(404, _) {}
                try store.mail.deleteMessage(id: id)
                try store.deviceItems.delete(kind: Kind.body, ids: [id])
                local[id] = nil
                log("deleted message \(id) for good (expunged in \(box.name))")
            } else if let label = box.labelID, !box.isFolder {
                try await relabel(id, add: [], remove: [label])
                local[id]?.removeAll { $0 == IMAPFlags.deleted }
            } else if let label = box.labelID {
                // Out of this folder; to Trash only when it is in no other folder (a mail program's
                // COPY to a folder, then EXPUNGE here, is a move).
                let others = try store.mail.message(id: id).labelIDs.filter { folders.contains($0) && $0 != label }
                try await relabel(id, add: others.isEmpty ? [SystemLabel.trash] : [], remove: [label])
                local[id]?.removeAll { $0 == IMAPFlags.deleted }
            } else {
                let labels = try store.mail.message(id: id).labelIDs
                try await relabel(id, add: [SystemLabel.trash], remove: labels.filter { folders.contains($0) && $0 != SystemLabel.trash })
                local[id]?.removeAll { $0 == IMAPFlags.deleted }
            }
        }
        try saveLocalFlags(local)
        bump()
        return targets.map(\.uid)
    }

    /// APPEND: the message is imported into the destination (sealed to the user's own key, the
    /// same identity as a file import, so the same bytes twice are one message). A copy of mail
    /// just sent through the bridge's SMTP, appended to Sent by the mail program, is not stored
    /// twice: the APPEND answers with the Sent copy the server already keeps.
    func append(_ box: BridgeMailbox, message: [UInt8], flags: [String], internalDate: Date?) async throws -> (uidValidity: UInt32, uid: UInt32) {
        try ensureUnlocked()
        guard message.count <= MailImporter.maximumMessageSize else { throw IMAPBackendError.messageTooLarge(limit: MailImporter.maximumMessageSize) }
        let flags = flags.map(IMAPFlags.canonical)
        var id: String?
        if box.labelID == SystemLabel.sent, let messageID = MIMEMessage(bytes: message).messageID,
           let sent = recentlySent[messageID], Date().timeIntervalSince(sent.at) < 600 {
            id = sent.id
            log("APPEND to Sent of a message just sent: kept the one Sent copy")
        }
        if id == nil {
            let labels = [box.labelID ?? SystemLabel.archive]
            let importer = MailImporter(api: api, keys: try privateKey(), serverUserID: session.serverUserID)
            do {
                id = try await importer.importMessage(message, labelIDs: labels, unread: !IMAPFlags.contains(flags, IMAPFlags.seen)).id
            } catch ClientError.badInput(let reason) {
                throw IMAPBackendError.failed("The message was refused: \(reason)")
            }
        }
        await tick()
        let kept = flags.filter { $0 != IMAPFlags.seen && $0 != "\\Flagged" && $0 != "\\Recent" }
        if let id, !kept.isEmpty {
            var local = try flagsOnThisDevice()
            local[id] = kept
            try saveLocalFlags(local)
            bump()
        }
        let after = try snapshot(box)
        guard let id, let uid = after.ids.first(where: { $0.value == id })?.key else {
            throw IMAPBackendError.failed("The message was stored but is not in \(box.name) yet; look again in a moment")
        }
        return (after.snapshot.uidValidity, uid)
    }

    func create(_ name: String) async throws {
        try ensureUnlocked()
        if try mailboxes().contains(where: { $0.name == name }) { throw IMAPBackendError.mailboxExists(name) }
        guard let label = BridgeMailboxes.labelName(forNewMailbox: name) else {
            throw IMAPBackendError.notPermitted("New mailboxes go under Folders/ (a folder) or Labels/ (a label), e.g. Folders/\(name)")
        }
        _ = try await api.label(named: label)
        await tick()
    }

    /// Sends through the account's send path (``BridgeSubmission``).
    func send(_ mail: OutgoingMail) async throws -> SendFlow.Result {
        guard !locked, isUnlocked() else { throw ClientError.badInput(Self.lockedText) }
        let sender = Correspondent(name: session.displayName, address: addresses.first ?? session.username)
        return try await SendFlow.send(mail, from: sender, signer: try privateKey(), api: api, contacts: ContactKeys(account: account))
    }

    /// Remembers a message sent through SMTP (its Message-ID → the account's Sent copy).
    func rememberSent(messageID: String?, copy: String?) {
        guard let messageID else { return }
        recentlySent = recentlySent.filter { Date().timeIntervalSince($0.value.at) < 600 }
        recentlySent[messageID] = (copy, Date())
    }

    // MARK: IDLE

    func watch() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        watchers[id] = continuation
        continuation.onTermination = { _ in Task { await self.unwatch(id) } }
        return stream
    }

    private func unwatch(_ id: UUID) { watchers[id] = nil }
}
