import Foundation
import Testing
@_spi(Fuzzing) @testable import RampartAgent

/// Agent frames whose length fields are at their extremes: a typed error, never an
/// allocation of the announced size or an out-of-range slice.
@Suite("Hostile lengths: agent frames")
struct HostileFrameTests {
    static func frame(length: UInt32, version: UInt8 = 1, headerLength: UInt32, body: [UInt8] = []) -> [UInt8] {
        withUnsafeBytes(of: length.bigEndian) { Array($0) } + [version] + withUnsafeBytes(of: headerLength.bigEndian) { Array($0) } + body
    }

    @Test(arguments: [UInt32.max, UInt32(Int32.max), UInt32(AgentWire.maxFrameLength + 1), 0, 4])
    func anExtremeFrameLengthIsATypedError(length: UInt32) throws {
        let (frames, error) = try AgentWireFuzzing.readFrames(Self.frame(length: length, headerLength: 0, body: Array(repeating: 0x20, count: 16)))
        #expect(frames.isEmpty)
        #expect(error is AgentError, "\(String(describing: error))")
    }

    @Test(arguments: [UInt32.max, UInt32(Int32.max), 12])
    func aHeaderLengthBeyondTheFrameIsATypedError(headerLength: UInt32) throws {
        let (frames, error) = try AgentWireFuzzing.readFrames(Self.frame(length: 16, headerLength: headerLength, body: Array(repeating: 0x20, count: 11)))
        #expect(frames.isEmpty)
        #expect(error is AgentError, "\(String(describing: error))")
    }
}
