import Foundation
import OpenPGP
import RampartCore
import Testing

/// ``PGPPrivateKey/inspectLocked(armored:)``: what the server reads of an uploaded key without its
/// passphrase (sign-up refuses a key that is not locked). Rampart's own locked export, an
/// unprotected one, a public key, two keys, garbage, and keys gpg locked or stubbed.
@Suite("OpenPGP: a secret key inspected without its passphrase")
struct LockedKeyInspectionTests {
    @Test func rampartsLockedExportIsLockedAndComplete() throws {
        let key = try PGPPrivateKey.generate(name: "Ann", address: "ann@example.org")
        let inspection = try PGPPrivateKey.inspectLocked(armored: try key.locked(passphrase: passphrase("pw")))
        #expect(inspection.everySecretPartLocked && inspection.hasEverySecretPart)
        #expect(inspection.publicKey.fingerprint == key.fingerprint && inspection.publicKey.addresses == ["ann@example.org"])
    }

    @Test func anUnprotectedKeyIsSeenAsNotLocked() throws {
        let key = try PGPPrivateKey.generate(name: "Ann", address: "ann@example.org")
        let armored = try key.unprotectedExport().withUnsafeBytes { try OpenPGP.armor(Data($0), as: .secretKey) }
        let inspection = try PGPPrivateKey.inspectLocked(armored: String(decoding: armored, as: UTF8.self))
        #expect(!inspection.everySecretPartLocked && inspection.hasEverySecretPart)
    }

    @Test func aPublicKeyTwoKeysOrGarbageAreMalformed() throws {
        let one = try PGPPrivateKey.generate(name: "A", address: "a@example.org")
        let two = try PGPPrivateKey.generate(name: "B", address: "b@example.org")
        #expect(throws: OpenPGPError.self) { try PGPPrivateKey.inspectLocked(armored: one.publicKey.armored()) }
        let both = try one.locked(passphrase: passphrase("x")) + "\n" + two.locked(passphrase: passphrase("y"))
        #expect(throws: OpenPGPError.self) { try PGPPrivateKey.inspectLocked(armored: both) }
        #expect(throws: OpenPGPError.self) { try PGPPrivateKey.inspectLocked(armored: "not a key") }
    }

    @Test func keysGpgLockedOrStubbedAreReadAsGpgWroteThem() throws {
        let gpg = try GnuPG()
        try gpg.ok(["--passphrase", "gpg secret", "--quick-gen-key", "Fay <fay@example.org>", "future-default", "default", "never"])
        let locked = try gpg.ok(["--passphrase", "gpg secret", "--armor", "--export-secret-keys", "fay@example.org"]).text
        let inspection = try PGPPrivateKey.inspectLocked(armored: locked)
        #expect(inspection.everySecretPartLocked && inspection.hasEverySecretPart)
        #expect(inspection.publicKey.addresses == ["fay@example.org"])
        // --export-secret-subkeys leaves a stub (GNU dummy S2K) for the primary key: not a complete key.
        let stubbed = try gpg.ok(["--passphrase", "gpg secret", "--armor", "--export-secret-subkeys", "fay@example.org"]).text
        let partial = try PGPPrivateKey.inspectLocked(armored: stubbed)
        #expect(!partial.hasEverySecretPart && partial.everySecretPartLocked)
    }
}
