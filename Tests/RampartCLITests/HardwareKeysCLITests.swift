import Foundation
import RampartTestSupport
import Testing

@Suite("rampart-dev key with a TPM (CLI, swtpm)",
       .enabled(if: SoftwareTPM.isInstalled, "swtpm is not installed (apt-get install swtpm swtpm-tools): TPM CLI tests cannot run"))
struct HardwareKeysCLITests {
    /// Every command is a new `rampart-dev` process: the TPM's lockout (3 failures; one forgiven per
    /// 1000 s) outlives the process that caused it, and a restart of the TPM.
    @Test func tpmLockoutOutlivesTheProcessAndTheTPMRestart() throws {
        let tpm = try TPMHome()
        defer { tpm.swtpm.remove() }
        var run = try tpm.dev(["key", "tpm-lockout", "--set", "3,1000,1000"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("0/3 failures"), "\(run.stdout)")
        run = try tpm.dev(["key", "init"])
        #expect(run.status == 0, "\(run.stderr)")
        run = try tpm.dev(["key", "protect", "--hardware", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 0, "\(run.stderr)")
        run = try tpm.dev(["key", "status"])
        #expect(run.stdout.contains("protectors:        hardwarePIN"), "\(run.stdout)")
        #expect(run.stdout.contains("secure hardware:   TPM 2.0"), "\(run.stdout)")
        run = try tpm.dev(["key", "unlock", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 0, "\(run.stderr)")

        for (index, guess) in ["1111", "2222", "3333"].enumerated() {
            run = try tpm.dev(["key", "unlock", "--pin-stdin"], stdin: "\(guess)\n")
            #expect(run.status == 4, "\(run.stderr)")
            #expect(run.stderr.contains("\(9 - index) attempts left"), "\(run.stderr)")
        }
        // A new process, the right PIN: the TPM refuses it.
        run = try tpm.dev(["key", "unlock", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 4)
        #expect(run.stderr.contains("dictionary-attack lockout"), "\(run.stderr)")
        #expect(run.stderr.contains("IN LOCKOUT, 3/3 failures"), "\(run.stderr)")

        // Power-cut the TPM and start it again on the same state: still locked out.
        tpm.swtpm.stop(kill: true)
        try tpm.swtpm.start()
        run = try tpm.dev(["key", "unlock", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 4)
        #expect(run.stderr.contains("IN LOCKOUT"), "\(run.stderr)")
        run = try tpm.dev(["key", "status"])
        #expect(run.stdout.contains("IN LOCKOUT"), "\(run.stdout)")

        // The lockout authorization ends it; the MainKey comes back unchanged.
        run = try tpm.dev(["key", "tpm-lockout", "--reset"])
        #expect(run.status == 0, "\(run.stderr)")
        run = try tpm.dev(["key", "unlock", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 0, "\(run.stderr)")
    }

    /// `protect --pin`, then `protect --hardware` with the PIN: the hardware + PIN envelope
    /// replaces the PIN-only one (which would let a copied disk be searched offline), so with the
    /// TPM gone the PIN alone opens nothing; going back to PIN-only keeps the same MainKey.
    @Test func hardwareProtectorReplacesThePINOnlyCopyWithoutDataLoss() throws {
        let tpm = try TPMHome()
        defer { tpm.swtpm.remove() }
        var run = try tpm.dev(["key", "init"])
        let fingerprint = run.stdout.split(separator: " ").dropFirst(2).first.map(String.init) ?? "?"
        run = try tpm.dev(["key", "protect", "--pin-stdin"], stdin: "482913\n")
        #expect(run.status == 0, "\(run.stderr)")
        run = try tpm.dev(["key", "protect", "--hardware", "--pin-stdin"], stdin: "482913\n482913\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("active protectors: hardwarePIN."), "\(run.stdout)")
        // TPM gone: the PIN alone opens nothing (a clear, typed message), and spends no attempt.
        run = try tpm.dev(["key", "unlock", "--pin-stdin"], stdin: "482913\n", tcti: "swtpm:host=127.0.0.1,port=1")
        #expect(run.status != 0)
        #expect(!run.stdout.contains(fingerprint), "\(run.stdout)")
        #expect(run.stderr.contains("cannot be reached"), "\(run.stderr)")
        // With the TPM: the same MainKey.
        run = try tpm.dev(["key", "unlock", "--pin-stdin"], stdin: "482913\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(fingerprint), "\(run.stdout)")
        // Back to PIN-only: the hardware envelope goes, the MainKey stays.
        run = try tpm.dev(["key", "protect", "--pin-stdin"], stdin: "482913\n482913\n")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("active protectors: pin."), "\(run.stdout)")
        run = try tpm.dev(["key", "unlock", "--pin-stdin"], stdin: "482913\n", tcti: "swtpm:host=127.0.0.1,port=1")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(fingerprint), "\(run.stdout)")
    }

    /// An attacker who puts back an older copy of the home folder resets the keychain's attempt
    /// counter, but not the TPM's: with hardware + PIN every guess is counted inside the TPM.
    @Test func restoringTheHomeFolderDoesNotResetTheTPMsCount() throws {
        let tpm = try TPMHome()
        defer { tpm.swtpm.remove() }
        let saved = try TemporaryHome("cli")
        var run = try tpm.dev(["key", "tpm-lockout", "--set", "3,1000,1000"])
        #expect(run.status == 0, "\(run.stderr)")
        run = try tpm.dev(["key", "init"])
        #expect(run.status == 0, "\(run.stderr)")
        run = try tpm.dev(["key", "protect", "--hardware", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 0, "\(run.stderr)")
        try FileManager.default.removeItem(at: saved.url)
        try FileManager.default.copyItem(at: tpm.home.url, to: saved.url)
        for guess in ["1111", "2222", "3333"] {
            run = try tpm.dev(["key", "unlock", "--pin-stdin"], stdin: "\(guess)\n")
            #expect(run.status == 4, "\(run.stderr)")
        }
        // Put the old folder back: the keychain's counter says 0 failures again.
        try FileManager.default.removeItem(at: tpm.home.url)
        try FileManager.default.copyItem(at: saved.url, to: tpm.home.url)
        run = try tpm.dev(["key", "status", "--json"])
        let status = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any]
        #expect(status?["failedAttempts"] as? Int == 0, "\(run.stdout)")
        // The TPM still refuses even the right PIN.
        run = try tpm.dev(["key", "unlock", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 4, "\(run.stderr)")
        #expect(run.stderr.contains("IN LOCKOUT"), "\(run.stderr)")
    }

    /// The attacker's copy: the whole home folder (file keychain included) taken to another
    /// machine (a second swtpm with its own state). The right PIN does not help there; on the
    /// original machine the same copy opens, so the copy is complete.
    @Test func copiedKeychainOnAnotherMachineCannotUnlock() throws {
        let machine = try SoftwareTPM()
        defer { machine.remove() }
        let other = try SoftwareTPM()
        defer { other.remove() }
        let home = try TemporaryHome("cli")
        let copy = try TemporaryHome("cli")
        func dev(_ home: TemporaryHome, _ tcti: String, _ arguments: [String], stdin: String? = nil) throws -> CLIResult {
            try rampartDev.run(["--home", home.path] + arguments, stdin: stdin,
                               environment: ["RAMPART_TPM_TCTI": tcti, "RAMPART_PIN_KDF_LOGN": "15"])
        }
        var run = try dev(home, machine.tcti, ["key", "init"])
        #expect(run.status == 0, "\(run.stderr)")
        run = try dev(home, machine.tcti, ["key", "protect", "--hardware", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 0, "\(run.stderr)")
        try FileManager.default.removeItem(at: copy.url)
        try FileManager.default.copyItem(at: home.url, to: copy.url)

        run = try dev(copy, other.tcti, ["key", "unlock", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status != 0)
        #expect(run.stderr.contains("sealed by another TPM"), "\(run.stderr)")
        run = try dev(copy, machine.tcti, ["key", "unlock", "--pin-stdin"], stdin: "2580\n")
        #expect(run.status == 0, "\(run.stderr)")
    }
}

/// A private software TPM and a home folder, and `rampart-dev` run on both (a cheap PIN KDF).
final class TPMHome {
    let home: TemporaryHome
    let swtpm: SoftwareTPM

    init() throws {
        home = try TemporaryHome("cli")
        swtpm = try SoftwareTPM()
    }

    /// `rampart-dev --home HOME ARGUMENTS`, on the TPM at `tcti` (this one's when nil).
    func dev(_ arguments: [String], stdin: String? = nil, tcti: String? = nil) throws -> CLIResult {
        try rampartDev.run(["--home", home.path] + arguments, stdin: stdin,
                           environment: ["RAMPART_TPM_TCTI": tcti ?? swtpm.tcti, "RAMPART_PIN_KDF_LOGN": "15"])
    }
}
