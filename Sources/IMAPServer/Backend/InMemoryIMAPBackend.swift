import Foundation

/// A complete, small mail store in memory: users with passwords, mailboxes with SPECIAL-USE
/// attributes, messages with UIDs, flags and internal dates, change notifications for IDLE.
///
/// It is a real ``IMAPBackend``, not a mock: the protocol tests, the real-client interop tests and
/// the fuzz target run the server against it, and it is the reference for what `rampart bridge`'s
/// backend over the sealed store must do. Nothing is persisted. Trust-model row **inbox (low)**:
/// it bounds what it stores (``InMemoryIMAPBackend/maxMessageSize``).
///
/// ```swift
/// let backend = InMemoryIMAPBackend()
/// await backend.addUser("alice", password: "secret")
/// _ = try await backend.deliver(Array("Subject: hi\r\n\r\nHello\r\n".utf8), to: "alice")
/// ```
public actor InMemoryIMAPBackend: IMAPBackend {
    struct StoredMessage { var summary: IMAPMessageSummary; var bytes: [UInt8] }
    struct Mailbox {
        var attributes: [String]
        var uidValidity: UInt32
        var uidNext: UInt32 = 1
        var highestModSeq: UInt64 = 1
        var messages: [StoredMessage] = []
    }
    struct User { var password: String; var mailboxes: [String: Mailbox] }

    private var users: [String: User] = [:]
    private var watchers: [String: [UUID: AsyncStream<Void>.Continuation]] = [:]
    private var nextValidity: UInt32 = 1
    /// Grows with every change to any mailbox (``IMAPMailboxSnapshot/revision``).
    private var revision: UInt64 = 1
    /// How many times a message's bytes were read (tests check which commands read none).
    public private(set) var messageReads = 0
    /// Largest message APPEND or ``deliver(_:to:mailbox:flags:internalDate:)`` stores (default 32 MiB).
    public let maxMessageSize: Int

    /// The mailboxes every new user gets, with their RFC 6154 attributes.
    public static let defaultMailboxes: [IMAPMailboxInfo] = [
        IMAPMailboxInfo(name: "INBOX"), IMAPMailboxInfo(name: "Sent", attributes: ["\\Sent"]),
        IMAPMailboxInfo(name: "Drafts", attributes: ["\\Drafts"]), IMAPMailboxInfo(name: "Trash", attributes: ["\\Trash"]),
        IMAPMailboxInfo(name: "Archive", attributes: ["\\Archive"]), IMAPMailboxInfo(name: "Spam", attributes: ["\\Junk"]),
        IMAPMailboxInfo(name: "All Mail", attributes: ["\\All"]),
    ]

    /// An empty store (no users).
    public init(maxMessageSize: Int = 32 << 20) { self.maxMessageSize = maxMessageSize }

    /// Adds (or replaces) a user with the ``defaultMailboxes``.
    public func addUser(_ username: String, password: String) {
        var boxes: [String: Mailbox] = [:]
        for info in Self.defaultMailboxes { boxes[info.name] = Mailbox(attributes: info.attributes, uidValidity: takeValidity()) }
        users[username] = User(password: password, mailboxes: boxes)
    }

    /// Stores a message as if it had arrived (for tests and demos); returns its UID.
    /// - Throws: ``IMAPBackendError``.
    @discardableResult
    public func deliver(_ message: [UInt8], to username: String, mailbox: String = "INBOX", flags: [String] = [],
                        internalDate: Date = Date()) throws -> UInt32 {
        try appendMessage(user: username, mailbox: mailbox, message: message, flags: flags, internalDate: internalDate).uid
    }

    /// The messages' flags in a mailbox, by UID (for tests).
    public func flags(of username: String, mailbox: String) -> [UInt32: [String]] {
        Dictionary(uniqueKeysWithValues: (users[username]?.mailboxes[mailbox]?.messages ?? []).map { ($0.summary.uid, $0.summary.flags) })
    }

    /// Checks the password (compared in constant time). - Throws: ``IMAPBackendError/authenticationFailed``.
    public func authenticate(username: String, password: String) async throws -> any IMAPAccount {
        guard let user = users[username], constantTimeEqual(user.password, password) else { throw IMAPBackendError.authenticationFailed }
        return Account(backend: self, username: username)
    }

    private func constantTimeEqual(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var diff = x.count ^ y.count
        for i in 0..<max(x.count, y.count) { diff |= Int((i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0)) }
        return diff == 0
    }

    private func takeValidity() -> UInt32 { defer { nextValidity += 1 }; return nextValidity }

    private func box(_ user: String, _ name: String) throws -> Mailbox {
        guard let b = users[user]?.mailboxes[name] else { throw IMAPBackendError.noSuchMailbox(name) }
        return b
    }

    private func update(_ user: String, _ name: String, _ change: (inout Mailbox) throws -> Void) throws {
        guard var b = users[user]?.mailboxes[name] else { throw IMAPBackendError.noSuchMailbox(name) }
        try change(&b)
        users[user]!.mailboxes[name] = b
        revision += 1
        for c in (watchers[user + "\u{0}" + name] ?? [:]).values { c.yield() }
    }

    private func appendMessage(user: String, mailbox: String, message: [UInt8], flags: [String], internalDate: Date) throws -> (uidValidity: UInt32, uid: UInt32) {
        guard message.count <= maxMessageSize else { throw IMAPBackendError.messageTooLarge(limit: maxMessageSize) }
        var result: (UInt32, UInt32) = (0, 0)
        try update(user, mailbox) { b in
            let uid = b.uidNext
            b.uidNext += 1
            var clean: [String] = []
            for f in flags.map(IMAPFlags.canonical) where !IMAPFlags.contains(clean, f) && f != "\\Recent" { clean.append(f) }
            b.highestModSeq += 1
            b.messages.append(StoredMessage(summary: IMAPMessageSummary(uid: uid, flags: clean, internalDate: internalDate, size: message.count,
                                                                        modSeq: b.highestModSeq), bytes: message))
            result = (b.uidValidity, uid)
        }
        return result
    }

    // MARK: IMAPAccount operations, per user

    func mailboxes(_ user: String) throws -> [IMAPMailboxInfo] {
        guard let u = users[user] else { throw IMAPBackendError.authenticationFailed }
        let names = u.mailboxes.keys.sorted { a, b in a == "INBOX" ? b != "INBOX" : (b == "INBOX" ? false : a < b) }
        return names.map { name in
            let hasChildren = names.contains { $0.hasPrefix(name + IMAPMailboxInfo.delimiter) }
            return IMAPMailboxInfo(name: name, attributes: [hasChildren ? "\\HasChildren" : "\\HasNoChildren"] + u.mailboxes[name]!.attributes)
        }
    }

    func snapshot(_ user: String, _ name: String) throws -> IMAPMailboxSnapshot {
        let b = try box(user, name)
        return IMAPMailboxSnapshot(uidValidity: b.uidValidity, uidNext: b.uidNext, messages: b.messages.map(\.summary),
                                   highestModSeq: b.highestModSeq, revision: revision)
    }

    func bytes(_ user: String, _ name: String, _ uid: UInt32) throws -> [UInt8] {
        guard let m = try box(user, name).messages.first(where: { $0.summary.uid == uid }) else {
            throw IMAPBackendError.failed("Message UID \(uid) is no longer in \(name)")
        }
        messageReads += 1
        return m.bytes
    }

    func store(_ user: String, _ name: String, _ uids: [UInt32], _ op: IMAPFlagOperation, _ flags: [String]) throws -> [UInt32: [String]] {
        let wanted = Set(uids)
        var changed: [UInt32: [String]] = [:]
        let flags = flags.map(IMAPFlags.canonical).filter { $0 != "\\Recent" }
        try update(user, name) { b in
            for i in b.messages.indices where wanted.contains(b.messages[i].summary.uid) {
                var f = b.messages[i].summary.flags
                switch op {
                case .replace: f = []; for x in flags where !IMAPFlags.contains(f, x) { f.append(x) }
                case .add: for x in flags where !IMAPFlags.contains(f, x) { f.append(x) }
                case .remove: f.removeAll { x in flags.contains { $0.caseInsensitiveCompare(x) == .orderedSame } }
                }
                if f != b.messages[i].summary.flags {
                    b.highestModSeq += 1
                    b.messages[i].summary.flags = f
                    b.messages[i].summary.modSeq = b.highestModSeq
                }
                changed[b.messages[i].summary.uid] = f
            }
        }
        return changed
    }

    func copy(_ user: String, _ uids: [UInt32], _ from: String, _ to: String, move: Bool) throws -> IMAPCopyResult {
        let source = try box(user, from)
        _ = try box(user, to)
        let wanted = Set(uids)
        var pairs: [(UInt32, UInt32)] = []
        var validity: UInt32 = 0
        for m in source.messages where wanted.contains(m.summary.uid) {
            let r = try appendMessage(user: user, mailbox: to, message: m.bytes, flags: m.summary.flags, internalDate: m.summary.internalDate)
            pairs.append((m.summary.uid, r.uid)); validity = r.uidValidity
        }
        if validity == 0 { validity = try box(user, to).uidValidity }
        if move { try update(user, from) { b in b.messages.removeAll { wanted.contains($0.summary.uid) }; b.highestModSeq += 1 } }
        return IMAPCopyResult(uidValidity: validity, uids: pairs.map { (source: $0.0, destination: $0.1) })
    }

    func expunge(_ user: String, _ name: String, _ uids: [UInt32]?) throws -> [UInt32] {
        var removed: [UInt32] = []
        let limit = uids.map(Set.init)
        try update(user, name) { b in
            b.messages.removeAll { m in
                let hit = IMAPFlags.contains(m.summary.flags, IMAPFlags.deleted) && (limit?.contains(m.summary.uid) ?? true)
                if hit { removed.append(m.summary.uid) }
                return hit
            }
            if !removed.isEmpty { b.highestModSeq += 1 }
        }
        return removed
    }

    func append(_ user: String, _ name: String, _ message: [UInt8], _ flags: [String], _ date: Date?) throws -> (uidValidity: UInt32, uid: UInt32) {
        try appendMessage(user: user, mailbox: name, message: message, flags: flags, internalDate: date ?? Date())
    }

    func create(_ user: String, _ name: String) throws {
        guard users[user] != nil else { throw IMAPBackendError.authenticationFailed }
        guard !name.isEmpty, name.utf8.count <= 1000 else { throw IMAPBackendError.notPermitted("Mailbox names are 1 to 1000 bytes") }
        guard users[user]!.mailboxes[name] == nil, name.uppercased() != "INBOX" else { throw IMAPBackendError.mailboxExists(name) }
        users[user]!.mailboxes[name] = Mailbox(attributes: [], uidValidity: takeValidity())
        revision += 1
    }

    func delete(_ user: String, _ name: String) throws {
        guard name != "INBOX" else { throw IMAPBackendError.notPermitted("INBOX cannot be deleted") }
        _ = try box(user, name)
        users[user]!.mailboxes[name] = nil
        revision += 1
    }

    func rename(_ user: String, _ name: String, _ newName: String) throws {
        let b = try box(user, name)
        guard users[user]!.mailboxes[newName] == nil, newName != "INBOX" else { throw IMAPBackendError.mailboxExists(newName) }
        var moved = b
        moved.uidValidity = takeValidity()
        users[user]!.mailboxes[newName] = moved
        revision += 1
        if name == "INBOX" {
            try update(user, name) { $0.messages = [] }
        } else {
            users[user]!.mailboxes[name] = nil
        }
    }

    func watch(_ user: String, _ name: String, _ continuation: AsyncStream<Void>.Continuation) -> UUID {
        let id = UUID()
        watchers[user + "\u{0}" + name, default: [:]][id] = continuation
        return id
    }

    func unwatch(_ user: String, _ name: String, _ id: UUID) {
        watchers[user + "\u{0}" + name]?[id] = nil
    }

    /// One user's view, handed out by ``authenticate(username:password:)``.
    struct Account: IMAPAccount {
        let backend: InMemoryIMAPBackend
        let username: String

        func mailboxes() async throws -> [IMAPMailboxInfo] { try await backend.mailboxes(username) }
        func snapshot(of mailbox: String) async throws -> IMAPMailboxSnapshot { try await backend.snapshot(username, mailbox) }
        func messageBytes(in mailbox: String, uid: UInt32) async throws -> [UInt8] { try await backend.bytes(username, mailbox, uid) }
        func storeFlags(in mailbox: String, uids: [UInt32], operation: IMAPFlagOperation, flags: [String]) async throws -> [UInt32: [String]] {
            try await backend.store(username, mailbox, uids, operation, flags)
        }
        func copy(uids: [UInt32], from source: String, to destination: String) async throws -> IMAPCopyResult {
            try await backend.copy(username, uids, source, destination, move: false)
        }
        func move(uids: [UInt32], from source: String, to destination: String) async throws -> IMAPCopyResult {
            try await backend.copy(username, uids, source, destination, move: true)
        }
        func expunge(in mailbox: String, uids: [UInt32]?) async throws -> [UInt32] { try await backend.expunge(username, mailbox, uids) }
        func append(to mailbox: String, message: [UInt8], flags: [String], internalDate: Date?) async throws -> (uidValidity: UInt32, uid: UInt32) {
            try await backend.append(username, mailbox, message, flags, internalDate)
        }
        func create(mailbox: String) async throws { try await backend.create(username, mailbox) }
        func delete(mailbox: String) async throws { try await backend.delete(username, mailbox) }
        func rename(mailbox: String, to newName: String) async throws { try await backend.rename(username, mailbox, newName) }
        func changes(in mailbox: String) async -> AsyncStream<Void> {
            let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            let backend = self.backend, user = username
            // Registered before returning, so no change between the caller's snapshot and its
            // first wait is lost.
            let id = await backend.watch(user, mailbox, continuation)
            continuation.onTermination = { _ in Task { await backend.unwatch(user, mailbox, id) } }
            return stream
        }
    }
}
