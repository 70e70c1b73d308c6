import Foundation
import Keychain
import Keymaker
import RampartCore
import SealedStore
import Testing

/// The attacker of the trust model's first rows: someone who copies the whole home folder —
/// file keychain and sealed database — off a device (a forensic tool, an app escaping its
/// sandbox, a stolen backup). Real components only: `FileKeychain`, the PIN protector with a
/// real (floor-strength) scrypt, the GRDB store.
@Suite("An attacker with a copy of the keychain and the data folder")
struct DeviceCopyTests {
    static let pin = "482913"
    static let marker = "QWZMARKER"

    /// A home folder like the CLI's, with the file keychain and a fast-but-floor PIN KDF.
    static func environment(_ home: URL) throws -> RampartEnvironment {
        try PrivateFiles.ensurePrivateDirectory(home)
        return RampartEnvironment(homeDirectory: home, settings: ["keychain.backend": "file", "pin.kdf.logN": "15"])
    }

    /// The victim's device: a MainKey protected by a PIN, 50 messages and an account in the
    /// sealed store, then locked. Returns the MainKey's raw bytes (the test's knowledge, not the
    /// attacker's) so the copy can be searched for them.
    static func victim(home: URL, user: UserID) throws -> [UInt8] {
        let global = GlobalContainer(environment: try environment(home))
        let container = UserContainer(userID: user, global: global)
        let registration = global.wipeRegistry.register(SealedStoreWipe(files: StoreFiles(environment: global.environment)))
        defer { registration.cancel() }
        let key = try container.keymaker.createMainKey()
        let raw = try key.withUnsafeKeyBytes { [UInt8]($0) }
        try container.keymaker.activate(.pin, credential: .pin(SecretBytes(copying: Array(pin.utf8))))
        let store = try container.sealedStore
        try store.mail.save(account: AccountRecord(id: "acct", username: "\(marker)user", displayName: "\(marker) Person", addresses: ["\(marker.lowercased())@example.org"]))
        try store.mail.insert(messages: (0..<50).map { number in
            MailMessage(id: "m\(number)", conversationID: "c\(number)", time: Int64(number), size: 10, labelIDs: ["inbox"],
                        subject: "\(marker)SUBJECT\(number)",
                        sender: MailAddress(name: "\(marker)SENDER", address: "sender@example.org"),
                        recipients: [MailAddress(address: "me@example.org")],
                        body: "\(marker)BODY\(number) the quarterly numbers")
        })
        container.keymaker.lock()
        store.close()
        return raw
    }

    /// Copies `source` to a fresh folder, as a forensic image would (same machine, so the
    /// keychain's device binding does not stop this attacker: only the PIN does).
    static func copy(_ source: URL) throws -> URL {
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-copy-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: source, to: target)
        return target
    }

    static func allFileBytes(under folder: URL) throws -> [(String, Data)] {
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])!
        var files: [(String, Data)] = []
        for case let url as URL in enumerator where (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true {
            files.append((url.path, try Data(contentsOf: url)))
        }
        return files
    }

    static func freshHome() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("rampart-victim-\(UUID().uuidString)")
    }

    @Test func withoutThePINTheCopyYieldsNoMessageNoNameAndNoKey() throws {
        let home = Self.freshHome()
        let user: UserID = "victim"
        let mainKey = try Self.victim(home: home, user: user)
        let stolen = try Self.copy(home)
        defer { try? FileManager.default.removeItem(at: stolen); try? FileManager.default.removeItem(at: home) }

        // 1. Raw bytes: no marker in any encoding, and the MainKey's 32 bytes appear nowhere.
        let files = try Self.allFileBytes(under: stolen)
        #expect(files.count >= 3, "the copy should hold the keychain items and the database")
        let patterns = [Data(Self.marker.utf8), Self.marker.data(using: .utf16LittleEndian)!, Self.marker.data(using: .utf16BigEndian)!]
        for (path, bytes) in files {
            for pattern in patterns { #expect(bytes.range(of: pattern) == nil, "plaintext marker in \(path)") }
            #expect(bytes.range(of: Data(mainKey)) == nil, "the clear MainKey in \(path)")
        }

        // 2. Through the real components: no protector opens without the PIN, the store stays shut.
        let global = GlobalContainer(environment: try Self.environment(stolen))
        let container = UserContainer(userID: user, global: global)
        #expect(try container.keymaker.activeProtectors() == [.pin])
        #expect(throws: KeymakerError.pinRequired) { try container.keymaker.unlock(.none) }
        #expect(throws: (any Error).self) { _ = try container.sealedStore.mail.message(id: "m1") }

        // 3. Guessing: each wrong PIN costs a counted attempt; the tenth wipes the copy's data.
        for attempt in 1...9 {
            #expect(throws: KeymakerError.wrongPIN(attemptsLeft: 10 - attempt)) {
                try container.keymaker.unlock(.pin(SecretBytes(copying: Array(String(format: "%06d", attempt).utf8))))
            }
        }
        let registration = global.wipeRegistry.register(SealedStoreWipe(files: StoreFiles(environment: global.environment)))
        defer { registration.cancel() }
        #expect(throws: KeymakerError.wipedAfterTooManyFailedAttempts) {
            try container.keymaker.unlock(.pin(SecretBytes(copying: Array("000010".utf8))))
        }
        #expect(try container.keymaker.activeProtectors().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: StoreFiles(environment: global.environment).databaseURL(for: user).path))
        // Even the right PIN is useless now.
        #expect(throws: KeymakerError.noMainKey) {
            try container.keymaker.unlock(.pin(SecretBytes(copying: Array(Self.pin.utf8))))
        }
    }

    @Test func withThePINTheCopyOpensEverything() throws {
        let home = Self.freshHome()
        let user: UserID = "victim"
        _ = try Self.victim(home: home, user: user)
        let stolen = try Self.copy(home)
        defer { try? FileManager.default.removeItem(at: stolen); try? FileManager.default.removeItem(at: home) }

        let container = UserContainer(userID: user, global: GlobalContainer(environment: try Self.environment(stolen)))
        try container.keymaker.unlock(.pin(SecretBytes(copying: Array(Self.pin.utf8))))
        let store = try container.sealedStore
        defer { store.close() }
        let inbox = try store.mail.messages(label: "inbox", limit: 100)
        #expect(inbox.count == 50)
        #expect(try store.mail.message(id: "m7").body == "\(Self.marker)BODY7 the quarterly numbers")
        #expect(try store.mail.account(id: "acct").displayName == "\(Self.marker) Person")
    }
}
