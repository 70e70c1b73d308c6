import ArgumentParser
import Foundation
import Keychain
import Keymaker
import RampartCore

/// `rampart demo`: the main job, run end to end in a throwaway home folder.
///
/// Today it walks the MainKey's life cycle as a user would meet it: login creates the key,
/// a PIN protects it, the app locks, a wrong PIN is refused with the attempts left, the right
/// PIN unlocks, the status is shown, and logout erases everything.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run Rampart's main job end to end in a throwaway home folder.")

    @Option(help: "Keep the demo's home folder here instead of a temporary one.") var home: String?

    func run() async throws {
        try await reportingErrors {
            ProcessHardening.disableCoreDumps()
            let folder = home.map { URL(fileURLWithPath: $0) }
                ?? FileManager.default.temporaryDirectory.appendingPathComponent("rampart-demo-\(UUID().uuidString)")
            defer { if home == nil { try? FileManager.default.removeItem(at: folder) } }
            try PrivateFiles.ensurePrivateDirectory(folder)
            let global = GlobalContainer(environment: RampartEnvironment(homeDirectory: folder))
            let user = UserContainer(userID: "demo", global: global)
            let keymaker = user.keymaker
            let step = { (text: String) in print("==> \(text)") }

            step("Home folder \(folder.path) (keychain backend: \(global.keychain.backendName))")
            let key = try keymaker.createMainKey()
            step("Login: created MainKey \(key.fingerprint) — protector: none")
            let pin = SecretBytes(copying: Array("246810".utf8))
            let started = ContinuousClock.now
            try keymaker.activate(.pin, credential: .pin(pin))
            step("Protected with a PIN (scrypt calibrated to ~250 ms; took \(ContinuousClock.now - started)); the clear copy is gone: protectors = \(try keymaker.activeProtectors().map(\.rawValue))")
            let sealed = try key.derivedKey(for: KeyPurpose("demo.note")).withSymmetricKey { sub in
                try AESGCMDemo.seal("meeting notes: the launch is on Tuesday", key: sub)
            }
            step("Sealed a note with a MainKey sub-key (\(sealed.count) bytes of ciphertext)")
            keymaker.lock()
            step("Locked: the MainKey and its sub-keys are zeroized (sub-key wiped: \(key.isWiped))")
            do {
                try keymaker.unlock(.pin(SecretBytes(copying: Array("000000".utf8))))
            } catch {
                step("Wrong PIN refused: \(error)")
            }
            try keymaker.unlock(.pin(pin))
            let reopened = try keymaker.currentMainKey()
            let note = try reopened.derivedKey(for: KeyPurpose("demo.note")).withSymmetricKey { try AESGCMDemo.open(sealed, key: $0) }
            step("Unlocked with the right PIN (key \(reopened.fingerprint)); the note reads: \"\(note)\"")
            let status = try keymaker.status()
            step("Status: unlocked=\(status.unlocked) protectors=\(status.activeProtectors.map(\.rawValue)) failedPINs=\(status.failedAttempts)/\(status.maxFailedAttempts) autolock=\(status.autolock)")
            let report = keymaker.logout()
            step("Logout: wiped \(report.wiped.joined(separator: ", ")); keychain items left for demo: \(try global.keychain.itemIDs(accessGroup: .app).filter { $0.service.hasSuffix(".demo") }.count)")
        }
    }
}

import Crypto

/// A tiny sealed note for the demo (AES-GCM with a fixed associated data).
enum AESGCMDemo {
    static func seal(_ text: String, key: SymmetricKey) throws -> Data {
        try AES.GCM.seal(Data(text.utf8), using: key, authenticating: Data("demo.note".utf8)).combined!
    }
    static func open(_ data: Data, key: SymmetricKey) throws -> String {
        String(decoding: try AES.GCM.open(AES.GCM.SealedBox(combined: data), using: key, authenticating: Data("demo.note".utf8)), as: UTF8.self)
    }
}
