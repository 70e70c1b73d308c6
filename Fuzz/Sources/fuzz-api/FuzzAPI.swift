// Fuzz target: the server's JSON request bodies (the RampartAPI models RampartServer decodes:
// login, refresh, label change/create, send, import, known messages, drive nodes), and the
// binary wire pieces the server and client read from each other (sealed parts, message
// originals, import ids).
//
// Modes (first byte): a request type, or a binary decoder.
// Oracles: decoding never crashes; a decoded request re-encodes to JSON that decodes to a value
// that encodes to the same JSON (a stable round trip); MailOriginal decode ∘ encode is the
// identity; SealedPart.open refuses (typed error) what it cannot authenticate.
import Crypto
import Foundation
import FuzzSupport
import RampartAPI

let target = "api"
let keys = MailboxKeyPair(privateKey: try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: [UInt8](repeating: 7, count: 32)))

func roundTrip<T: Codable>(_ type: T.Type, _ json: Data) {
    guard let value = try? JSONDecoder().decode(T.self, from: json) else { return }
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    guard let once = try? encoder.encode(value) else {
        Fuzz.violation(target, "\(T.self): a decoded value does not encode")
    }
    guard let again = try? JSONDecoder().decode(T.self, from: once) else {
        Fuzz.violation(target, "\(T.self): its own encoding does not decode: \(String(decoding: once, as: UTF8.self))")
    }
    let twice = try? encoder.encode(again)
    Fuzz.check(twice == once, target, "\(T.self): JSON round trip is not stable")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAPI(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzReader(Fuzz.bytes(data, size))
    let mode = reader.byte() % 12
    let body = Data(reader.rest())
    switch mode {
    case 0: roundTrip(SRPAuthRequest.self, body)
    case 1: roundTrip(RefreshRequest.self, body)
    case 2: roundTrip(LabelChangeRequest.self, body)
    case 3: roundTrip(LabelCreateRequest.self, body)
    case 4: roundTrip(SendRequest.self, body)
    case 5: roundTrip(ImportRequest.self, body)
    case 6: roundTrip(KnownMessagesRequest.self, body)
    case 7: roundTrip(DriveNodeRequest.self, body)
    case 8:
        // Sealed parts as the server checks them and the client opens them.
        let shaped = SealedPart.hasSealedShape(body)
        do {
            _ = try SealedPart.open(body, with: keys, userID: "u", messageID: "m", part: "body")
            Fuzz.violation(target, "a sealed part the fuzzer made opened")
        } catch is MailboxCryptoError {
        } catch {
            Fuzz.violation(target, "SealedPart.open threw an untyped error: \(error)")
        }
        _ = shaped
    case 9:
        if let original = try? MailOriginal(decoding: body) {
            Fuzz.check(original.encoded() == body, target, "MailOriginal decode/encode is not the identity")
        }
    case 10:
        // Sealed to our key, then opened with the same and with moved names.
        if let sealed = try? SealedPart.seal(body, to: keys.publicKey, userID: "u", messageID: "m", part: "body") {
            let back = try? SealedPart.open(sealed, with: keys, userID: "u", messageID: "m", part: "body")
            Fuzz.check(back == body, target, "a sealed part did not open")
            let moved = try? SealedPart.open(sealed, with: keys, userID: "u", messageID: "m2", part: "body")
            Fuzz.check(moved == nil, target, "a sealed part opened for another message")
        }
    default:
        let text = String(decoding: body, as: UTF8.self)
        _ = ImportIdentity.isMessageID(text)
        _ = ImportIdentity.isAttachmentID(text)
        _ = ConvertedMail(bytes: [UInt8](body))
    }
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_api_main")
public func fuzzAPIMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzAPI)
}
