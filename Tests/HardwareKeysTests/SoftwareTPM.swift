import Foundation
import HardwareKeys
import Keychain
import Keymaker
import RampartCore
import RampartTestSupport
import Testing

let swtpmInstalled = SoftwareTPM.isInstalled
let noSwtpmMessage: Comment = "swtpm is not installed (apt-get install swtpm swtpm-tools, see scripts/deps/hardwarekeys.apt): the TPM tests cannot run"

/// The TPM most tests share: `RAMPART_TPM_TCTI` when set (exported by
/// `scripts/services/swtpm.sh`, which scripts/test.sh sources), else a swtpm this test process
/// starts itself on a free loopback port pair (stopped when the process exits).
func sharedTPM() throws -> TPMConfiguration {
    try SharedSoftwareTPM.instance.configuration()
}

private final class SharedSoftwareTPM: @unchecked Sendable {
    static let instance = SharedSoftwareTPM()
    private let lock = NSLock()
    private var started: SoftwareTPM?
    private var failure: (any Error)?

    func configuration() throws -> TPMConfiguration {
        let environment = ProcessInfo.processInfo.environment[TPMConfiguration.environmentVariable] ?? ""
        if !environment.trimmingCharacters(in: .whitespaces).isEmpty {
            return TPMConfiguration(tcti: environment)
        }
        lock.lock()
        defer { lock.unlock() }
        if let started { return started.configuration }
        if let failure { throw failure }
        do {
            let tpm = try privateSoftwareTPM()
            started = tpm
            SoftwareTPM.stopAtExit(tpm)
            return tpm.configuration
        } catch {
            failure = error
            throw error
        }
    }
}

/// A private software TPM (its own swtpm process and state), for tests that need a second
/// machine or change the dictionary-attack settings; ready once it answers a TPM command.
func privateSoftwareTPM() throws -> SoftwareTPM {
    try SoftwareTPM(isReady: { tcti in
        (try? TPMDevice(configuration: TPMConfiguration(tcti: tcti)).dictionaryAttackStatus()) != nil
    })
}

extension SoftwareTPM {
    var configuration: TPMConfiguration { TPMConfiguration(tcti: tcti) }
}

struct KeymakerDependencies: Keymaker.Dependencies {
    var keychain: any Keychain = InMemoryKeychain()
    var clock: any RampartClock = ManualClock()
    var wipeRegistry = WipeRegistry()
}

func pin(_ text: String) -> SecretBytes { SecretBytes(copying: Array(text.utf8)) }
func keyBytes(_ key: MainKey) throws -> [UInt8] { try key.withUnsafeKeyBytes { Array($0) } }
