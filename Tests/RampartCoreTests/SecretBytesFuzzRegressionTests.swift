import Foundation
import Testing
@testable import RampartCore

/// Regressions found by the fuzz targets in `Fuzz/` (see docs/fuzzing.md).
@Suite("SecretBytes: fuzz regressions")
struct SecretBytesFuzzRegressionTests {
    struct Stop: Error, Equatable {}

    /// Found by the agent-wire target: when the initializer closure threw, the buffer was
    /// released by the initializer's error path and again by `deinit` (a double free; glibc
    /// aborts the process). The allocation must be released exactly once.
    @Test func throwingInitializerReleasesTheBufferOnce() throws {
        for count in [0, 1, 16, 4096] {
            for _ in 0..<200 {
                #expect(throws: Stop()) {
                    _ = try SecretBytes(count: count) { buffer in
                        if count > 0 { buffer[0] = 0x41 }
                        throw Stop()
                    }
                }
            }
        }
        // The allocator is still sound afterwards.
        let secret = SecretBytes(copying: [UInt8](repeating: 7, count: 64))
        #expect(try secret.withUnsafeBytes { Array($0) } == [UInt8](repeating: 7, count: 64))
    }
}
