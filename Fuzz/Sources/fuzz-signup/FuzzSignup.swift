// Fuzz target: what a device sends to sign up and to add an address (trust-model rows: username,
// critical; server, zero access): usernames, addresses, `POST /v1/signup/accounts` bodies, and a
// real sign-up request (made once at start-up by MailboxCrypto's SignupPayload, as a device makes
// it: user key, address key, token and signature) edited as the input says.
//
// Modes (first byte): 0 a username, 1 an address, 2 a JSON body, 3 the real body's JSON edited
// (flip, truncate, insert, delete, duplicate), 4 one field of the real request replaced by the
// input's text, 5 the real address key with one field replaced, checked as `address add` does.
// Oracles: every refusal is a typed SignupRefusal (or malformed JSON); an accepted username is
// 3–40 characters of [a-z0-9._-], not reserved, and normalized idempotently (checking the result
// gives the result; the upper-case form of the input gives the same result); an accepted address is
// in the domain and normalized idempotently; an edited request or address key is accepted only
// with the very user key and address key that were made (no edit makes another key acceptable).
import Foundation
import FuzzSupport
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
@_spi(Fuzzing) import RampartServer
import SRP

let target = "signup"
let encoder: JSONEncoder = { let encoder = JSONEncoder(); encoder.outputFormatting = [.sortedKeys]; return encoder }()
/// A real request, made once (bcrypt and two key generations are too slow per input).
let real: SignupRequest = try! SignupPayload.make(
    username: "Dana.Fuzz", displayName: "Dana Fuzz", address: "dana.fuzz@rampart.test",
    loginPassword: SecretBytes(copying: Array("fuzz login".utf8)), keyPassword: SecretBytes(copying: Array("fuzz login".utf8)),
    group: .rampart)
let realJSON = try! encoder.encode(real)
let realAccepted = try! SignupFuzzing.check(realJSON)
let userKey = try! PGPPublicKey(armored: real.publicKey)

func typed(_ error: any Error, _ what: String) {
    switch error {
    case is SignupRefusal: return
    case ServerError.malformedJSON(_): return
    default: Fuzz.violation(target, "\(what): an untyped refusal: \(error)")
    }
}

func checkUsername(_ name: String) {
    let accepted: String
    do { accepted = try UsernameRules.check(name) } catch { typed(error, "username"); return }
    Fuzz.check(UsernameRules.length.contains(accepted.count), target, "accepted username \(accepted) has a length out of range")
    Fuzz.check(accepted.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || ".-_".unicodeScalars.contains($0) },
               target, "accepted username \(accepted.unicodeScalars.map { String($0.value, radix: 16) }) is not [a-z0-9._-]")
    Fuzz.check(!UsernameRules.reserved.contains(accepted), target, "reserved username \(accepted) accepted")
    Fuzz.check(accepted == name.lowercased(), target, "username \(name) normalized to \(accepted), not its lower case")
    Fuzz.check((try? UsernameRules.check(accepted)) == accepted, target, "username normalization of \(accepted) is not idempotent")
    Fuzz.check((try? UsernameRules.check(name.uppercased())) == accepted, target, "the upper-case form of \(name) is not the same name")
}

func checkAddress(_ text: String) {
    let accepted: String
    do { accepted = try SignupFuzzing.address(text) } catch { typed(error, "address"); return }
    Fuzz.check(accepted.hasSuffix("@rampart.test") && accepted == accepted.lowercased(), target, "address \(accepted) accepted outside the domain or not lower case")
    Fuzz.check((try? SignupFuzzing.address(accepted)) == accepted, target, "address normalization of \(accepted) is not idempotent")
}

func checkBody(_ body: Data, edited: Bool) {
    let accepted: SignupFuzzing.Accepted
    do { accepted = try SignupFuzzing.check(body) } catch { typed(error, "sign-up body"); return }
    checkUsername(accepted.username)
    checkAddress(accepted.address)
    if edited {
        Fuzz.check(accepted.userKey == realAccepted.userKey && accepted.addressKey == realAccepted.addressKey,
                   target, "an edited sign-up was accepted with another key")
    }
}

/// The real request with one field replaced by `text`.
func replacing(_ field: UInt8, with text: String) -> SignupRequest {
    var request = real
    switch field % 12 {
    case 0: request.username = text
    case 1: request.address = text
    case 2: request.displayName = text
    case 3: request.salt = text
    case 4: request.verifier = text
    case 5: request.keySalt = text
    case 6: request.publicKey = text
    case 7: request.privateKey = text
    case 8: request.addressKey?.token = text
    case 9: request.addressKey?.signature = text
    case 10: request.addressKey?.publicKey = text
    default: request.addressKey?.address = text
    }
    return request
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignup(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzReader(Fuzz.bytes(data, size))
    let mode = reader.byte() % 6
    switch mode {
    case 0: checkUsername(fuzzText(reader.rest()))
    case 1: checkAddress(fuzzText(reader.rest()))
    case 2: checkBody(Data(reader.rest()), edited: false)
    case 3:
        var json = [UInt8](realJSON)
        let operation = reader.byte() % 5, offset = reader.uint16() % max(json.count, 1), length = Int(reader.byte()) + 1
        let bytes = reader.rest()
        switch operation {
        case 0: for (i, b) in bytes.prefix(length).enumerated() where offset + i < json.count { json[offset + i] ^= b | 1 }
        case 1: json = Array(json.prefix(offset))
        case 2: json.insert(contentsOf: bytes, at: offset)
        case 3: json.removeSubrange(offset..<min(json.count, offset + length))
        default: json.insert(contentsOf: json[offset..<min(json.count, offset + length)], at: offset)
        }
        checkBody(Data(json), edited: true)
    case 4:
        let field = reader.byte()
        guard let body = try? encoder.encode(replacing(field, with: fuzzText(reader.rest()))) else { return 0 }
        checkBody(body, edited: true)
    default:
        let field = reader.byte()
        var upload = real.addressKey!
        let text = fuzzText(reader.rest())
        switch field % 5 {
        case 0: upload.address = text
        case 1: upload.token = text
        case 2: upload.signature = text
        case 3: upload.publicKey = text
        default: upload.privateKey = text
        }
        do {
            let address = try SignupFuzzing.addressKey(upload, userKey: userKey)
            checkAddress(address)
            Fuzz.check((try? PGPPublicKey(armored: upload.publicKey))?.fingerprint == realAccepted.addressKey,
                       target, "an edited address key was accepted with another key")
        } catch { typed(error, "address key") }
    }
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_signup_main")
public func fuzzSignupMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzSignup)
}
