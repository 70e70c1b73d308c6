import Crypto
import Foundation

/// The vault's envelope readers, exposed for the fuzz targets in `Fuzz/` (SPI `Fuzzing`, not
/// part of the public API): a chunked envelope is read back from a file exactly as
/// ``AttachmentCache`` reads a cached blob (header, then every chunk authenticated), and a small
/// seal is opened as the attachment index's metadata is.
///
/// Trust-model row **device disk (attachment cache)**: a blob or index entry changed on disk by
/// an attacker must be refused, never crash or hang the reader.
@_spi(Fuzzing)
public enum VaultEnvelopeFuzzing {
    static func base(_ context: String) -> AssociatedData { AssociatedData("filevault.fuzz.v1").appending(context) }

    /// Seals `plaintext` as a chunked envelope into a new file at `url`.
    public static func sealChunked(_ plaintext: Data, chunkSize: Int, to url: URL, key: SymmetricKey, context: String) throws {
        let envelope = ChunkedEnvelope(chunkSize: chunkSize, plaintextLength: Int64(plaintext.count))
        let output = try VaultOutputFile(creating: url, budget: nil)
        var offset = 0
        do {
            try envelope.seal(from: { count in
                let end = min(plaintext.count, offset + count)
                defer { offset = end }
                return plaintext.subdata(in: offset..<end)
            }, to: output, key: key, base: base(context), sourcePath: "(fuzz)")
            try output.finish(sync: false)
        } catch {
            output.abandon()
            throw error
        }
    }

    /// Reads the chunked envelope in the file at `url`: the plaintext, or `nil` when the file is
    /// refused (not an envelope, or a chunk fails authentication or length checks).
    public static func openChunked(at url: URL, key: SymmetricKey, context: String) throws -> Data? {
        let input = try VaultInputFile(reading: url)
        let header = try input.read(upTo: ChunkedEnvelope.headerSize)
        guard let envelope = try ChunkedEnvelope(header: header) else { return nil }
        var plaintext = Data()
        guard try envelope.open(from: input, key: key, base: base(context), write: { plaintext.append($0) }) else { return nil }
        return plaintext
    }

    /// A one-shot seal (nonce ‖ ciphertext ‖ tag), as the attachment index stores metadata.
    public static func sealSmall(_ plaintext: Data, key: SymmetricKey, context: String) throws -> Data {
        try SmallSeal.seal(plaintext, key: key, ad: base(context))
    }

    /// Opens a one-shot seal; `nil` when it does not authenticate.
    public static func openSmall(_ sealed: Data, key: SymmetricKey, context: String) -> Data? {
        SmallSeal.open(sealed, key: key, ad: base(context))
    }
}
