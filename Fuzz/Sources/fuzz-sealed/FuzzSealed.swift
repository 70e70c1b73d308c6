// Fuzz target: SealedStore's sealed values (the envelope of every sensitive column) and the
// decoders of sealed content (String, Data, [String]).
//
// Modes (first byte):
// - raw: the bytes as an envelope (ColumnSealer.open, keyVersion(ofEnvelope:)) and as sealed
//   content ([String] / String decoders): typed errors, never a crash;
// - tamper: a [String] from the input is sealed for a location, the envelope edited as the
//   input says and opened, for the same or another location. Oracle: it opens to the same
//   value only when unchanged and at the same location; any change is refused.
import Crypto
import Foundation
import FuzzSupport
import RampartCore
import SealedStore

let target = "sealed"
let sealer = ColumnSealer(key: SymmetricKey(data: [UInt8](repeating: 0x61, count: 32)), user: UserID("fuzz"),
                          keyVersion: KeyVersion(fingerprint: "0011223344556677"), schemaVersion: 1)
let here = SealedLocation(table: "message", column: "subject", primaryKey: ["m1"])
let there = SealedLocation(table: "message", column: "subject", primaryKey: ["m2"])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSealed(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzReader(Fuzz.bytes(data, size))
    let mode = reader.byte()
    if mode % 2 == 0 {
        let bytes = Data(reader.rest())
        _ = try? sealer.open(envelope: bytes, at: here)
        _ = ColumnSealer.keyVersion(ofEnvelope: bytes)
        if let list = try? [String](sealedBytes: bytes) {
            Fuzz.check(list.sealedBytes == [UInt8](bytes), target, "[String] decoding is not the inverse of encoding")
        }
        if let text = try? String(sealedBytes: bytes) {
            Fuzz.check(text.sealedBytes == [UInt8](bytes), target, "String decoding is not the inverse of encoding")
        }
        _ = try? Sealed<[String]>(envelope: bytes).open(at: here, with: sealer)
        return 0
    }
    // A value: strings split from the input at 0x00.
    let count = Int(reader.byte() % 8)
    var value: [String] = []
    for _ in 0..<count { value.append(String(decoding: reader.take(Int(reader.byte() % 16)), as: UTF8.self)) }
    let sealed: Sealed<[String]>
    do { sealed = try Sealed.seal(value, at: here, with: sealer) } catch { Fuzz.violation(target, "seal failed: \(error)") }
    let original = [UInt8](sealed.envelope)
    let edited = Mutations.apply(original, &reader)
    let location = mode & 2 == 0 ? here : there
    let opened = try? Sealed<[String]>(envelope: Data(edited)).open(at: location, with: sealer)
    if edited == original && location == here {
        Fuzz.check(opened == value, target, "an untouched envelope did not open to its value")
    } else {
        Fuzz.check(opened == nil, target, "an edited or moved envelope opened")
    }
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_sealed_main")
public func fuzzSealedMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzSealed)
}
