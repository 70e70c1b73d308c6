import Crypto
import Foundation

/// The streaming envelope of a cached attachment (version 1).
///
/// ```
/// header (20 bytes): "RVA1" | version (1) | 0 0 0 | chunk size (u32 BE) | plaintext length (u64 BE)
/// chunk i (i = 0 ..< max(1, ⌈length / chunk size⌉)): nonce (12) | ciphertext | tag (16)
/// AD(chunk i) = label | context parts | header | i | final flag
/// ```
/// The header is authenticated by every chunk, the index and the final flag stop reordering,
/// dropping and truncation; an empty plaintext still has one (empty) chunk, so the header of an
/// empty file is authenticated too.
struct ChunkedEnvelope {
    static let magic = Data("RVA1".utf8)
    static let version: UInt8 = 1
    static let headerSize = 20
    static let overhead = 12 + 16
    /// The largest plaintext length a header may announce (2^48 bytes): far above any
    /// attachment, far enough below `Int64.max` that the chunk arithmetic cannot overflow.
    static let maximumPlaintextLength: UInt64 = 1 << 48

    let chunkSize: Int
    let plaintextLength: Int64

    var chunkCount: Int {
        max(1, Int((plaintextLength + Int64(chunkSize) - 1) / Int64(chunkSize)))
    }

    var sealedLength: Int64 {
        Int64(Self.headerSize) + plaintextLength + Int64(chunkCount * Self.overhead)
    }

    var header: Data {
        var data = Self.magic
        data.append(Self.version)
        data.append(contentsOf: [0, 0, 0])
        var size = UInt32(chunkSize).bigEndian
        withUnsafeBytes(of: &size) { data.append(contentsOf: $0) }
        var length = UInt64(plaintextLength).bigEndian
        withUnsafeBytes(of: &length) { data.append(contentsOf: $0) }
        return data
    }

    init(chunkSize: Int, plaintextLength: Int64) {
        self.chunkSize = chunkSize
        self.plaintextLength = plaintextLength
    }

    /// Parses a header; `nil` if it is not one (the caller reports tampering).
    init?(header data: Data) throws {
        guard data.count == Self.headerSize, data.prefix(4) == Self.magic else { return nil }
        let bytes = [UInt8](data)
        guard bytes[4] == Self.version else { throw FileVaultError.unsupportedVersion(bytes[4]) }
        // The chunks authenticate the header as re-encoded from its fields, so the reserved
        // bytes must be the zeros that encoding writes: otherwise they could be changed
        // unnoticed (found by the vault fuzz target's integrity oracle).
        guard bytes[5] == 0, bytes[6] == 0, bytes[7] == 0 else { return nil }
        let size = bytes[8..<12].reduce(0) { ($0 << 8) | Int($1) }
        let length = bytes[12..<20].reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
        // A length near Int64.max overflowed the chunk count and sealed length (a crash on a
        // tampered header, found by the vault fuzz target); no real attachment comes close.
        guard size > 0, size <= 64 << 20, length <= Self.maximumPlaintextLength else { return nil }
        self.chunkSize = size
        self.plaintextLength = Int64(length)
    }

    func plaintextCount(ofChunk index: Int) -> Int {
        let start = Int64(index) * Int64(chunkSize)
        return Int(min(Int64(chunkSize), max(0, plaintextLength - start)))
    }

    func ad(_ base: AssociatedData, chunk index: Int) -> AssociatedData {
        var ad = base
        ad.append(header)
        ad.append(UInt64(index))
        ad.append(index == chunkCount - 1 ? "final" : "more")
        return ad
    }

    /// Seals `read` (a chunked source) into `output`. `read(n)` returns up to `n` bytes.
    func seal(from read: (Int) throws -> Data, to output: VaultOutputFile, key: SymmetricKey,
              base: AssociatedData, sourcePath: String) throws {
        try output.write(header)
        for index in 0..<chunkCount {
            let expected = plaintextCount(ofChunk: index)
            let chunk = try read(expected)
            guard chunk.count == expected else { throw FileVaultError.sourceChanged(path: sourcePath) }
            let box = try AES.GCM.seal(chunk, using: key, authenticating: ad(base, chunk: index).bytes)
            try output.write(box.combined!)
        }
        if !(try read(1)).isEmpty { throw FileVaultError.sourceChanged(path: sourcePath) }
    }

    /// Opens every chunk of `input` (positioned after the header) into `write`.
    /// - Returns: `false` on any authentication or length failure.
    func open(from input: VaultInputFile, key: SymmetricKey, base: AssociatedData,
              write: (Data) throws -> Void) throws -> Bool {
        guard input.size == sealedLength else { return false }
        for index in 0..<chunkCount {
            let sealed = try input.read(upTo: plaintextCount(ofChunk: index) + Self.overhead)
            guard let box = try? AES.GCM.SealedBox(combined: sealed),
                  let plain = try? AES.GCM.open(box, using: key, authenticating: ad(base, chunk: index).bytes)
            else { return false }
            try write(plain)
        }
        return true
    }
}
