import Foundation
import Testing
@testable import FileVault

/// The chunked envelope's header fields at their extremes (tampered on disk): refused as
/// not-an-envelope, never an overflow or an allocation of the announced size.
@Suite("Hostile lengths: chunked envelope header")
struct HostileHeaderTests {
    static func header(chunkSize: UInt32, length: UInt64) -> Data {
        var data = Data("RVA1".utf8) + Data([1, 0, 0, 0])
        withUnsafeBytes(of: chunkSize.bigEndian) { data.append(contentsOf: $0) }
        withUnsafeBytes(of: length.bigEndian) { data.append(contentsOf: $0) }
        return data
    }

    @Test(arguments: [(UInt32(0), UInt64(10)), (UInt32.max, UInt64(10)), (UInt32(65_536), UInt64.max),
                      (UInt32(65_536), UInt64(Int64.max)), (UInt32(1), ChunkedEnvelope.maximumPlaintextLength + 1),
                      (UInt32((64 << 20) + 1), UInt64(1))])
    func anExtremeHeaderIsRefused(chunkSize: UInt32, length: UInt64) throws {
        #expect(try ChunkedEnvelope(header: Self.header(chunkSize: chunkSize, length: length)) == nil)
    }

    @Test func theLargestAcceptedHeaderDoesNotOverflow() throws {
        let envelope = try #require(try ChunkedEnvelope(header: Self.header(chunkSize: 1, length: ChunkedEnvelope.maximumPlaintextLength)))
        #expect(envelope.chunkCount == Int(ChunkedEnvelope.maximumPlaintextLength))
        #expect(envelope.sealedLength > Int64(ChunkedEnvelope.maximumPlaintextLength))
    }
}
