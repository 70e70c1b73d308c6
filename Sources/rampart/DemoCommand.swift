import ArgumentParser
import RampartCLIKit
import Foundation
import Keychain
import Keymaker
import MailSafety
import MailboxCrypto
import RampartAPI
import RampartClient
import RampartCore
import RampartServer
import SealedStore

/// `rampart demo`: the main job, end to end, in a throwaway home folder.
///
/// Starts the embedded backend in-process (TLS on loopback, its own CA, pinned by the client),
/// logs the demo user in (MainKey created, session and private key sealed, push registered),
/// protects the MainKey with a PIN, syncs the mailbox into the sealed store, lists the inbox,
/// reads the tracking newsletter (terminal rendering + what was blocked), opens an attachment
/// through a cleartext lease, locks, shows a wrong PIN refused, unlocks, logs out and shows that
/// nothing of the user is left.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run Rampart's main job end to end: embedded server, login, PIN, sync, read, attachment, lock, logout.")

    @Option(help: "Keep the demo's home folder here instead of a temporary one.") var home: String?

    func run() async throws {
        try await reportingErrors {
            _ = ProcessHardening.disableCoreDumps()
            let folder = home.map { URL(fileURLWithPath: $0) }
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("rampart-demo-\(UUID().uuidString)")
            defer { if home == nil { try? FileManager.default.removeItem(at: folder) } }
            try PrivateFiles.ensurePrivateDirectory(folder)
            let started = ContinuousClock.now
            let step: @Sendable (String) -> Void = { print("==> \($0)") }
            let detail: @Sendable (String) -> Void = { print("    \($0)") }

            // 1. The backend.
            let serverFolder = folder.appendingPathComponent("server", isDirectory: true)
            let server = try await EmbeddedServer.start(dataDirectory: serverFolder, port: 0)
            step("Embedded server listening on \(server.baseURL.absoluteString) (TLS, its own CA); pins: \(server.pins.joined(separator: ", "))")

            // 2. The client's containers: a file keychain and sealed store under <home>/client-home.
            let clientHome = folder.appendingPathComponent("client-home", isDirectory: true)
            try PrivateFiles.ensurePrivateDirectory(clientHome)
            let global = CompositionRoot.global(role: .demo, environment: RampartEnvironment(homeDirectory: clientHome))
            let user = CompositionRoot.user("demo", in: global)
            let keymaker = user.keymaker
            let account = ClientAccount(dependencies: user, environment: global.environment)

            do {
                let demo = DemoAccounts.demo
                let login = try await LoginFlow.login(
                    endpoint: ServerEndpoint(serverInfo: server.info),
                    credentials: LoginCredentials(username: demo.username,
                                                  password: SecretBytes(copying: Array(demo.loginPassword.utf8)),
                                                  mailboxPassword: SecretBytes(copying: Array(demo.mailboxPassword.utf8))),
                    account: account, keymaker: keymaker)
                step("Logged in as \(login.session.username) <\(login.session.addresses.first ?? "")>: private key opened with the mailbox password (locally), MainKey \(login.mainKeyFingerprint) created")
                detail("session and private key sealed under the MainKey in the keychain (\(global.keychain.backendName)); push key registered: \(login.pushProblem == nil ? "yes" : "no (\(login.pushProblem!))")")

                let pin = SecretBytes(copying: Array("246810".utf8))
                try keymaker.activate(.pin, credential: .pin(pin))
                step("Protected the MainKey with a PIN; protectors: \(try keymaker.activeProtectors().map(\.rawValue).joined(separator: ", "))")

                let api = try account.api()
                let summary = try await MailSync(account: account).run(api: api) { progress in
                    if progress.done == progress.total { detail("sync: \(progress.done)/\(progress.total ?? 0) messages") }
                }
                step("Synced \(summary.messagesStored) messages, \(summary.labels) labels, \(summary.attachments) attachments into the sealed store")

                let store = try account.store()
                let inbox = try store.mail.messages(label: SystemLabel.inbox, limit: 20)
                step("Inbox (\(inbox.count) messages):")
                for message in inbox {
                    detail("\(message.flags.contains(.unread) ? "*" : " ") \(message.id)  \((message.sender.name).prefix(20).padding(toLength: 20, withPad: " ", startingAt: 0))  \(TerminalTextLine.clean(message.subject))")
                }
                let found = try store.mail.search(MailSearchQuery(words: ["northwind"]))
                step("Search \"northwind\" over the sealed blind index: \(found.count) message(s)")

                let reader = MessageReader(account: account)
                var newsletter: RenderedMessage?
                for message in inbox {
                    let rendered = try await reader.render(message.id, remote: .block, api: api)
                    if newsletter == nil || rendered.trackerCount > newsletter!.trackerCount { newsletter = rendered }
                }
                if let newsletter {
                    step("Reading \"\(TerminalTextLine.clean(newsletter.message.subject))\" (sanitized; CSP: \(newsletter.policy.headerValue))")
                    for line in newsletter.text.split(separator: "\n", omittingEmptySubsequences: false).prefix(14) { detail("| \(line)") }
                    step(newsletter.blockedSummary)
                    for tracker in newsletter.sanitized.report.trackers.prefix(8) {
                        detail("tracker (\(tracker.reason.rawValue)): \(tracker.url)")
                    }
                    for remote in newsletter.sanitized.report.blockedRemote.prefix(8) {
                        detail("blocked remote \(remote.kind.rawValue): \(remote.url)")
                    }
                }

                let vault = try AttachmentVault(account: account)
                let attachments = try inbox.flatMap { try store.mail.attachments(messageID: $0.id) }
                if let attachment = attachments.first(where: { AttachmentVault.contentID(of: $0) == nil }) {
                    let lease = try await vault.lease(attachment, api: api)
                    let size = (try? FileManager.default.attributesOfItem(atPath: lease.path)[.size] as? NSNumber)??.intValue ?? 0
                    step("Opened attachment \(attachment.name) through a FileVault cleartext lease: \(lease.path) (\(size) bytes, 0600)")
                    lease.end()
                    detail("lease ended: the cleartext file exists: \(FileManager.default.fileExists(atPath: lease.path))")
                }

                await api.shutdown()
                account.close()
                keymaker.lock()
                step("Locked: the MainKey is zeroized; reading now fails: \(Self.failure { _ = try account.store().mail.messageCount() })")
                // Alice writes to demo while demo is locked: the push process opens the
                // notification with the push key alone (shared keychain group, no PIN).
                let alice = try APIClient(endpoint: ServerEndpoint(serverInfo: server.info))
                let aliceLogin = try await alice.login(username: DemoAccounts.alice.username, password: DemoAccounts.alice.loginPassword)
                let aliceKey = try AccountKeyring.unlock(aliceLogin.keys, keyPassword: SecretBytes(copying: Array(DemoAccounts.alice.mailboxPassword.utf8))).primary
                _ = try await SendFlow.send(OutgoingMail(to: [DemoAccounts.demo.address], subject: "Dinner on Friday?", body: "<p>Are you free?</p>",
                                                         isPlainText: false),
                                            from: Correspondent(name: DemoAccounts.alice.displayName, address: DemoAccounts.alice.address),
                                            signer: aliceKey, api: alice, contacts: nil)
                try? await alice.logout()
                await alice.shutdown()
                if let pushFolder = server.info.pushDirectory {
                    let (pushes, _) = PushInbox(directory: URL(fileURLWithPath: pushFolder), keychain: global.keychain).drain(only: "demo")
                    for push in pushes {
                        step("Push while locked (no PIN needed): new mail from \(push.notification.sender): \(push.notification.subject)")
                    }
                }
                do {
                    try keymaker.unlock(.pin(SecretBytes(copying: Array("000000".utf8))))
                } catch {
                    step("Wrong PIN refused: \(error)")
                }
                try keymaker.unlock(.pin(pin))
                step("Unlocked with the right PIN; \(try account.store().mail.messageCount()) messages readable again")

                // Alice's message is OpenPGP: encrypted to demo's key and signed by Alice's; reading
                // it verifies the signature against Alice's key, pinned now on first use.
                let againAPI = try account.api()
                let resync = try await MailSync(account: account).run(api: againAPI) { _ in }
                if let dinner = try account.store().mail.messages(label: SystemLabel.inbox, limit: 50).first(where: { $0.subject == "Dinner on Friday?" }) {
                    let rendered = try await reader.render(dinner.id, loadRemote: false, api: againAPI)
                    step("Synced \(resync.messagesStored) new; read Alice's \"\(TerminalTextLine.clean(dinner.subject))\" (OpenPGP, signed inside the encryption): \(rendered.signature?.line ?? "Signature: not checked")")
                }
                await againAPI.shutdown()

                let result = await LogoutFlow.logout(account: account, keymaker: keymaker)
                step("Logged out: server session \(result.serverProblem == nil ? "ended" : "not ended (\(result.serverProblem!))"); wiped \(result.report.wiped.joined(separator: ", "))")
                let all = Self.files(under: clientHome)
                let ofUser = all.filter { $0.split(separator: "/").contains("demo") }
                let items = try global.keychain.itemIDs(accessGroup: .app).count + global.keychain.itemIDs(accessGroup: .shared).count
                step("Left of the user on this device: \(ofUser.isEmpty ? "no files" : ofUser.joined(separator: ", ")); keychain items: \(items); has MainKey: \(try keymaker.hasMainKey())")
                detail("(\(all.count) shared, user-independent files remain: \(Set(all.map { URL(fileURLWithPath: $0).lastPathComponent }).sorted().joined(separator: ", ")))")
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
            step("Server stopped. Demo took \(started.duration(to: .now).formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1))))")
        }
    }

    static func failure(_ body: () throws -> Void) -> String {
        do { try body(); return "(no error)" } catch { return String(describing: error) }
    }

    static func files(under url: URL) -> [String] {
        var found: [String] = []
        let walker = FileManager.default.enumerator(at: url, includingPropertiesForKeys: [.isRegularFileKey])
        while let item = walker?.nextObject() as? URL {
            if (try? item.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true {
                found.append(String(item.path.dropFirst(url.path.count)))
            }
        }
        return found
    }
}
