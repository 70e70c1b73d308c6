// Fuzz target: OpenPGP messages, keys and signatures as the OpenPGP module (RNP) reads them.
//
// The first byte picks the entry point; the rest is the input:
//   0  OpenPGP.decrypt with the fixed key below and its public key as the verifier (1 MiB limit)
//   1  PGPPublicKey(armored:) and PGPPublicKey.keys(inArmored:)
//   2  PGPPublicKey(binary:)
//   3  OpenPGP.verifyCleartext
//   4  OpenPGP.verifyDetached: two bytes give the split between data and signature
//   5  OpenPGP.verifySigned (1 MiB limit)
//   6  integrity: a message encrypted and signed here (the input's bytes as plaintext) is edited
//      as the input says (flip, truncate, insert, delete, duplicate; FuzzSupport.Mutations) and
//      decrypted
//   7  the same for a detached signature over the input's bytes
//
// Oracles beyond "no crash, no hang, bounded memory": every failure is a typed OpenPGPError;
// decrypted data never exceeds the limit; a signature is verified only as the fixed key's
// fingerprint (the only verifier); a public key that parses reads back from its binary and
// armored forms with the same fingerprint; an edited message either is refused or gives back
// exactly the original plaintext with the original signature status (never other data); an
// edited detached signature never verifies over other data.
//
// The fixed key (ed25519 + cv25519, made with gpg, locked with the passphrase "fuzz") is a
// throwaway used only here and by Fuzz/make-seeds.py, which makes seed messages to it with gpg.
import Foundation
import FuzzSupport
import OpenPGP
import RampartCore


/// The fixed key, unlocked once per process.
let fuzzKey: PGPPrivateKey = {
    do {
        return try PGPPrivateKey.unlock(armored: fuzzKeyArmored, passphrase: SecretBytes(copying: Array("fuzz".utf8)))
    } catch {
        Fuzz.violation("openpgp", "the fixed fuzz key does not unlock: \(error)")
    }
}()

let limits = PGPLimits(maxOutputBytes: 1 << 20)
let target = "openpgp"

/// Runs `body`; a thrown error must be an OpenPGPError.
@inline(__always)
func typed<T>(_ what: String, _ body: () throws -> T) -> T? {
    Fuzz.typed(target, what, expected: "an OpenPGPError", isTyped: { $0 is OpenPGPError }, body)
}

func checkStatus(_ status: PGPSignatureStatus, _ what: String) {
    if case .verified(let fingerprint) = status {
        Fuzz.check(fingerprint == fuzzKey.fingerprint, target, "\(what): verified as \(fingerprint), which is not a verifier")
    }
}

func checkKey(_ key: PGPPublicKey, _ what: String) {
    Fuzz.check(key.fingerprint.hex.count == 40, target, "\(what): fingerprint \(key.fingerprint.hex)")
    guard let again = typed("PGPPublicKey(binary: its own binary)", { try PGPPublicKey(binary: key.binary) }) else {
        Fuzz.violation(target, "\(what): a parsed key's own binary form does not parse")
    }
    Fuzz.check(again.fingerprint == key.fingerprint, target, "\(what): binary round trip changed the fingerprint")
    guard let armored = typed("PGPPublicKey(armored: its own armour)", { try PGPPublicKey(armored: key.armored()) }) else {
        Fuzz.violation(target, "\(what): a parsed key's own armored form does not parse")
    }
    Fuzz.check(armored.fingerprint == key.fingerprint, target, "\(what): armour round trip changed the fingerprint")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOpenPGP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzReader(Fuzz.bytes(data, size))
    let mode = reader.byte() % 8
    let verifiers = [fuzzKey.publicKey]
    switch mode {
    case 0:
        if let decrypted = typed("decrypt", { try OpenPGP.decrypt(Data(reader.rest()), with: [fuzzKey], verifyingWith: verifiers, limits: limits) }) {
            Fuzz.check(decrypted.data.count <= limits.maxOutputBytes, target, "decrypt released \(decrypted.data.count) bytes over the limit")
            checkStatus(decrypted.signature, "decrypt")
        }
    case 1:
        let text = fuzzText(reader.rest())
        if let key = typed("PGPPublicKey(armored:)", { try PGPPublicKey(armored: text) }) { checkKey(key, "armored key") }
        if let keys = typed("PGPPublicKey.keys(inArmored:)", { try PGPPublicKey.keys(inArmored: text) }) {
            for key in keys.prefix(4) { checkKey(key, "key of a keyring") }
        }
    case 2:
        if let key = typed("PGPPublicKey(binary:)", { try PGPPublicKey(binary: Data(reader.rest())) }) { checkKey(key, "binary key") }
    case 3:
        if case let (_, status)? = typed("verifyCleartext", { try OpenPGP.verifyCleartext(fuzzText(reader.rest()), against: verifiers) }) {
            checkStatus(status, "verifyCleartext")
        }
    case 4:
        let split = reader.uint16()
        let rest = reader.rest()
        let cut = rest.isEmpty ? 0 : split % (rest.count + 1)
        if let status = typed("verifyDetached", { try OpenPGP.verifyDetached(Data(rest[..<cut]), signature: Data(rest[cut...]), against: verifiers) }) {
            checkStatus(status, "verifyDetached")
        }
    case 5:
        if let signed = typed("verifySigned", { try OpenPGP.verifySigned(Data(reader.rest()), against: verifiers, limits: limits) }) {
            Fuzz.check(signed.data.count <= limits.maxOutputBytes, target, "verifySigned released \(signed.data.count) bytes over the limit")
            checkStatus(signed.signature, "verifySigned")
        }
    case 6:
        let armor = reader.byte() & 1 == 1
        let plain = Data(reader.take(Int(reader.byte())))
        let message: Data
        do { message = try OpenPGP.encrypt(plain, to: verifiers, signedBy: fuzzKey, armor: armor) } catch {
            Fuzz.violation(target, "encrypting \(plain.count) bytes failed: \(error)")
        }
        let edited = Data(Mutations.apply(Array(message), &reader))
        if let decrypted = typed("decrypt(edited)", { try OpenPGP.decrypt(edited, with: [fuzzKey], verifyingWith: verifiers, limits: limits) }) {
            Fuzz.check(decrypted.data == plain, target,
                       "an edited message (\(edited == message ? "unchanged" : "changed")) decrypted to other data than was encrypted")
            Fuzz.check(decrypted.signature == .verified(fuzzKey.fingerprint), target,
                       "an edited message that decrypted has signature \(decrypted.signature)")
        } else {
            Fuzz.check(edited != message, target, "the unchanged message did not decrypt")
        }
    default:
        let plain = Data(reader.take(Int(reader.byte())))
        let signature: Data
        do { signature = try OpenPGP.detachedSignature(for: plain, with: fuzzKey) } catch {
            Fuzz.violation(target, "signing \(plain.count) bytes failed: \(error)")
        }
        let edited = Data(Mutations.apply(Array(signature), &reader))
        let otherData = reader.byte() & 1 == 1 ? plain + Data([0]) : plain
        if let status = typed("verifyDetached(edited)", { try OpenPGP.verifyDetached(otherData, signature: edited, against: verifiers) }) {
            if otherData != plain {
                Fuzz.check(status != .verified(fuzzKey.fingerprint), target, "a signature verified over other data")
            }
            if edited == signature && otherData == plain {
                Fuzz.check(status == .verified(fuzzKey.fingerprint), target, "an unchanged signature did not verify: \(status)")
            }
        } else {
            Fuzz.check(edited != signature, target, "the unchanged detached signature threw")
        }
    }
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_openpgp_main")
public func fuzzOpenPGPMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzOpenPGP)
}
