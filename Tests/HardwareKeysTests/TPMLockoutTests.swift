import Foundation
import HardwareKeys
import Keychain
import Keymaker
import RampartCore
import RampartTestSupport
import Testing

/// Dictionary-attack lockout, each test on a private swtpm (they change the DA settings).
@Suite("TPM dictionary-attack lockout", .enabled(if: swtpmInstalled, noSwtpmMessage))
struct TPMLockoutTests {
    /// The parameters the tests set with TPM2_DictionaryAttackParameters: lockout after 3
    /// failures, one failure forgiven every 1000 s, lockout-authorization retry after 1000 s.
    static let parameters = TPMDictionaryAttackParameters(maxTries: 3, recoveryTime: 1000, lockoutRecovery: 1000)

    /// Unwraps with the right PIN and checks the TPM refuses it because of the lockout.
    func expectLockedOut(_ protector: TPMProtector, _ envelope: WrappedKeyEnvelope, _ when: String) {
        do {
            _ = try protector.unwrap(envelope, credential: .pin(pin("2580")))
            Issue.record("the right PIN opened the envelope during a TPM lockout (\(when))")
        } catch ProtectorUnwrapFailure.hardwareLockedOut(let detail) {
            #expect(detail.contains("IN LOCKOUT"), "\(when): \(detail)")
        } catch {
            Issue.record("expected a TPM lockout (\(when)), got \(error)")
        }
    }

    @Test func wrongPINsAreCountedByTheTPMAndLockItOutAcrossRestarts() throws {
        let swtpm = try privateSoftwareTPM()
        defer { swtpm.remove() }
        let device = TPMDevice(configuration: swtpm.configuration)
        try device.setDictionaryAttackParameters(Self.parameters)
        #expect(try device.dictionaryAttackStatus().parameters == Self.parameters)
        #expect(try device.dictionaryAttackStatus().failedTries == 0)

        let protector = TPMProtector(kind: .hardwarePIN, configuration: swtpm.configuration)
        let key = MainKey.generate()
        let envelope = try protector.wrap(key, for: "u1", credential: .pin(pin("2580")))
        // The right PIN works before any failure.
        #expect(try keyBytes(protector.unwrap(envelope, credential: .pin(pin("2580")))) == keyBytes(key))

        for attempt in 1...3 {
            #expect(throws: ProtectorUnwrapFailure.wrongCredential) {
                try protector.unwrap(envelope, credential: .pin(pin("000\(attempt)")))
            }
            #expect(try device.dictionaryAttackStatus().failedTries == UInt32(attempt), "the TPM counted guess \(attempt)")
        }
        #expect(try device.dictionaryAttackStatus().inLockout)
        // Locked out: even the right PIN is refused, by the TPM itself.
        expectLockedOut(protector, envelope, "same connection settings")
        // A fresh protector and TPM connection (what a restarted process has): still refused.
        expectLockedOut(TPMProtector(kind: .hardwarePIN, configuration: swtpm.configuration), envelope, "new connection")

        // Restart the TPM (orderly stop, new swtpm process on the same state): still locked out.
        swtpm.stop()
        try swtpm.start()
        #expect(try TPMDevice(configuration: swtpm.configuration).dictionaryAttackStatus().inLockout)
        expectLockedOut(TPMProtector(kind: .hardwarePIN, configuration: swtpm.configuration), envelope, "after swtpm restart")

        // A power cut (SIGKILL, no orderly shutdown) does not clear it either.
        swtpm.stop(kill: true)
        try swtpm.start()
        let afterCut = try TPMDevice(configuration: swtpm.configuration).dictionaryAttackStatus()
        #expect(afterCut.inLockout, "\(afterCut)")
        #expect(afterCut.failedTries >= 3, "\(afterCut)")
        expectLockedOut(TPMProtector(kind: .hardwarePIN, configuration: swtpm.configuration), envelope, "after swtpm SIGKILL")

        // Only the lockout hierarchy (empty authorization on this fresh swtpm) ends it.
        try TPMDevice(configuration: swtpm.configuration).resetDictionaryAttackLockout()
        let restarted = TPMProtector(kind: .hardwarePIN, configuration: swtpm.configuration)
        #expect(try keyBytes(restarted.unwrap(envelope, credential: .pin(pin("2580")))) == keyBytes(key))
    }

    @Test func keymakerReportsHardwareLockoutWithoutSpendingAnAttempt() throws {
        let swtpm = try privateSoftwareTPM()
        defer { swtpm.remove() }
        try TPMDevice(configuration: swtpm.configuration).setDictionaryAttackParameters(Self.parameters)
        let protectors: [any MainKeyProtector] = [NoneProtector()] + TPMProtector.all(configuration: swtpm.configuration)
        let dependencies = KeymakerDependencies()
        let keymaker = Keymaker(userID: "u1", dependencies: dependencies,
                                configuration: .init(protectors: protectors, autolock: .never))
        _ = try keymaker.createMainKey()
        try keymaker.activate(.hardwarePIN, credential: .pin(pin("2580")))
        keymaker.lock()
        #expect(throws: KeymakerError.wrongPIN(attemptsLeft: 9)) { try keymaker.unlock(.pin(pin("1111"))) }
        #expect(throws: KeymakerError.wrongPIN(attemptsLeft: 8)) { try keymaker.unlock(.pin(pin("2222"))) }
        #expect(throws: KeymakerError.wrongPIN(attemptsLeft: 7)) { try keymaker.unlock(.pin(pin("3333"))) }
        // A second Keymaker over the same keychain (a restarted process) meets the lockout too.
        let restarted = Keymaker(userID: "u1", dependencies: dependencies,
                                 configuration: .init(protectors: protectors, autolock: .never))
        for candidate in [keymaker, restarted] {
            do {
                try candidate.unlock(.pin(pin("2580")))
                Issue.record("the right PIN worked during a TPM lockout")
            } catch KeymakerError.hardwareLockedOut(let detail) {
                #expect(detail.contains("IN LOCKOUT"), "\(detail)")
            }
        }
        // Refused attempts were not guesses: the Keymaker's own wipe counter did not move.
        #expect(try restarted.failedAttempts() == 3)
    }

    @Test func hardwareOnlyObjectIsExemptFromLockout() throws {
        let swtpm = try privateSoftwareTPM()
        defer { swtpm.remove() }
        let device = TPMDevice(configuration: swtpm.configuration)
        try device.setDictionaryAttackParameters(Self.parameters)
        let hardware = TPMProtector(kind: .hardware, configuration: swtpm.configuration)
        let key = MainKey.generate()
        let envelope = try hardware.wrap(key, for: "u1", credential: .none)
        let pinned = TPMProtector(kind: .hardwarePIN, configuration: swtpm.configuration)
        let pinEnvelope = try pinned.wrap(key, for: "u1", credential: .pin(pin("2580")))
        for guess in ["0001", "0002", "0003"] {
            #expect(throws: ProtectorUnwrapFailure.wrongCredential) { try pinned.unwrap(pinEnvelope, credential: .pin(pin(guess))) }
        }
        #expect(try device.dictionaryAttackStatus().inLockout)
        // The noDA sealed object of the *hardware* protector still opens: launch is not blocked.
        #expect(try keyBytes(hardware.unwrap(envelope, credential: .none)) == keyBytes(key))
    }
}

/// Hardware + PIN and the PIN protector never coexist: a PIN-only envelope would let a copied
/// disk be searched offline, around the TPM's lockout.
@Suite("Hardware + PIN without a PIN-only copy", .enabled(if: swtpmInstalled, noSwtpmMessage))
struct TPMFallbackTests {
    /// With hardware + PIN, no copy of the MainKey that the PIN alone opens may stay on disk:
    /// a 6-digit PIN falls to an offline search of such a copy, and the TPM's lockout would count
    /// nothing. Activating a hardware protector removes the PIN-only envelope; going back to
    /// PIN-only removes the hardware ones.
    @Test func noPINOnlyCopyStaysBesideTheHardware() throws {
        let swtpm = try privateSoftwareTPM()
        defer { swtpm.remove() }
        try TPMDevice(configuration: swtpm.configuration).setDictionaryAttackParameters(TPMLockoutTests.parameters)
        let dependencies = KeymakerDependencies()
        func keymaker(_ tpm: TPMConfiguration) -> Keymaker {
            let protectors: [any MainKeyProtector] = [NoneProtector(), PINProtector(strength: .fixed(logN: 15))]
                + SecureHardware.protectors(tpm: tpm)
            return Keymaker(userID: "u1", dependencies: dependencies, configuration: .init(protectors: protectors, autolock: .never))
        }
        let here = keymaker(swtpm.configuration)
        let original = try keyBytes(here.createMainKey())
        try here.activate(.pin, credential: .pin(pin("482913")))
        try here.activate(.hardwarePIN, credential: .pin(pin("482913")))
        #expect(try here.activeProtectors() == [.hardwarePIN])
        #expect(try dependencies.keychain.readIfPresent(Keymaker.envelopeItem("u1", .pin)) == nil,
                "a PIN-only envelope stayed beside the hardware + PIN one")
        here.lock()

        // The TPM is gone: the PIN alone opens nothing, and no attempt is spent.
        let noTPM = keymaker(TPMConfiguration(tcti: "swtpm:host=127.0.0.1,port=1"))
        #expect(throws: (any Error).self) { try noTPM.unlock(.pin(pin("482913"))) }
        #expect(throws: LockedError.self) { try noTPM.currentMainKey() }
        #expect(try noTPM.failedAttempts() == 0)

        // With the TPM, the same MainKey; hardware-only also replaces a PIN-only copy.
        try here.unlock(.pin(pin("482913")))
        #expect(try keyBytes(here.currentMainKey()) == original)
        try here.activate(.pin, credential: .pin(pin("482913")))
        #expect(try here.activeProtectors() == [.pin], "going back to PIN-only removes the hardware envelope")
        try here.activate(.hardware)
        #expect(try here.activeProtectors() == [.hardware])
    }
}
