import Foundation
import OpenPGP
import RampartCore
import Testing

func passphrase(_ text: String) -> SecretBytes { SecretBytes(copying: Array(text.utf8)) }

@Suite("OpenPGP keys")
struct KeyTests {
    @Test("A generated key has the Proton shape: v4 Ed25519 primary, Curve25519 ECDH subkey, one user id")
    func generatedKeyShape() throws {
        let key = try PGPPrivateKey.generate(name: "Alice Example", address: "Alice@Example.org")
        #expect(key.publicKey.userIDs == ["Alice Example <Alice@Example.org>"])
        #expect(key.publicKey.addresses == ["alice@example.org"])
        #expect(key.publicKey.canEncrypt)
        #expect(key.fingerprint.hex.count == 40)
        #expect(key.publicKey.keyID == key.fingerprint.keyID)
        #expect(!"\(key)".contains("BEGIN"))

        let gpg = try GnuPG()
        let packets = try gpg.ok(["--list-packets"], input: key.publicKey.binary).text
        #expect(packets.contains(":public key packet:"))
        #expect(packets.contains("version 4, algo 22"))            // EdDSA primary
        #expect(packets.contains(":public sub key packet:"))
        #expect(packets.contains("version 4, algo 18"))            // ECDH subkey
        #expect(packets.lowercased().contains("ed25519"))
        #expect(packets.lowercased().contains("cv25519") || packets.contains("1.3.6.1.4.1.3029.1.5.1"))
        #expect(packets.contains("expires 0") || !packets.contains("key expires after"))
    }

    @Test("Public keys round-trip through armour and binary, and gpg imports them")
    func publicKeyRoundTrip() throws {
        let key = try PGPPrivateKey.generate(name: "Bob", address: "bob@example.org")
        let armored = key.publicKey.armored()
        #expect(armored.hasPrefix("-----BEGIN PGP PUBLIC KEY BLOCK-----"))
        #expect(try PGPPublicKey(armored: armored) == key.publicKey)
        #expect(try PGPPublicKey(binary: key.publicKey.binary) == key.publicKey)

        let gpg = try GnuPG()
        try gpg.ok(["--import"], input: Data(armored.utf8))
        let exported = try gpg.ok(["--armor", "--export", key.fingerprint.hex]).text
        #expect(try PGPPublicKey(armored: exported).fingerprint == key.fingerprint)
    }

    @Test("A keyring export with several keys parses as several keys; a single-key init refuses it")
    func severalKeys() throws {
        let first = try PGPPrivateKey.generate(name: "One", address: "one@example.org")
        let second = try PGPPrivateKey.generate(name: "Two", address: "two@example.org")
        let gpg = try GnuPG()
        try gpg.ok(["--import"], input: first.publicKey.binary)
        try gpg.ok(["--import"], input: second.publicKey.binary)
        let both = try gpg.ok(["--armor", "--export"]).text
        let keys = try PGPPublicKey.keys(inArmored: both)
        #expect(Set(keys.map(\.fingerprint)) == [first.fingerprint, second.fingerprint])
        #expect(throws: OpenPGPError.self) { try PGPPublicKey(armored: both) }
    }

    @Test("Garbage is not a key", arguments: [
        "", "hello", "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nnot base64 !!!\n-----END PGP PUBLIC KEY BLOCK-----\n",
        "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmQINBF\n=AAAA\n-----END PGP PUBLIC KEY BLOCK-----\n",
    ])
    func garbageKey(_ text: String) {
        #expect(throws: OpenPGPError.self) { try PGPPublicKey(armored: text) }
    }

    @Test("Locked export unlocks with the passphrase, not with another")
    func lockUnlock() throws {
        let key = try PGPPrivateKey.generate(name: "Carol", address: "carol@example.org")
        let locked = try key.locked(passphrase: passphrase("correct horse"))
        #expect(locked.hasPrefix("-----BEGIN PGP PRIVATE KEY BLOCK-----"))
        let unlocked = try PGPPrivateKey.unlock(armored: locked, passphrase: passphrase("correct horse"))
        #expect(unlocked.fingerprint == key.fingerprint)
        // A stored "locked" key that is in fact unprotected (substituted) does not unlock with any passphrase.
        let substitute = try PGPPrivateKey.generate(name: "Carol", address: "carol@example.org").unprotectedExport()
        let substituteArmored = try substitute.withUnsafeBytes { String(decoding: try OpenPGP.armor(Data($0), as: .secretKey), as: UTF8.self) }
        #expect(throws: OpenPGPError.self) { try PGPPrivateKey.unlock(armored: substituteArmored, passphrase: passphrase("correct horse")) }
        #expect(throws: OpenPGPError.wrongPassphrase) {
            try PGPPrivateKey.unlock(armored: locked, passphrase: passphrase("wrong horse"))
        }
        // The locked form is protected: it does not load as an unprotected key.
        let lockedBinary = try OpenPGP.dearmor(Data(locked.utf8))
        #expect(throws: OpenPGPError.self) { try PGPPrivateKey(unprotectedBinary: lockedBinary) }

        // gpg reads the locked key with the passphrase (iterated+salted S2K, AES-256).
        let gpg = try GnuPG()
        let packets = try gpg.ok(["--list-packets"], input: Data(locked.utf8)).text
        #expect(packets.contains(":secret key packet:"))
        #expect(packets.contains("protect count") || packets.contains("iter+salt"))
        #expect(packets.contains("algo: 9") || packets.contains("algo 9"))   // AES-256
        try gpg.ok(["--passphrase", "correct horse", "--import"], input: Data(locked.utf8))
        let secrets = try gpg.ok(["--with-colons", "--list-secret-keys"]).text
        #expect(secrets.contains(key.fingerprint.hex))
    }

    @Test("The unprotected export loads back and decrypts what was sent to the key")
    func unprotectedRoundTrip() throws {
        let key = try PGPPrivateKey.generate(name: "Dave", address: "dave@example.org")
        let exported = try key.unprotectedExport()
        let again = try PGPPrivateKey(unprotected: exported)
        exported.wipe()
        #expect(again.fingerprint == key.fingerprint)
        let message = try OpenPGP.encrypt(Data("hi".utf8), to: [key.publicKey], signedBy: nil)
        #expect(try OpenPGP.decrypt(message, with: [again], verifyingWith: []).data == Data("hi".utf8))
        again.wipe()
        #expect(throws: (any Error).self) { try OpenPGP.decrypt(message, with: [again], verifyingWith: []) }
    }

    @Test("A key gpg generated and locked unlocks here")
    func gpgSecretKey() throws {
        let gpg = try GnuPG()
        let fingerprint = try gpg.generateKey("Erin <erin@example.org>")
        let locked = try gpg.ok(["--passphrase", "", "--armor", "--export-secret-keys", fingerprint]).text
        // gpg exported it unprotected (empty passphrase): load it directly.
        let key = try PGPPrivateKey(unprotectedBinary: Data(locked.utf8))
        #expect(key.fingerprint.hex == fingerprint)
        #expect(key.publicKey.addresses == ["erin@example.org"])
        let relocked = try key.locked(passphrase: passphrase("pw"))
        #expect(try PGPPrivateKey.unlock(armored: relocked, passphrase: passphrase("pw")).fingerprint.hex == fingerprint)

        // A key gpg protected itself (its own S2K and cipher choices) unlocks with its passphrase only.
        try gpg.ok(["--passphrase", "gpg secret", "--quick-gen-key", "Fay <fay@example.org>", "future-default", "default", "never"])
        let gpgLocked = try gpg.ok(["--passphrase", "gpg secret", "--armor", "--export-secret-keys", "fay@example.org"]).text
        #expect(gpgLocked.hasPrefix("-----BEGIN PGP PRIVATE KEY BLOCK-----"))
        let fay = try PGPPrivateKey.unlock(armored: gpgLocked, passphrase: passphrase("gpg secret"))
        #expect(fay.publicKey.addresses == ["fay@example.org"])
        #expect(throws: OpenPGPError.wrongPassphrase) {
            try PGPPrivateKey.unlock(armored: gpgLocked, passphrase: passphrase("not it"))
        }
    }
}
