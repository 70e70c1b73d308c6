import Foundation
import MIME

/// One client's IMAP session: the RFC 3501 state machine (not authenticated → authenticated →
/// selected → logout) over an ``IMAPBackend``.
///
/// It reads ``IMAPFrame``s, answers each command, keeps the selected mailbox's message sequence
/// numbers in step with the backend (EXISTS, EXPUNGE and FLAGS updates where RFC 3501 §7.4.1
/// allows them), and computes SEARCH, ENVELOPE, BODYSTRUCTURE and sections itself from the
/// messages' bytes. Trust-model row **inbox (low)**: every command is hostile input, parsed by
/// ``IMAPCommandParser`` within ``IMAPLimits``; five failed logins end the connection.
public final class IMAPSession: @unchecked Sendable {
    // Thread-safety: the state below is touched only by `run`'s task, and during IDLE only by the
    // watcher task while `run` awaits the next frame (it awaits the watcher before going on).

    struct Selected {
        var name: String
        var readOnly: Bool
        var uidValidity: UInt32
        var uidNext: UInt32
        var messages: [IMAPMessageSummary]
        /// The backend's ``IMAPMailboxSnapshot/revision`` this view was last brought in step with.
        var revision: UInt64?
    }

    private let backend: any IMAPBackend
    private let connection: any IMAPSessionConnection
    private let limits: IMAPLimits
    private var account: (any IMAPAccount)?
    private var selected: Selected?
    private var out: [UInt8] = []
    private var failedLogins = 0
    private var ending = false
    /// CONDSTORE (RFC 7162) was enabled: FLAGS in FETCH responses come with MODSEQ.
    private var condstore = false
    /// QRESYNC (RFC 7162 §3.2) was enabled: expunges are told as VANISHED with UIDs.
    private var qresync = false
    /// The most failed LOGIN/AUTHENTICATE attempts before the connection is closed.
    public static let maxFailedLogins = 5

    /// Creates a session for one connection.
    public init(backend: any IMAPBackend, connection: any IMAPSessionConnection, limits: IMAPLimits = .default) {
        self.backend = backend; self.connection = connection; self.limits = limits
    }

    private var loginAllowed: Bool { connection.isEncrypted || connection.plaintextLoginAllowed }
    private var capabilities: String {
        IMAPCapabilities.list(tlsAvailable: connection.canStartTLS, loginAllowed: loginAllowed, authenticated: account != nil)
            .joined(separator: " ")
    }

    /// Runs the session: greets, then answers frames until LOGOUT, a fatal frame or the end of input.
    public func run<Frames: AsyncSequence>(frames: Frames) async where Frames.Element == IMAPFrame {
        send(.untaggedStatus(.ok, code: "CAPABILITY \(capabilities)", text: "Rampart IMAP ready"))
        await flush()
        var iterator = frames.makeAsyncIterator()
        while !ending {
            guard let frame = try? await iterator.next() else { break }
            switch frame {
            case .continuationRequest:
                send(.continuation("Ready for literal data"))
            case .fatal(let error):
                send(.untaggedStatus(.bye, code: nil, text: "\(error); closing the connection"))
                ending = true
            case .rejected(let tag, let error):
                let code: String? = if case .lineTooLong = error { nil } else { "TOOBIG" }
                let status: IMAPStatus = code == nil ? .bad : .no
                if let tag { send(.tagged(tag: tag, status: status, code: code, text: error.description)) }
                else { send(.untaggedStatus(.bad, code: code, text: error.description)) }
            case .command(let bytes):
                do throws(IMAPParseError) {
                    let command = try IMAPCommandParser.parse(bytes)
                    await execute(command, frames: &iterator)
                } catch {
                    if let tag = error.tag { send(.tagged(tag: tag, status: .bad, code: nil, text: error.message)) }
                    else { send(.untaggedStatus(.bad, code: nil, text: error.message)) }
                }
            }
            await flush()
        }
        await flush()
    }

    // MARK: Output

    func send(_ response: IMAPResponse) { out += response.encoded }
    func sendData(_ w: IMAPWriter) { send(.data(w.bytes)) }

    func flush() async {
        guard !out.isEmpty else { return }
        let bytes = out
        out = []
        do { try await connection.write(bytes) } catch { ending = true }
    }

    private func flushIfLarge() async { if out.count >= 256 * 1024 { await flush() } }

    // MARK: Commands

    private func execute<I: AsyncIteratorProtocol>(_ command: IMAPCommand, frames: inout I) async where I.Element == IMAPFrame {
        let tag = command.tag
        func ok(_ text: String, code: String? = nil) { send(.tagged(tag: tag, status: .ok, code: code, text: text)) }
        func no(_ text: String, code: String? = nil) { send(.tagged(tag: tag, status: .no, code: code, text: text)) }
        func bad(_ text: String) { send(.tagged(tag: tag, status: .bad, code: nil, text: text)) }

        // State checks (RFC 3501 §3).
        switch command.kind {
        case .capability, .noop, .logout, .id: break
        case .starttls, .login, .authenticate:
            if account != nil { return bad("Already authenticated") }
        case .select, .create, .delete, .rename, .subscribe, .unsubscribe, .list, .lsub, .status, .append, .idle, .namespace, .enable:
            if account == nil { return bad("Log in first (LOGIN or AUTHENTICATE)") }
        default:
            if account == nil { return bad("Log in first (LOGIN or AUTHENTICATE)") }
            if selected == nil { return bad("Select a mailbox first (SELECT or EXAMINE)") }
        }

        do {
            switch command.kind {
            case .capability:
                send(.data(Array("CAPABILITY \(capabilities)".utf8))); ok("CAPABILITY completed")
            case .noop, .check:
                try await sync(expunges: true); ok("\(command.kind == .noop ? "NOOP" : "CHECK") completed")
            case .logout:
                send(.untaggedStatus(.bye, code: nil, text: "Logging out")); ok("LOGOUT completed"); ending = true
            case .id:
                var w = IMAPWriter(); w.raw("ID (\"name\" \"Rampart\" \"vendor\" \"Rampart\")"); sendData(w); ok("ID completed")
            case .namespace:
                send(.data(Array("NAMESPACE ((\"\" \"/\")) NIL NIL".utf8))); ok("NAMESPACE completed")
            case .enable(let capabilities):
                var enabled: [String] = []
                if capabilities.contains("CONDSTORE") { condstore = true; enabled.append("CONDSTORE") }
                if capabilities.contains("QRESYNC") { condstore = true; qresync = true; enabled.append("QRESYNC") }
                send(.data(Array((["ENABLED"] + enabled).joined(separator: " ").utf8))); ok("ENABLE completed")
            case .starttls:
                guard connection.canStartTLS else { return bad("STARTTLS is not available on this connection") }
                await flush()
                try await connection.startTLS(after: IMAPResponse.tagged(tag: tag, status: .ok, code: nil, text: "Begin TLS negotiation now").encoded)
            case .login(let user, let password):
                guard loginAllowed else { return no("Send STARTTLS first: passwords are not accepted in the clear here", code: "PRIVACYREQUIRED") }
                await login(tag: tag, username: user, password: password)
            case .authenticate(let mechanism, let initial):
                guard mechanism == "PLAIN" else { return no("Unsupported mechanism \(mechanism); use PLAIN", code: "CANNOT") }
                guard loginAllowed else { return no("Send STARTTLS first: passwords are not accepted in the clear here", code: "PRIVACYREQUIRED") }
                var response = initial
                if response == nil {
                    send(.continuation("")); await flush()
                    guard let frame = try? await frames.next(), case .command(let line) = frame else { return bad("AUTHENTICATE cancelled") }
                    response = String(decoding: line, as: UTF8.self)
                }
                guard let text = response, text != "*" else { return bad("AUTHENTICATE cancelled") }
                let decoded = text == "=" ? [] : (Data(base64Encoded: text).map(Array.init) ?? [0xFF])
                let fields = decoded.split(separator: 0, omittingEmptySubsequences: false)
                guard fields.count == 3, let user = String(validating: fields[1], as: UTF8.self),
                      let password = String(validating: fields[2], as: UTF8.self) else {
                    return bad("Invalid SASL PLAIN response (base64 of authzid NUL user NUL password)")
                }
                // No proxy authorization (RFC 4616 §2): an authzid must name the user itself.
                guard fields[0].isEmpty || fields[0].elementsEqual(fields[1]) else {
                    return no("Acting as another user (authzid) is not supported", code: "AUTHORIZATIONFAILED")
                }
                await login(tag: tag, username: user, password: password)
            case .select(let name, let readOnly, let enableCondstore, let resync):
                if resync != nil, !qresync { return bad("Send ENABLE QRESYNC before SELECT with QRESYNC") }
                if enableCondstore { condstore = true }
                // RFC 7162 §3.2.11: with QRESYNC, leaving a mailbox for another is said.
                if qresync, selected != nil { send(.untaggedStatus(.ok, code: "CLOSED", text: "Previous mailbox closed")) }
                selected = nil
                try await select(name, readOnly: readOnly, tag: tag, resync: resync)
            case .create(let name): try await account!.create(mailbox: name); ok("CREATE completed")
            case .delete(let name):
                if selected?.name == name { selected = nil }
                try await account!.delete(mailbox: name); ok("DELETE completed")
            case .rename(let from, let to): try await account!.rename(mailbox: from, to: to); ok("RENAME completed")
            case .subscribe, .unsubscribe: ok("Every mailbox is subscribed")
            case .list(let reference, let pattern, let specialUseOnly):
                try await list(reference: reference, pattern: pattern, specialUseOnly: specialUseOnly, verb: "LIST"); ok("LIST completed")
            case .lsub(let reference, let pattern):
                try await list(reference: reference, pattern: pattern, specialUseOnly: false, verb: "LSUB"); ok("LSUB completed")
            case .status(let name, let items):
                let snap = try await account!.snapshot(of: name)
                var w = IMAPWriter(); w.raw("STATUS "); w.mailbox(name); w.raw(" ")
                w.list(items) { w, item in
                    w.raw(item.rawValue + " ")
                    switch item {
                    case .messages: w.number(snap.messages.count)
                    case .recent: w.number(0)
                    case .uidNext: w.number(snap.uidNext)
                    case .uidValidity: w.number(snap.uidValidity)
                    case .unseen: w.number(snap.messages.filter { !IMAPFlags.contains($0.flags, IMAPFlags.seen) }.count)
                    case .highestModSeq: w.number(snap.highestModSeq)
                    }
                }
                sendData(w); ok("STATUS completed")
            case .append(let name, let flags, let date, let message):
                do {
                    let r = try await account!.append(to: name, message: message, flags: flags, internalDate: date)
                    try await sync(expunges: true)
                    ok("APPEND completed", code: "APPENDUID \(r.uidValidity) \(r.uid)")
                } catch IMAPBackendError.noSuchMailbox(let n) {
                    no("No mailbox named \(n)", code: "TRYCREATE")
                }
            case .idle:
                try await idle(tag: tag, frames: &frames)
            case .close, .unselect:
                if command.kind == .close, let s = selected, !s.readOnly { _ = try await account!.expunge(in: s.name, uids: nil) }
                selected = nil; ok("\(command.kind == .close ? "CLOSE" : "UNSELECT") completed")
            case .expunge, .uidExpunge:
                guard let s = selected, !s.readOnly else { return no("The mailbox is read-only (EXAMINE)", code: "READ-ONLY") }
                var uids: [UInt32]?
                if case .uidExpunge(let set) = command.kind { uids = try resolve(set, uid: true).map { s.messages[$0].uid } }
                _ = try await account!.expunge(in: s.name, uids: uids)
                try await sync(expunges: true); ok("EXPUNGE completed")
            case .fetch(let set, var attributes, let uid, let changedSince, let vanished):
                if vanished, !qresync { return bad("Send ENABLE QRESYNC before FETCH with VANISHED") }
                var indices = try resolve(set, uid: uid)
                try await sync(expunges: uid)
                if vanished, let s = selected { sendVanishedEarlier(in: set, present: s.messages.map(\.uid), below: s.uidNext) }
                indices = indices.filter { $0 < selected!.messages.count }
                if let changedSince {
                    indices = indices.filter { selected!.messages[$0].modSeq > changedSince }
                    if !attributes.contains(.modSeq) { attributes.append(.modSeq) }
                }
                if attributes.contains(.modSeq) { condstore = true }
                try await fetch(indices, attributes: attributes, uid: uid)
                ok("\(uid ? "UID " : "")FETCH completed")
            case .store(let set, let operation, let silent, let flags, let uid, let unchangedSince):
                guard let s = selected, !s.readOnly else { return no("The mailbox is read-only (EXAMINE)", code: "READ-ONLY") }
                var indices = try resolve(set, uid: uid)
                var modified: [UInt32] = []
                if let unchangedSince {
                    // RFC 7162 §3.1.3, checked against a fresh snapshot: a backend shared with other
                    // writers may still change a message between this check and the store.
                    condstore = true
                    let current = Dictionary(try await account!.snapshot(of: s.name).messages.map { ($0.uid, $0.modSeq) }, uniquingKeysWith: { a, _ in a })
                    let (keep, skip) = indices.reduce(into: ([Int](), [Int]())) { r, i in
                        if (current[s.messages[i].uid] ?? 0) > unchangedSince { r.1.append(i) } else { r.0.append(i) }
                    }
                    indices = keep
                    modified = skip.map { uid ? s.messages[$0].uid : UInt32($0 + 1) }
                }
                let uids = indices.map { s.messages[$0].uid }
                let changed = uids.isEmpty ? [:] : try await account!.storeFlags(in: s.name, uids: uids, operation: operation, flags: flags)
                let after = condstore ? Dictionary(try await account!.snapshot(of: s.name).messages.map { ($0.uid, $0.modSeq) },
                                                   uniquingKeysWith: { a, _ in a }) : [:]
                for i in indices {
                    let m = selected!.messages[i]
                    guard let newFlags = changed[m.uid] else { continue }
                    selected!.messages[i].flags = newFlags
                    if let modSeq = after[m.uid] { selected!.messages[i].modSeq = modSeq }
                    if !silent || condstore {
                        var w = IMAPWriter(); w.number(i + 1); w.raw(" FETCH (")
                        if uid { w.raw("UID "); w.number(m.uid); w.raw(" ") }
                        if !silent { w.raw("FLAGS "); writeFlags(newFlags, &w) }
                        if condstore { if !silent { w.raw(" ") }; w.raw("MODSEQ ("); w.number(selected!.messages[i].modSeq); w.raw(")") }
                        w.raw(")")
                        sendData(w)
                    }
                }
                try await sync(expunges: uid)
                ok("\(uid ? "UID " : "")STORE completed", code: modified.isEmpty ? nil : "MODIFIED \(Self.compress(modified))")
            case .search(let key, let uid):
                try await sync(expunges: uid)
                let hits = try await search(key)
                var w = IMAPWriter(); w.raw("SEARCH")
                for i in hits { w.raw(" "); w.number(uid ? selected!.messages[i].uid : UInt32(i + 1)) }
                if Self.mentionsModSeq(key) {
                    condstore = true
                    if let highest = hits.map({ selected!.messages[$0].modSeq }).max() { w.raw(" (MODSEQ "); w.number(highest); w.raw(")") }
                }
                sendData(w); ok("\(uid ? "UID " : "")SEARCH completed")
            case .copy(let set, let name, let uid), .move(let set, let name, let uid):
                let isMove: Bool = if case .move = command.kind { true } else { false }
                let verb = (uid ? "UID " : "") + (isMove ? "MOVE" : "COPY")
                guard let s = selected else { return }
                if isMove, s.readOnly { return no("The mailbox is read-only (EXAMINE)", code: "READ-ONLY") }
                let uids = try resolve(set, uid: uid).map { s.messages[$0].uid }
                do {
                    guard !uids.isEmpty else { return ok("\(verb) completed (no messages)") }
                    let r = isMove ? try await account!.move(uids: uids, from: s.name, to: name)
                        : try await account!.copy(uids: uids, from: s.name, to: name)
                    let code = r.uids.isEmpty ? nil : "COPYUID \(r.uidValidity) \(Self.compress(r.uids.map(\.source))) \(Self.compress(r.uids.map(\.destination)))"
                    if isMove {
                        if let code { send(.untaggedStatus(.ok, code: code, text: "Moved")) }
                        try await sync(expunges: true)
                        ok("\(verb) completed")
                    } else {
                        try await sync(expunges: true)
                        ok("\(verb) completed", code: code)
                    }
                } catch IMAPBackendError.noSuchMailbox(let n) where n == name {
                    no("No mailbox named \(n)", code: "TRYCREATE")
                }
            }
        } catch IMAPBackendError.unavailable(let reason) {
            // The store went away under an open session (the account locked): RFC 3501 §7.1.5.
            send(.untaggedStatus(.bye, code: "UNAVAILABLE", text: reason))
            ending = true
        } catch let error as IMAPBackendError {
            no(error.description, code: error.responseCode)
        } catch let error as IMAPParseError {
            bad(error.message)
        } catch {
            no("The mail store failed: \(error)")
        }
    }

    private func login(tag: String, username: String, password: String) async {
        do {
            account = try await backend.authenticate(username: username, password: password)
            send(.tagged(tag: tag, status: .ok, code: "CAPABILITY \(capabilities)", text: "Logged in"))
        } catch {
            failedLogins += 1
            let text = (error as? IMAPBackendError)?.description ?? "Authentication failed: \(error)"
            if case .unavailable = error as? IMAPBackendError {
                return send(.tagged(tag: tag, status: .no, code: "UNAVAILABLE", text: text))
            }
            send(.tagged(tag: tag, status: .no, code: "AUTHENTICATIONFAILED", text: text))
            if failedLogins >= Self.maxFailedLogins {
                send(.untaggedStatus(.bye, code: nil, text: "Too many failed logins; closing the connection"))
                ending = true
            }
        }
    }

    private func select(_ name: String, readOnly: Bool, tag: String, resync: IMAPQResync? = nil) async throws {
        let snap = try await account!.snapshot(of: name)
        let s = Selected(name: name, readOnly: readOnly, uidValidity: snap.uidValidity, uidNext: snap.uidNext, messages: snap.messages,
                         revision: snap.revision)
        let flags = IMAPFlags.system.joined(separator: " ")
        send(.data(Array("FLAGS (\(flags))".utf8)))
        send(.untaggedStatus(.ok, code: "PERMANENTFLAGS (\(readOnly ? "" : flags + " \\*"))", text: readOnly ? "Read-only mailbox" : "Flags permitted"))
        send(.data(Array("\(s.messages.count) EXISTS".utf8)))
        send(.data(Array("0 RECENT".utf8)))
        if let first = s.messages.firstIndex(where: { !IMAPFlags.contains($0.flags, IMAPFlags.seen) }) {
            send(.untaggedStatus(.ok, code: "UNSEEN \(first + 1)", text: "First unseen message"))
        }
        send(.untaggedStatus(.ok, code: "UIDVALIDITY \(s.uidValidity)", text: "UIDs valid"))
        send(.untaggedStatus(.ok, code: "UIDNEXT \(s.uidNext)", text: "Predicted next UID"))
        send(.untaggedStatus(.ok, code: "HIGHESTMODSEQ \(snap.highestModSeq)", text: "Highest mod-sequence"))
        if let resync, resync.uidValidity == s.uidValidity {
            // RFC 7162 §3.2.5: what vanished among the UIDs the client knows (every UID missing
            // below UIDNEXT: the backend keeps no expunge history, which §3.2.5.2 allows), then
            // the messages changed since its mod-sequence.
            let known = resync.knownUIDs ?? IMAPSequenceSet(ranges: [(.number(1), .star)])
            sendVanishedEarlier(in: known, present: s.messages.map(\.uid), below: s.uidNext)
            let largest = s.messages.last?.uid ?? 0
            for (i, m) in s.messages.enumerated() where m.modSeq > resync.modSeq && known.contains(m.uid, largest: max(largest, s.uidNext)) {
                var w = IMAPWriter(); w.number(i + 1); w.raw(" FETCH (UID "); w.number(m.uid); w.raw(" FLAGS "); writeFlags(m.flags, &w)
                w.raw(" MODSEQ ("); w.number(m.modSeq); w.raw("))")
                sendData(w)
            }
        }
        selected = s
        send(.tagged(tag: tag, status: .ok, code: readOnly ? "READ-ONLY" : "READ-WRITE", text: "\(readOnly ? "EXAMINE" : "SELECT") completed"))
    }

    private func list(reference: String, pattern: String, specialUseOnly: Bool, verb: String) async throws {
        if pattern.isEmpty {
            send(.data(Array("\(verb) (\\Noselect) \"/\" \"\"".utf8)))
            return
        }
        let specialUse: Set<String> = ["\\sent", "\\drafts", "\\trash", "\\archive", "\\junk", "\\all", "\\flagged"]
        for box in try await account!.mailboxes() where Self.matches(box.name, pattern: reference + pattern) {
            if specialUseOnly, !box.attributes.contains(where: { specialUse.contains($0.lowercased()) }) { continue }
            var w = IMAPWriter()
            w.raw("\(verb) (" + box.attributes.joined(separator: " ") + ") \"/\" ")
            w.mailbox(box.name)
            sendData(w)
        }
    }

    /// LIST wildcard matching: `*` matches anything, `%` anything but the delimiter.
    static func matches(_ name: String, pattern: String) -> Bool {
        var pattern = pattern
        if pattern.prefix(5).uppercased() == "INBOX", pattern.count == 5 || pattern.dropFirst(5).first == "/" { pattern = "INBOX" + pattern.dropFirst(5) }
        let n = Array(name.unicodeScalars), p = Array(pattern.unicodeScalars)
        // Iterative matcher with memo, bounded by |n|·|p|.
        guard n.count <= 1000, p.count <= 1000 else { return false }
        var memo = [[Bool?]](repeating: [Bool?](repeating: nil, count: p.count + 1), count: n.count + 1)
        func go(_ i: Int, _ j: Int) -> Bool {
            if let m = memo[i][j] { return m }
            let r: Bool
            if j == p.count { r = i == n.count }
            else if p[j] == "*" { r = go(i, j + 1) || (i < n.count && go(i + 1, j)) }
            else if p[j] == "%" { r = go(i, j + 1) || (i < n.count && n[i] != "/" && go(i + 1, j)) }
            else {
                r = i < n.count && n[i] == p[j] && go(i + 1, j + 1)
            }
            memo[i][j] = r
            return r
        }
        return go(0, 0)
    }

    private func idle<I: AsyncIteratorProtocol>(tag: String, frames: inout I) async throws where I.Element == IMAPFrame {
        // Watch first, then take the snapshot and tell the client: a change made by another
        // connection once the client sees "+ idling" is always reported.
        var changes: AsyncStream<Void>?
        if let s = selected, let account { changes = await account.changes(in: s.name) }
        send(.continuation("idling"))
        if selected != nil { try await sync(expunges: true) }
        await flush()
        // The watcher is a child task, so it runs where the session runs (the server's own threads,
        // `ServerTasks`), never waiting for a shared pool that other work may be blocking.
        let frame = await withTaskGroup(of: Void.self) { group in
            if let changes {
                group.addTask { [self] in
                    for await _ in changes {
                        do { try await self.sync(expunges: true) } catch IMAPBackendError.unavailable(let reason) {
                            self.send(.untaggedStatus(.bye, code: "UNAVAILABLE", text: reason))
                            self.ending = true
                            await self.flush()
                            return
                        } catch {}
                        await self.flush()
                    }
                }
            }
            let frame = try? await frames.next()
            group.cancelAll()
            return frame
        }
        if ending { return }   // the watcher said BYE (the account locked)
        guard case .command(let line) = frame, String(decoding: line, as: UTF8.self).uppercased() == "DONE" else {
            if frame == nil { ending = true; return }
            send(.tagged(tag: tag, status: .bad, code: nil, text: "Expected DONE to end IDLE"))
            return
        }
        try await sync(expunges: true)
        send(.tagged(tag: tag, status: .ok, code: nil, text: "IDLE terminated"))
    }

    // MARK: Mailbox view

    /// Brings the selected mailbox's view in step with the backend, telling the client:
    /// EXPUNGE (only when `expunges`), changed FLAGS, EXISTS.
    func sync(expunges: Bool) async throws {
        guard var s = selected, let account else { return }
        let snap = try await account.snapshot(of: s.name)
        // Nothing changed since the view was last in step: nothing to tell (the common case
        // between the commands of a sync, which would otherwise compare every message each time).
        if let revision = snap.revision, revision == s.revision { return }
        var current: [UInt32: IMAPMessageSummary] = [:]
        current.reserveCapacity(snap.messages.count)
        for m in snap.messages { current[m.uid] = m }
        if expunges {
            var vanished: [UInt32] = []
            for i in s.messages.indices.reversed() where current[s.messages[i].uid] == nil {
                if qresync { vanished.append(s.messages[i].uid) } else { send(.data(Array("\(i + 1) EXPUNGE".utf8))) }
                s.messages.remove(at: i)
            }
            // RFC 7162 §3.2.10: once QRESYNC is enabled, expunges are told by UID.
            if !vanished.isEmpty { send(.data(Array("VANISHED \(Self.compress(vanished.reversed()))".utf8))) }
        }
        for i in s.messages.indices {
            guard let now = current[s.messages[i].uid] else { continue }
            let flagsChanged = now.flags != s.messages[i].flags
            let modSeqChanged = now.modSeq != s.messages[i].modSeq
            s.messages[i].flags = now.flags
            s.messages[i].modSeq = now.modSeq
            guard flagsChanged || (condstore && modSeqChanged) else { continue }
            var w = IMAPWriter(); w.number(i + 1); w.raw(" FETCH (UID "); w.number(now.uid); w.raw(" FLAGS "); writeFlags(now.flags, &w)
            if condstore { w.raw(" MODSEQ ("); w.number(now.modSeq); w.raw(")") }
            w.raw(")")
            sendData(w)
        }
        let known = s.messages.last?.uid ?? 0
        let added = snap.messages.filter { $0.uid > known }
        if !added.isEmpty {
            s.messages += added
            send(.data(Array("\(s.messages.count) EXISTS".utf8)))
        }
        s.uidNext = snap.uidNext
        // Without expunges reported the view may still hold messages the snapshot lacks: compare again next time.
        s.revision = s.messages.count == snap.messages.count ? snap.revision : nil
        selected = s
    }

    /// The indices (0-based) of the selected messages a set names, in ascending order.
    func resolve(_ set: IMAPSequenceSet, uid: Bool) throws -> [Int] {
        let messages = selected?.messages ?? []
        if uid {
            guard let largest = messages.last?.uid else { return [] }
            // Each range found by binary search over the ascending UIDs (a sync fetches one UID
            // at a time: a scan of the whole mailbox per command made it quadratic).
            func firstIndex(atLeast uid: UInt32) -> Int {
                var low = 0, high = messages.count
                while low < high {
                    let mid = (low + high) / 2
                    if messages[mid].uid < uid { low = mid + 1 } else { high = mid }
                }
                return low
            }
            var spans: [Range<Int>] = []
            for (a, b) in set.ranges {
                let x = a.resolved(largest), y = b.resolved(largest)
                let low = firstIndex(atLeast: min(x, y))
                let high = max(x, y) == UInt32.max ? messages.count : firstIndex(atLeast: max(x, y) + 1)
                if low < high { spans.append(low..<high) }
            }
            spans.sort { $0.lowerBound < $1.lowerBound }
            var result: [Int] = []
            var next = 0
            for span in spans where span.upperBound > next {
                result.append(contentsOf: max(span.lowerBound, next)..<span.upperBound)
                next = span.upperBound
                guard result.count <= limits.maxMessagesPerCommand else { throw IMAPBackendError.failed("Too many messages for one command (limit \(limits.maxMessagesPerCommand))") }
            }
            return result
        }
        let count = UInt32(messages.count)
        for (a, b) in set.ranges where a != .star && b != .star {
            // A range reaching `*` is always valid (`1:*` in an empty mailbox names nothing).
            for bound in [a, b] {
                if case .number(let n) = bound, n > count {
                    throw IMAPParseError(tag: nil, message: "No message with sequence number \(n) (the mailbox has \(count))")
                }
            }
        }
        var result: [Int] = []
        for i in 0..<messages.count where set.contains(UInt32(i + 1), largest: count) { result.append(i) }
        return result
    }

    func writeFlags(_ flags: [String], _ w: inout IMAPWriter) {
        w.raw("(" + flags.joined(separator: " ") + ")")
    }

    /// `* VANISHED (EARLIER) …`: the UIDs below `below` that `set` names and that are not `present`
    /// (ascending). Nothing when there are none.
    func sendVanishedEarlier(in set: IMAPSequenceSet, present: [UInt32], below: UInt32) {
        guard below > 1 else { return }
        let largest = below - 1
        // The gaps between present UIDs, each cut to the ranges the set names: ranges, never
        // expanded (a client may name 1:4294967295).
        var spans: [ClosedRange<UInt32>] = []
        var next: UInt32 = 1
        for uid in present + [below] where uid >= next {
            if uid > next {
                for (a, b) in set.ranges {
                    let x = a.resolved(largest), y = b.resolved(largest)
                    let low = max(next, min(x, y)), high = min(uid - 1, max(x, y))
                    if low <= high { spans.append(low...high) }
                }
            }
            next = uid &+ 1
            if next == 0 { break }
        }
        guard !spans.isEmpty else { return }
        spans.sort { $0.lowerBound < $1.lowerBound }
        var merged: [ClosedRange<UInt32>] = []
        for span in spans {
            if let last = merged.last, span.lowerBound <= last.upperBound &+ 1, last.upperBound != UInt32.max {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, span.upperBound)
            } else { merged.append(span) }
        }
        let text = merged.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound):\($0.upperBound)" }.joined(separator: ",")
        send(.data(Array("VANISHED (EARLIER) \(text)".utf8)))
    }

    /// `1,3:5` from ascending-or-not numbers, kept in order (COPYUID pairs must correspond).
    static func compress(_ numbers: [UInt32]) -> String {
        var parts: [String] = []
        var i = 0
        while i < numbers.count {
            var j = i
            while j + 1 < numbers.count, numbers[j + 1] == numbers[j] &+ 1 { j += 1 }
            parts.append(i == j ? "\(numbers[i])" : "\(numbers[i]):\(numbers[j])")
            i = j + 1
        }
        return parts.joined(separator: ",")
    }

    // MARK: FETCH

    private func fetch(_ indices: [Int], attributes: [IMAPFetchAttribute], uid: Bool) async throws {
        guard let s = selected, let account else { return }
        var attributes = attributes
        if uid, !attributes.contains(.uid) { attributes.insert(.uid, at: 0) }
        let needsBytes = attributes.contains { a in
            switch a { case .flags, .uid, .internalDate, .rfc822Size, .modSeq: false; default: true }
        }
        let setsSeen = !s.readOnly && attributes.contains { a in
            switch a {
            case .rfc822, .rfc822Text: true
            case .section(_, let peek, _): !peek
            default: false
            }
        }
        for i in indices {
            var m = selected!.messages[i]
            var bytes: [UInt8] = []
            if needsBytes {
                guard let read = try? await account.messageBytes(in: s.name, uid: m.uid) else { continue }
                bytes = read
            }
            // Parsed only when an item needs the MIME structure (BODY[] and RFC822 do not).
            var parsed: MessageStructure?
            func structure() -> MessageStructure {
                if let parsed { return parsed }
                let made = MessageStructure(bytes: bytes)
                parsed = made
                return made
            }
            var flagsChanged = false
            if setsSeen, !IMAPFlags.contains(m.flags, IMAPFlags.seen) {
                if let f = try await account.storeFlags(in: s.name, uids: [m.uid], operation: .add, flags: [IMAPFlags.seen])[m.uid] {
                    m.flags = f; selected!.messages[i].flags = f; flagsChanged = true
                }
            }
            var w = IMAPWriter()
            w.number(i + 1); w.raw(" FETCH (")
            var first = true
            func item(_ name: String) { if !first { w.raw(" ") }; first = false; w.raw(name + " ") }
            for a in attributes {
                switch a {
                case .uid: item("UID"); w.number(m.uid)
                case .flags: item("FLAGS"); writeFlags(m.flags, &w)
                case .modSeq: item("MODSEQ"); w.raw("("); w.number(m.modSeq); w.raw(")")
                case .internalDate: item("INTERNALDATE"); w.raw("\"" + IMAPDate.formatDateTime(m.internalDate) + "\"")
                case .rfc822Size: item("RFC822.SIZE"); w.number(m.size)
                case .envelope: item("ENVELOPE"); structure().writeEnvelope(&w)
                case .body: item("BODY"); structure().writeBodyStructure(&w, extensible: false)
                case .bodyStructure: item("BODYSTRUCTURE"); structure().writeBodyStructure(&w, extensible: true)
                case .rfc822: item("RFC822"); w.literal(bytes)
                case .rfc822Header: item("RFC822.HEADER"); w.literal(structure().sectionBytes(IMAPSection(text: .header)) ?? [])
                case .rfc822Text: item("RFC822.TEXT"); w.literal(structure().sectionBytes(IMAPSection(text: .text)) ?? [])
                case .section(let section, _, let partial):
                    var data = section.part.isEmpty && section.text == nil ? bytes : structure().sectionBytes(section) ?? []
                    var name = "BODY[\(section)]"
                    if let partial {
                        name += "<\(partial.origin)>"
                        let start = min(partial.origin, data.count)
                        data = Array(data[start..<min(data.count, start + partial.count)])
                    }
                    item(name); w.literal(data)
                }
            }
            if flagsChanged, !attributes.contains(.flags) { item("FLAGS"); writeFlags(m.flags, &w) }
            if condstore, attributes.contains(.flags) || flagsChanged, !attributes.contains(.modSeq) {
                if flagsChanged, let fresh = try? await account.snapshot(of: s.name).messages.first(where: { $0.uid == m.uid }) {
                    m.modSeq = fresh.modSeq; selected!.messages[i].modSeq = fresh.modSeq
                }
                item("MODSEQ"); w.raw("("); w.number(m.modSeq); w.raw(")")
            }
            w.raw(")")
            sendData(w)
            await flushIfLarge()
        }
    }

    // MARK: SEARCH

    private func search(_ key: IMAPSearchKey) async throws -> [Int] {
        guard let s = selected, let account else { return [] }
        let count = UInt32(s.messages.count)
        let largestUID = s.messages.last?.uid ?? 0
        // Keys that need no bytes are tried first, header keys before body keys: a message is
        // read (and decrypted by the backend) only when flags, dates, sizes and UIDs leave it in,
        // and its body is parsed only for BODY and TEXT.
        let key = Self.cheapestFirst(key)
        var hits: [Int] = []
        var scanned = 0
        for (i, m) in s.messages.enumerated() {
            var bytes: [UInt8]?
            var read = false
            var header: MIMEMessage?, whole: MIMEMessage?
            func load(_ body: Bool) async -> MIMEMessage? {
                if !read {
                    read = true
                    bytes = try? await account.messageBytes(in: s.name, uid: m.uid)
                    scanned += bytes?.count ?? 0
                }
                guard let bytes else { return nil }
                if let whole { return whole }
                if body {
                    whole = MIMEMessage(bytes: bytes)
                    return whole
                }
                if header == nil { header = MIMEMessage(bytes: Array(bytes[0..<MessageStructure.headerEnd(bytes, 0, bytes.count)])) }
                return header
            }
            if try await Self.matches(key, m, msn: UInt32(i + 1), count: count, largestUID: largestUID, load: load) { hits.append(i) }
            if scanned > limits.maxSearchBytes {
                let bound = limits.maxSearchBytes >= 1 << 20 ? "\(limits.maxSearchBytes >> 20) MiB" : "\(limits.maxSearchBytes) bytes"
                throw IMAPBackendError.limit("This search would read more than \(bound) of messages (each is read, one at a time, "
                    + "for text and header keys); narrow it with SINCE or BEFORE, a UID range, or flags")
            }
        }
        return hits
    }

    /// What evaluating a key reads: 0 nothing but the summary, 1 the header, 2 the body too.
    static func cost(_ key: IMAPSearchKey) -> Int {
        switch key {
        case .sentBefore, .sentOn, .sentSince, .header: 1
        case .body, .text: 2
        case .not(let k): cost(k)
        case .or(let a, let b): max(cost(a), cost(b))
        case .and(let keys): keys.map(cost).max() ?? 0
        default: 0
        }
    }

    /// The same key with every AND and OR trying its cheaper operands first (the result is the same).
    static func cheapestFirst(_ key: IMAPSearchKey) -> IMAPSearchKey {
        switch key {
        case .and(let keys):
            return .and(keys.map(cheapestFirst).enumerated().sorted { (cost($0.element), $0.offset) < (cost($1.element), $1.offset) }.map(\.element))
        case .or(let a, let b):
            let (x, y) = (cheapestFirst(a), cheapestFirst(b))
            return cost(y) < cost(x) ? .or(y, x) : .or(x, y)
        case .not(let k): return .not(cheapestFirst(k))
        default: return key
        }
    }

    static func mentionsModSeq(_ key: IMAPSearchKey) -> Bool {
        switch key {
        case .modSeq: true
        case .not(let k): mentionsModSeq(k)
        case .or(let a, let b): mentionsModSeq(a) || mentionsModSeq(b)
        case .and(let keys): keys.contains(where: mentionsModSeq)
        default: false
        }
    }

    /// Whether message `m` matches `key`; `load(body)` gives its parsed header (`body` false) or
    /// whole message, nil when it cannot be read.
    static func matches(_ key: IMAPSearchKey, _ m: IMAPMessageSummary, msn: UInt32, count: UInt32, largestUID: UInt32,
                        load: (Bool) async -> MIMEMessage?) async throws -> Bool {
        func contains(_ haystack: String?, _ needle: String) -> Bool {
            guard let haystack else { return false }
            return needle.isEmpty || haystack.range(of: needle, options: [.caseInsensitive, .diacriticInsensitive]) != nil
        }
        func sentDay() async -> Date? { await load(false)?.date.map(IMAPDate.day(of:)) }
        func bodyText(_ msg: MIMEMessage) -> String {
            msg.root.walk().filter { !$0.hasChildren && $0.contentType.mainType == "text" }.map { $0.text().text }.joined(separator: "\n")
        }
        switch key {
        case .all: return true
        case .and(let keys):
            for k in keys where !(try await matches(k, m, msn: msn, count: count, largestUID: largestUID, load: load)) { return false }
            return true
        case .not(let k): return !(try await matches(k, m, msn: msn, count: count, largestUID: largestUID, load: load))
        case .or(let a, let b):
            if try await matches(a, m, msn: msn, count: count, largestUID: largestUID, load: load) { return true }
            return try await matches(b, m, msn: msn, count: count, largestUID: largestUID, load: load)
        case .flag(let flag, let has): return IMAPFlags.contains(m.flags, flag) == has
        case .new, .recent: return false
        case .old: return true
        case .before(let d): return IMAPDate.day(of: m.internalDate) < d
        case .on(let d): return IMAPDate.day(of: m.internalDate) == d
        case .since(let d): return IMAPDate.day(of: m.internalDate) >= d
        case .sentBefore(let d): return await sentDay().map { $0 < d } ?? false
        case .sentOn(let d): return await sentDay().map { $0 == d } ?? false
        case .sentSince(let d): return await sentDay().map { $0 >= d } ?? false
        case .larger(let n): return m.size > n
        case .smaller(let n): return m.size < n
        case .header(let name, let value):
            guard let msg = await load(false) else { return false }
            return msg.headers.fields.contains { $0.name.lowercased() == name && contains($0.decodedValue, value) }
        case .body(let text):
            guard let msg = await load(true) else { return false }
            return contains(bodyText(msg), text)
        case .text(let text):
            guard let msg = await load(true) else { return false }
            return msg.headers.fields.contains { contains($0.decodedValue, text) } || contains(bodyText(msg), text)
        case .modSeq(let n): return m.modSeq >= n
        case .sequenceSet(let set): return set.contains(msn, largest: count)
        case .uid(let set): return set.contains(m.uid, largest: largestUID)
        }
    }
}
