// Fuzz target: FileVault's sealed envelopes read back from disk — the chunked envelope of a
// cached attachment (header, chunks, authenticated lengths), the one-shot seal of the index's
// metadata, and drive blocks.
//
// Modes (first byte):
// - raw: the bytes as an envelope file, a small seal and a drive block: refused or opened,
//   never a crash, hang or huge allocation;
// - tamper: a plaintext from the input is sealed with the real code (chunk size from the
//   input), then edited as the input says (Mutations). Oracle: the reader returns the plaintext
//   when the file is unchanged, and refuses it (nil) whenever a byte changed — integrity.
@_spi(Fuzzing) import FileVault
import Crypto
import Foundation
import FuzzSupport

let target = "vault"
let key = SymmetricKey(data: [UInt8](repeating: 0x24, count: 32))
let block = DriveBlockFormat(user: "fuzz", fileID: try! DriveFileID("0123456789abcdef0123456789abcdef"), blockSize: 64, plaintextLength: 200)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzVault(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzReader(Fuzz.bytes(data, size))
    let mode = reader.byte()
    if mode % 2 == 0 {
        let bytes = reader.rest()
        let url = ScratchFiles.write(bytes, "raw.blob")
        _ = try? VaultEnvelopeFuzzing.openChunked(at: url, key: key, context: "a")
        _ = VaultEnvelopeFuzzing.openSmall(Data(bytes), key: key, context: "a")
        _ = block.open(Data(bytes), index: Int(mode >> 1) % 5, expectedHash: nil, key: key)
        return 0
    }
    let chunkSize = 1 + Int(reader.byte() % 64)
    let plaintext = Data(reader.take(Int(reader.byte())))
    let url = ScratchFiles.path("sealed.blob")
    do {
        try VaultEnvelopeFuzzing.sealChunked(plaintext, chunkSize: chunkSize, to: url, key: key, context: "a")
    } catch {
        Fuzz.violation(target, "sealing failed: \(error)")
    }
    guard let original = FileManager.default.contents(atPath: url.path).map({ [UInt8]($0) }) else {
        Fuzz.violation(target, "the sealed file is missing")
    }
    let edited = Mutations.apply(original, &reader)
    let editedURL = ScratchFiles.write(edited, "edited.blob")
    let opened = try? VaultEnvelopeFuzzing.openChunked(at: editedURL, key: key, context: "a")
    if edited == original {
        Fuzz.check(opened == plaintext, target, "an untouched envelope did not open to its plaintext")
    } else {
        Fuzz.check(opened == nil, target, "an edited envelope opened (\(original.count) → \(edited.count) bytes)")
    }
    // The same edits on a small seal and on a drive block.
    var small = FuzzReader(edited.count > 0 ? Array(edited.suffix(8)) : [])
    if let sealed = try? VaultEnvelopeFuzzing.sealSmall(plaintext, key: key, context: "m") {
        let changed = Mutations.apply([UInt8](sealed), &small)
        let back = VaultEnvelopeFuzzing.openSmall(Data(changed), key: key, context: "m")
        Fuzz.check(changed == [UInt8](sealed) ? back == plaintext : back == nil, target, "small seal: integrity oracle failed")
    }
    let index = Int(mode >> 1) % block.blockCount
    let plain = Data((0..<block.plaintextCount(ofBlock: index)).map { UInt8(truncatingIfNeeded: $0) })
    if let sealed = try? block.seal(plain, index: index, key: key) {
        var blockEdits = FuzzReader(Array(plaintext.prefix(8)))
        let changed = Data(Mutations.apply([UInt8](sealed), &blockEdits))
        let back = block.open(changed, index: index, expectedHash: DriveBlockFormat.hash(sealed), key: key)
        Fuzz.check(changed == sealed ? back == plain : back == nil, target, "drive block: integrity oracle failed")
    }
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_vault_main")
public func fuzzVaultMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzVault)
}
