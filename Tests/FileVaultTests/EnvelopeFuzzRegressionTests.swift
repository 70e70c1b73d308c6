import Foundation
import Testing
import Crypto
import RampartCore
@_spi(Fuzzing) @testable import FileVault

/// Regressions found by the vault fuzz target (`Fuzz/`, docs/fuzzing.md).
@Suite("FileVault envelopes: fuzz regressions")
struct EnvelopeFuzzRegressionTests {
    /// The fuzzer's input: an "RVA1" header with chunk size 1 and a plaintext length of
    /// 2^63 − 2. Computing the chunk count and sealed length overflowed Int64 and trapped: a
    /// blob changed on disk crashed the reader instead of being refused.
    static let hugeLengthHeader: [UInt8] = [
        0x52, 0x56, 0x41, 0x31, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
    ]

    @Test func headerAnnouncingAHugeLengthIsRefused() throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        let url = folder.url.appendingPathComponent("huge.blob")
        try Data(Self.hugeLengthHeader).write(to: url)
        #expect(try VaultEnvelopeFuzzing.openChunked(at: url, key: .init(size: .bits256), context: "a") == nil)
    }

    /// The same header in place of a cached attachment's blob: `get` reports tampering.
    @Test func cachedBlobWithAHugeLengthIsTampered() throws {
        try expectCachedBlobEditIsTampered { $0.replaceSubrange(0..<Self.hugeLengthHeader.count, with: Self.hugeLengthHeader) }
    }

    /// The fuzzer's edit: one reserved header byte (offset 5) flipped. The chunks authenticate
    /// the header re-encoded from its fields, so the change went unnoticed and the envelope
    /// opened; a header whose reserved bytes are not zero is now refused.
    @Test(arguments: [5, 6, 7])
    func reservedHeaderByteChangedIsRefused(offset: Int) throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
        let key = SymmetricKey(size: .bits256)
        let sealed = folder.url.appendingPathComponent("sealed.blob")
        try VaultEnvelopeFuzzing.sealChunked(Data((0..<30).map { UInt8($0) }), chunkSize: 8, to: sealed, key: key, context: "a")
        #expect(try VaultEnvelopeFuzzing.openChunked(at: sealed, key: key, context: "a") == Data((0..<30).map { UInt8($0) }))
        var bytes = try Data(contentsOf: sealed)
        bytes[offset] ^= 0x80
        let edited = folder.url.appendingPathComponent("edited.blob")
        try bytes.write(to: edited)
        #expect(try VaultEnvelopeFuzzing.openChunked(at: edited, key: key, context: "a") == nil)
    }

    /// The same edit on a cached attachment's blob: `get` reports tampering.
    @Test func cachedBlobWithAChangedReservedByteIsTampered() throws {
        try expectCachedBlobEditIsTampered { $0[5] ^= 0x80 }
    }

    /// Caches one attachment, applies `edit` to its blob on disk, and expects `get` to report
    /// tampering.
    private func expectCachedBlobEditIsTampered(_ edit: (inout Data) -> Void,
                                                sourceLocation: SourceLocation = #_sourceLocation) throws {
        let folder = TemporaryFolder(); defer { folder.remove() }
        let vault = try Vault(root: folder.url, provider: unlockedSession(),
                              configuration: .init(attachments: .init(chunkSize: 4096)))
        try vault.attachments.put(Data("attachment".utf8), attachment: "a", fileName: "a.txt", mimeType: "text/plain")
        let row = try #require(try vault.attachments.indexRows().first, sourceLocation: sourceLocation)
        let blob = vault.attachments.folder.appendingPathComponent(row.blobName)
        var bytes = try Data(contentsOf: blob)
        edit(&bytes)
        try bytes.write(to: blob)
        #expect(throws: FileVaultError.attachmentTampered(attachment: "a"), sourceLocation: sourceLocation) {
            try vault.attachments.get("a")
        }
    }
}
