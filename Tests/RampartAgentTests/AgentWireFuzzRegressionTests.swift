import Foundation
import Testing
@_spi(Fuzzing) @testable import RampartAgent

/// Regressions found by the agent-wire fuzz target (`Fuzz/`, docs/fuzzing.md): each input is the
/// fuzzer's, byte for byte.
@Suite("Agent wire: fuzz regressions")
struct AgentWireFuzzRegressionTests {
    /// A frame announcing 31,265 bytes that ends after 55: the reader's buffer initializer
    /// threw and the secret buffer was freed twice (SecretBytes). It must be a typed protocol
    /// violation, and the process must survive.
    static let truncatedFrame: [UInt8] = [
        0x00, 0x00, 0x7a, 0x21, 0x01, 0x00, 0x00, 0x00, 0x59, 0xce, 0xce, 0xce, 0xce, 0xce, 0xce, 0xce,
        0xce, 0xce, 0xce, 0xce, 0xce, 0xce, 0xce, 0x66, 0xce, 0xce, 0xce, 0xce, 0xce, 0xce, 0xce, 0xce,
        0xce, 0xce, 0xce, 0xce, 0xce, 0xce, 0xce, 0xce, 0x62, 0x22, 0x7d, 0x22, 0x75, 0x6e, 0x72, 0x65,
        0x61, 0x22, 0x75, 0x6e, 0x72, 0x65, 0x61, 0x64, 0x22, 0x64, 0x22,
    ]

    @Test func frameCutOffInTheMiddleIsAProtocolViolation() throws {
        for _ in 0..<50 {
            let (frames, error) = try AgentWireFuzzing.readFrames(Self.truncatedFrame)
            #expect(frames.isEmpty)
            guard case .protocolViolation(let message)? = error as? AgentError else {
                Issue.record("expected a protocol violation, got \(String(describing: error))")
                return
            }
            #expect(message.contains("closed in the middle"))
        }
    }
}
