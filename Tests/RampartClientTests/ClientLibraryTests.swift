import Crypto
import FileVault
import Foundation
import OpenPGP
import Keychain
import Keymaker
import PushCrypto
import MailSafety
import MailboxCrypto
import RampartAPI
@testable import RampartClient
import RampartCore
import SealedStore
import RampartTestSupport
import Testing

/// A throwaway home with a file keychain and a Keymaker whose PIN KDF is at the 2^15 floor.
final class TestHome {
    private let folder: TemporaryHome
    var url: URL { folder.url }
    let global: GlobalContainer
    let user: UserContainer
    let tokens: [ObserverToken]

    init(user name: String = "alice", clock: any RampartClock = SystemClock()) throws {
        folder = try TemporaryHome("client")
        let url = folder.url
        global = GlobalContainer(environment: RampartEnvironment(homeDirectory: url, clock: clock, settings: ["keychain.backend": "file", "pin.kdf.logN": "15"]))
        user = UserContainer(userID: try UserID(validating: name), global: global)
        tokens = [global.wipeRegistry.register(SealedStoreWipe(files: StoreFiles(environment: global.environment))),
                  global.wipeRegistry.register(ClientFilesWipe(files: ClientFiles(environment: global.environment))),
                  global.wipeRegistry.register(FileVaultWipe(environment: global.environment))]
    }

    var account: ClientAccount { ClientAccount(dependencies: user, environment: global.environment) }

    /// Every regular file under the home folder, relative paths.
    func files() -> [String] { folder.regularFiles() }

    /// Every byte of every file under the home folder, concatenated.
    func allBytes() -> Data { folder.allBytes() }
}

func newKey() throws -> PGPPrivateKey { try PGPPrivateKey.generate(name: "Alice Example", address: "alice@rampart.test") }

func sampleSession() -> SessionRecord {
    SessionRecord(serverUserID: "u-123", username: "alice", displayName: "Alice Example", addresses: ["alice@rampart.test"],
                  endpoint: ServerEndpoint(url: URL(string: "https://localhost:4443")!, pins: ["a", "b"]),
                  sessionID: "s-1", accessToken: "ACCESS-TOKEN-7f3a9c", refreshToken: "REFRESH-TOKEN-51be02", accessTokenExpiry: 1_900_000_000)
}

@Suite("Session vault")
struct SessionVaultTests {
    @Test func sessionAndPrivateKeyRoundTripUnderTheMainKey() throws {
        let home = try TestHome()
        let keymaker = home.user.keymaker
        let key = try keymaker.createMainKey()
        let vault = home.account.vault
        let mailbox = try newKey()
        try vault.saveSession(sampleSession(), with: key)
        try vault.saveMailboxKey(mailbox, with: key)
        #expect(try vault.session(with: key) == sampleSession())
        let reopened = try vault.mailboxKey(with: key)
        #expect(reopened.fingerprint == mailbox.fingerprint)
        // The reopened key still signs and decrypts.
        let sealed = try MailPart.seal(Data("x".utf8), to: [mailbox.publicKey], signedBy: reopened, messageID: "m", part: "body")
        #expect(try MailPart.open(sealed, with: [reopened], verifyingWith: [mailbox.publicKey], messageID: "m", part: "body").signature
                    == .verified(mailbox.fingerprint))
    }

    @Test func tokensAndUsernameNeverReachTheDiskInClear() throws {
        let home = try TestHome()
        let keymaker = home.user.keymaker
        let key = try keymaker.createMainKey()
        try keymaker.activate(.pin, credential: .pin(SecretBytes(copying: Array("864213".utf8))))
        try home.account.vault.saveSession(sampleSession(), with: key)
        let disk = home.allBytes()
        for secret in ["ACCESS-TOKEN-7f3a9c", "REFRESH-TOKEN-51be02", "alice@rampart.test", "Alice Example"] {
            #expect(disk.range(of: Data(secret.utf8)) == nil, "\(secret) found in clear on disk")
        }
    }

    @Test func anEnvelopeCopiedToAnotherUserDoesNotOpen() throws {
        let home = try TestHome()
        let key = try home.user.keymaker.createMainKey()
        let alice = home.account.vault
        try alice.saveSession(sampleSession(), with: key)
        let bob = SessionVault(keychain: alice.keychain, userID: "bob")
        let stolen = try alice.keychain.read(.user("alice", SessionVault.sessionItem))
        try bob.keychain.set(stolen, for: .user("bob", SessionVault.sessionItem))
        #expect(throws: ClientError.tampered("The stored client.session")) { try bob.session(with: key) }
    }

    @Test func anotherMainKeyCannotOpenTheSession() throws {
        let home = try TestHome()
        let key = try home.user.keymaker.createMainKey()
        try home.account.vault.saveSession(sampleSession(), with: key)
        #expect(throws: ClientError.self) { try home.account.vault.session(with: MainKey.generate()) }
    }
}

@Suite("Drive node manifest")
struct DriveManifestTests {
    static func manifest(size: Int64 = 10) -> DriveNodeManifest {
        DriveNodeManifest(name: "a.txt", mimeType: "text/plain", key: Data(repeating: 1, count: 32).base64EncodedString(),
                          fileId: "f1", size: size, blockSize: 1 << 20, blocksDigest: String(repeating: "ab", count: 32))
    }

    @Test func aManifestOpensOnlyForItsUserNodeAndRevision() throws {
        let key = try newKey()
        let sealed = try Self.manifest().sealed(user: "u1", nodeID: "n1", revisionID: "r1", key: key)
        #expect(try DriveNodeManifest.open(sealed, user: "u1", key: key, nodeID: "n1", revisionID: "r1").name == "a.txt")
        // Moved to another user, node or revision: refused.
        #expect(throws: ClientError.self) { try DriveNodeManifest.open(sealed, user: "u2", key: key, nodeID: "n1", revisionID: "r1") }
        #expect(throws: ClientError.self) { try DriveNodeManifest.open(sealed, user: "u1", key: key, nodeID: "n2", revisionID: "r1") }
        #expect(throws: ClientError.self) { try DriveNodeManifest.open(sealed, user: "u1", key: key, nodeID: "n1", revisionID: "r2") }
        var flipped = sealed
        flipped[flipped.count - 3] ^= 1
        #expect(throws: ClientError.self) { try DriveNodeManifest.open(flipped, user: "u1", key: key, nodeID: "n1", revisionID: "r1") }
    }

    /// The server holds the public key, so it can encrypt metadata of its own to it; the
    /// detached signature by the private key is what refuses it.
    @Test func aManifestNotSignedByTheUsersKeyIsRefused() throws {
        let key = try newKey()
        let forger = try newKey()
        var forged = try Self.manifest().sealed(user: "u1", nodeID: "n1", revisionID: "r1", key: forger)
        #expect(throws: ClientError.self) { try DriveNodeManifest.open(forged, user: "u1", key: key, nodeID: "n1", revisionID: "r1") }
        // Encrypted to the user's key but signed by another: refused too.
        let opened = try MailPart.open(forged, with: [forger], messageID: DriveNodeManifest.binding("n1"), part: DriveNodeManifest.part)
        forged = try MailPart.seal(opened.data, to: [key.publicKey], signedBy: nil, messageID: DriveNodeManifest.binding("n1"),
                                   part: DriveNodeManifest.part)
        #expect(throws: ClientError.self) { try DriveNodeManifest.open(forged, user: "u1", key: key, nodeID: "n1", revisionID: "r1") }
    }

    @Test func aManifestWithoutAValidBlockDigestIsRefused() throws {
        #expect(try Self.manifest(size: 3 << 20).format(user: "u").blockCount == 3)
        var manifest = Self.manifest()
        manifest.blocksDigest = "ab"
        #expect(throws: ClientError.self) { try manifest.format(user: "u") }
        manifest.blocksDigest = String(repeating: "zz", count: 32)
        #expect(throws: ClientError.self) { try manifest.format(user: "u") }
    }
}

@Suite("Reading")
struct ReadingTests {
    static let newsletter = """
    <html><head><style>body{background:url(https://cdn.example.net/bg.png)}</style></head><body>
    <h1>Weekly \u{1B}[31mnews</h1><p>Hello <b>reader</b>, see <a href="https://example.net/a?utm_source=x">our site</a>.</p>
    <img src="https://cdn.example.net/hero.png" alt="Hero">
    <img src="https://pixel.mailchimp.com/open.gif?u=1" width="1" height="1">
    <script>alert(1)</script><img src="cid:logo@x" alt="Logo">
    <ul><li>one</li><li>two</li></ul></body></html>
    """

    func message(_ html: String) -> MailMessage {
        MailMessage(id: "m1", conversationID: "c1", time: 1_800_000_000, size: 10, labelIDs: ["inbox"], subject: "Weekly",
                    sender: MailAddress(name: "News", address: "news@example.net"), recipients: [], body: html)
    }

    @Test func remoteImagesAndTrackersAreBlockedByDefaultAndReported() throws {
        let logo = EmbeddedAttachment(mimeType: "image/png", bytes: Data([0x89, 0x50, 0x4E, 0x47]))
        let rendered = try MessageReader.render(message: message(Self.newsletter), attachments: [], embedded: ["logo@x": logo], remote: .block)
        #expect(rendered.trackerCount >= 1)
        #expect(rendered.blockedImageCount >= 2)
        #expect(rendered.blockedSummary.hasPrefix("Blocked: \(rendered.trackerCount) tracker"))
        #expect(!rendered.document.contains(" src=\"https://cdn.example.net/hero.png\""))
        #expect(!rendered.document.contains("<script"))
        #expect(rendered.document.contains("default-src 'none'"))
        #expect(rendered.policy == ContentSecurityPolicy.viewer(.embeddedImagesOnly))
        #expect(rendered.text.contains("[embedded image: Logo]"))
        #expect(rendered.text.contains("• one"))
        #expect(rendered.text.contains("<https://example.net/a>"))
    }

    @Test func loadingRemoteContentKeepsImagesButStillBlocksTrackers() throws {
        let rendered = try MessageReader.render(message: message(Self.newsletter), attachments: [], embedded: [:], remote: .allowThisMessage)
        #expect(rendered.document.contains(" src=\"https://cdn.example.net/hero.png\""))
        #expect(rendered.trackerCount >= 1)
        #expect(!rendered.document.contains(" src=\"https://pixel.mailchimp.com/open.gif?u=1\""))
        #expect(rendered.policy == ContentSecurityPolicy.viewer(.remoteAllowed))
    }

    @Test func terminalTextCarriesNoControlCharacters() throws {
        let rendered = try MessageReader.render(message: message(Self.newsletter), attachments: [], embedded: [:], remote: .block)
        #expect(!rendered.text.unicodeScalars.contains { $0.value == 0x1B })
        #expect(rendered.text.contains("Weekly [31mnews"))
        #expect(!rendered.text.contains("alert(1)"))
    }
}

@Suite("Messages from the server")
struct MessageOpeningTests {
    func response(id: String, keys: PGPPrivateKey, sealedFor messageID: String) throws -> MessageResponse {
        let content = MessageContent(subject: "Hi", sender: Correspondent(name: "Bob", address: "bob@rampart.test"),
                                     to: [Correspondent(name: "Alice", address: "alice@rampart.test")], html: "<p>hello</p>")
        let sealed = try MailPart.seal(try JSONEncoder().encode(content), to: [keys.publicKey], signedBy: nil, messageID: messageID, part: SealedPartName.body)
        return MessageResponse(id: id, conversationId: "c", labelIds: ["inbox"], time: 1_800_000_000, size: 12, unread: true,
                               sealedBody: sealed.base64EncodedString(),
                               attachments: [AttachmentInfo(id: "a1", name: "logo.png", mimeType: "image/png", size: 4, contentId: "logo@x")])
    }

    @Test func aSealedBodyOpensIntoStoreRecords() throws {
        let keys = try newKey()
        let (message, attachments) = try MailSync.open(try response(id: "m1", keys: keys, sealedFor: "m1"), keys: keys)
        #expect(message.subject == "Hi" && message.sender.address == "bob@rampart.test" && message.flags.contains(.unread))
        #expect(message.flags.contains(.hasAttachments))
        #expect(AttachmentVault.contentID(of: attachments[0]) == "logo@x")
    }

    @Test func aBodyMovedToAnotherMessageIsRejected() throws {
        let keys = try newKey()
        #expect(throws: MailboxCryptoError.self) {
            try MailSync.open(try response(id: "m2", keys: keys, sealedFor: "m1"), keys: keys)
        }
    }
}

@Suite("Cleartext leases")
struct LeaseTests {
    @Test func theCleartextExistsOnlyWhileTheLeaseIsOpen() throws {
        let home = try TestHome()
        try home.user.keymaker.createMainKey()  // previews live in the file vault: only while unlocked
        let account = home.account
        let lease = try account.leaseDocument("<p>secret preview</p>", name: "../../etc/passwd")
        let url = try lease.url()
        #expect(url.lastPathComponent == "passwd")
        #expect(url.path.hasPrefix(account.fileVaultRoot.path))
        #expect(try String(contentsOf: url, encoding: .utf8) == "<p>secret preview</p>")
        #expect(TemporaryHome.mode(of: url) == 0o600)
        lease.end()
        #expect(TemporaryHome.isGoneWithItsFolder(url))
    }

    @Test func logoutWipeRemovesTheClientFolder() throws {
        let home = try TestHome()
        let keymaker = home.user.keymaker
        try keymaker.createMainKey()
        let lease = try home.account.leaseDocument("x")
        #expect(FileManager.default.fileExists(atPath: lease.path))
        let report = keymaker.logout()
        #expect(report.isComplete)
        #expect(report.wiped.contains("client-files"))
        #expect(home.files().filter { $0.contains("alice") }.isEmpty)
    }
}

@Suite("Autolock")
struct AutolockTests {
    @Test func afterAutolockTheSessionTheKeyAndTheStoreAreUnreadableUntilThePIN() throws {
        let clock = ManualClock()
        let home = try TestHome(clock: clock)
        let keymaker = home.user.keymaker
        let key = try keymaker.createMainKey()
        let account = home.account
        try account.vault.saveSession(sampleSession(), with: key)
        try account.vault.saveMailboxKey(try newKey(), with: key)
        try account.store().mail.save(label: MailLabel(id: "inbox", kind: 0, sortOrder: 0, name: "Inbox", color: ""))
        let pin = SecretBytes(copying: Array("864213".utf8))
        try keymaker.activate(.pin, credential: .pin(pin))
        try keymaker.setAutolockPolicy(.after(minutes: 1))
        clock.advance(by: 30)
        #expect(keymaker.checkAutolock() == nil)
        #expect(try account.session().username == "alice")
        clock.advance(by: 31)
        #expect(keymaker.checkAutolock() != nil)
        #expect(key.isWiped)
        #expect(throws: LockedError.self) { try account.session() }
        #expect(throws: LockedError.self) { try account.mailboxKey() }
        #expect(throws: SealedStoreError.self) { try account.store().mail.labels() }
        try keymaker.unlock(.pin(pin))
        #expect(try account.store().mail.labels().map(\.name) == ["Inbox"])
    }
}

@Suite("Push process")
struct PushInboxTests {
    @Test func pushesOpenWithTheSharedGroupAloneAreDeletedAndReplaysAreRefused() throws {
        let home = try TestHome(user: "demo")
        let keychain = home.global.keychain
        let serverUser: UserID = "u0123abcd"
        try PushKeysWipe.link("demo", to: serverUser, in: keychain)
        let registration = try PushKeyring(keychain: keychain, clock: SystemClock(), userID: serverUser).subscribe(sessionID: try PushSessionID("s42"))
        let folder = home.url.appendingPathComponent("push/s42", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let body = Data(try WebPushSender.encrypt(PushNotification(sender: "Alice", subject: "Lunch?", messageId: "m9", userId: serverUser), to: registration))
        try body.write(to: folder.appendingPathComponent("1.push"))

        let inbox = PushInbox(directory: folder.deletingLastPathComponent(), keychain: keychain)
        let first = inbox.drain(only: "demo")
        #expect(first.deliveries.map(\.notification.subject) == ["Lunch?"] && first.failures == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
        #expect(inbox.drain(only: "bob").deliveries.isEmpty)

        try body.write(to: folder.appendingPathComponent("2.push"))   // the same push again
        let replay = inbox.drain(only: "demo")
        #expect(replay.deliveries.isEmpty && replay.failures == 1)

        // Logout's wipe deletes the push keys (found through the link) without the MainKey.
        try PushKeysWipe(keychain: keychain).wipe(user: "demo")
        #expect(try keychain.itemIDs(accessGroup: .shared).isEmpty)
    }
}
