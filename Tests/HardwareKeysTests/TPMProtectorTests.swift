import Foundation
import HardwareKeys
import Keychain
import Keymaker
import RampartCore
import RampartTestSupport
import Testing

@Suite("TPM protector against swtpm", .enabled(if: swtpmInstalled, noSwtpmMessage))
struct TPMProtectorTests {
    let tpm: TPMConfiguration

    init() throws {
        tpm = try sharedTPM()
    }

    @Test func hardwareEnvelopeRoundTripsOnTheSameTPM() throws {
        let protector = TPMProtector(kind: .hardware, configuration: tpm)
        let key = MainKey.generate()
        let envelope = try protector.wrap(key, for: "alice", credential: .none)
        #expect(envelope.kind == .hardware)
        // Through the stored form, as the keychain would hold it.
        let stored = try WrappedKeyEnvelope.parse(envelope.serialized(), expectedUser: "alice")
        let opened = try protector.unwrap(stored, credential: .none)
        #expect(try keyBytes(opened) == keyBytes(key))
        // The MainKey is not in the envelope in clear.
        let raw = try keyBytes(key)
        let stored2 = [UInt8](envelope.serialized())
        #expect(!(0...(stored2.count - raw.count)).contains { Array(stored2[$0..<($0 + raw.count)]) == raw })
    }

    @Test func hardwarePINEnvelopeOpensOnlyWithThePIN() throws {
        let protector = TPMProtector(kind: .hardwarePIN, configuration: tpm)
        let key = MainKey.generate()
        let envelope = try protector.wrap(key, for: "bob", credential: .pin(pin("482916")))
        #expect(try keyBytes(protector.unwrap(envelope, credential: .pin(pin("482916")))) == keyBytes(key))
        #expect(throws: ProtectorUnwrapFailure.wrongCredential) {
            try protector.unwrap(envelope, credential: .none)
        }
    }

    @Test func tamperedCiphertextIsRejected() throws {
        let protector = TPMProtector(kind: .hardware, configuration: tpm)
        var envelope = try protector.wrap(MainKey.generate(), for: "carol", credential: .none)
        envelope.ciphertext[envelope.ciphertext.startIndex + 3] ^= 0x01
        // serialized() recomputes the checksum: only the AEAD can notice.
        let stored = try WrappedKeyEnvelope.parse(envelope.serialized())
        #expect(throws: HardwareKeysError.self) { try protector.unwrap(stored, credential: .none) }
        do { _ = try protector.unwrap(stored, credential: .none) } catch let error as HardwareKeysError {
            #expect(error.code == "hardware.envelopeTampered")
        }
    }

    @Test func tamperedHeaderUserIsRejected() throws {
        let protector = TPMProtector(kind: .hardware, configuration: tpm)
        var envelope = try protector.wrap(MainKey.generate(), for: "carol", credential: .none)
        envelope.userID = "mallory"
        #expect(throws: HardwareKeysError.envelopeTampered("AES-GCM authentication failed")) {
            try protector.unwrap(envelope, credential: .none)
        }
    }

    @Test func tamperedSealedObjectIsRefusedByTheTPM() throws {
        let protector = TPMProtector(kind: .hardware, configuration: tpm)
        var envelope = try protector.wrap(MainKey.generate(), for: "dave", credential: .none)
        var parameters = try HardwareEnvelopeParameters.decode(envelope.parameters)
        // Flip a byte deep in the TPM2B_PRIVATE (the encrypted sensitive area).
        parameters.blob2[parameters.blob2.startIndex + parameters.blob2.count - 5] ^= 0x40
        envelope.parameters = parameters.encoded
        do {
            _ = try protector.unwrap(envelope, credential: .none)
            Issue.record("a modified sealed object was accepted")
        } catch let error as HardwareKeysError {
            #expect(error.code == "hardware.sealedObjectFromAnotherTPM", "\(error)")
        }
    }

    @Test func garbageParametersAreATypedError() throws {
        let protector = TPMProtector(kind: .hardware, configuration: tpm)
        var envelope = try protector.wrap(MainKey.generate(), for: "erin", credential: .none)
        envelope.parameters = Data([1, 1, 0, 0, 3, 1, 2, 3, 0, 1, 9])
        #expect(throws: HardwareKeysError.corruptParameters("TPM2B_PUBLIC does not decode")) {
            try protector.unwrap(envelope, credential: .none)
        }
        envelope.parameters = Data([7])
        #expect(throws: HardwareKeysError.self) { try protector.unwrap(envelope, credential: .none) }
    }

    @Test func envelopeFromAnotherTPMIsRefused() throws {
        let other = try privateSoftwareTPM()
        defer { other.remove() }
        let key = MainKey.generate()
        // Made on the shared TPM, copied (keychain and all) to a machine with another TPM.
        let envelope = try TPMProtector(kind: .hardware, configuration: tpm).wrap(key, for: "frank", credential: .none)
        #expect(throws: HardwareKeysError.self) {
            try TPMProtector(kind: .hardware, configuration: other.configuration).unwrap(envelope, credential: .none)
        }
        do {
            _ = try TPMProtector(kind: .hardware, configuration: other.configuration).unwrap(envelope, credential: .none)
        } catch let error as HardwareKeysError {
            #expect(error.code == "hardware.sealedObjectFromAnotherTPM", "\(error)")
        }
        // And the other way round with a PIN envelope: the right PIN does not help elsewhere.
        let pinned = try TPMProtector(kind: .hardwarePIN, configuration: other.configuration)
            .wrap(key, for: "frank", credential: .pin(pin("1234")))
        #expect(throws: HardwareKeysError.self) {
            try TPMProtector(kind: .hardwarePIN, configuration: tpm).unwrap(pinned, credential: .pin(pin("1234")))
        }
    }

    @Test func keymakerLocksAndUnlocksThroughTheTPM() throws {
        let deps = KeymakerDependencies()
        let protectors: [any MainKeyProtector] = [NoneProtector(), PINProtector(strength: .fixed(logN: 15))]
            + TPMProtector.all(configuration: tpm)
        let keymaker = Keymaker(userID: "u1", dependencies: deps,
                                configuration: .init(protectors: protectors, autolock: .never))
        let original = try keyBytes(keymaker.createMainKey())
        try keymaker.activate(.hardware)
        #expect(try keymaker.activeProtectors() == [.hardware], "the clear envelope is gone")
        keymaker.lock()
        #expect(throws: LockedError.self) { try keymaker.currentMainKey() }
        try keymaker.unlock(.none)
        #expect(try keyBytes(keymaker.currentMainKey()) == original)

        // Hardware + PIN: plain hardware goes with it (a copy without the PIN would open the key
        // without the PIN), and no data is lost.
        #expect(try keymaker.activate(.hardwarePIN, credential: .pin(pin("7391"))) == [.hardware])
        #expect(try keymaker.activeProtectors() == [.hardwarePIN])
        keymaker.lock()
        #expect(throws: KeymakerError.pinRequired) { try keymaker.unlock(.none) }
        // A second process (a fresh Keymaker over the same keychain) unlocks with the PIN.
        let second = Keymaker(userID: "u1", dependencies: deps, configuration: .init(protectors: protectors, autolock: .never))
        try second.unlock(.pin(pin("7391")))
        #expect(try keyBytes(second.currentMainKey()) == original)
    }
}

/// Runs everywhere: no swtpm needed.
@Suite("No TPM")
struct NoTPMTests {
    @Test func noTPMIsReportedClearly() throws {
        let nowhere = TPMConfiguration.fromEnvironment([:], fileExists: { _ in false })
        #expect(nowhere.tcti == nil)
        #expect(TPMProtector.all(configuration: nowhere).isEmpty)
        let protector = TPMProtector(kind: .hardware, configuration: nowhere)
        #expect(!protector.availability().isAvailable)
        #expect(throws: HardwareKeysError.self) { try protector.wrap(MainKey.generate(), for: "g", credential: .none) }
        // A TCTI pointing at nothing: tctiUnavailable, not a crash.
        let dead = TPMProtector(kind: .hardware, configuration: TPMConfiguration(tcti: "swtpm:host=127.0.0.1,port=1"))
        #expect(!dead.availability().isAvailable)
        do {
            _ = try dead.wrap(MainKey.generate(), for: "g", credential: .none)
            Issue.record("wrap succeeded without a TPM")
        } catch let error as HardwareKeysError {
            #expect(error.code == "hardware.tctiUnavailable", "\(error)")
        }
    }
}
