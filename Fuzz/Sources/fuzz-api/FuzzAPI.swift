// Fuzz target: the server's JSON request bodies (the RampartAPI models RampartServer decodes:
// login, refresh, label change/create, send, import, known messages, drive nodes), and the
// binary wire pieces the server and client read from each other (sealed parts, message
// originals, import ids).
//
// Modes (first byte): a request type, or a binary decoder.
// Oracles: decoding never crashes; a decoded request re-encodes to JSON that decodes to a value
// that encodes to the same JSON (a stable round trip); MailOriginal decode ∘ encode is the
// identity; MailPart.open refuses (typed error) what it cannot authenticate, and opens what
// MailPart.seal made only for its own message and part.
import Crypto
import Foundation
import FuzzSupport
import MailboxCrypto
import OpenPGP
import RampartAPI

let target = "api"
/// The mailbox key (made once per process: parts are OpenPGP messages bound to message and part).
let keys = try! PGPPrivateKey.generate(name: "Fuzz", address: "fuzz@rampart.invalid")

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
        let shaped = MailPart.hasSealedShape(body)
        do {
            _ = try MailPart.open(body, with: [keys], messageID: "m", part: "body")
            Fuzz.violation(target, "a mail part the fuzzer made opened")
        } catch is MailboxCryptoError {
        } catch {
            Fuzz.violation(target, "MailPart.open threw an untyped error: \(error)")
        }
        _ = shaped
    case 9:
        if let original = try? MailOriginal(decoding: body) {
            Fuzz.check(original.encoded() == body, target, "MailOriginal decode/encode is not the identity")
        }
    case 10:
        // Sealed to our key, then opened with the same and with moved names.
        if let sealed = try? MailPart.seal(body, to: [keys.publicKey], signedBy: nil, messageID: "m", part: "body") {
            let back = try? MailPart.open(sealed, with: [keys], messageID: "m", part: "body")
            Fuzz.check(back?.data == body, target, "a sealed part did not open")
            let moved = try? MailPart.open(sealed, with: [keys], messageID: "m2", part: "body")
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
