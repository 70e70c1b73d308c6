import Foundation
import Testing
@testable import Keymaker

/// scrypt parameters read from a PIN envelope on disk, at their extremes: a typed
/// `corruptEnvelope`, never a derivation with N = 2^255 or r = 2^32 (a trap or an unbounded
/// allocation).
@Suite("Hostile lengths: scrypt parameters on disk")
struct HostileKDFParameterTests {
    static func encoded(logN: UInt8, r: UInt32, p: UInt32, saltLength: Int) -> Data {
        var data = Data([1, logN])
        for value in [r, p] { withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) } }
        data.append(UInt8(saltLength))
        data.append(Data(repeating: 7, count: saltLength))
        return data
    }

    @Test(arguments: [(UInt8(0), UInt32(8), UInt32(1), 16), (UInt8.max, UInt32(8), UInt32(1), 16), (UInt8(63), UInt32(8), UInt32(1), 16),
                      (UInt8(15), UInt32(0), UInt32(1), 16), (UInt8(15), UInt32.max, UInt32(1), 16),
                      (UInt8(15), UInt32(8), UInt32(0), 16), (UInt8(15), UInt32(8), UInt32.max, 16),
                      (UInt8(15), UInt32(8), UInt32(1), 0)])
    func extremeParametersAreACorruptEnvelope(logN: UInt8, r: UInt32, p: UInt32, saltLength: Int) {
        do {
            _ = try ScryptParameters.decode(Self.encoded(logN: logN, r: r, p: p, saltLength: saltLength))
            Issue.record("N=2^\(logN) r=\(r) p=\(p) salt \(saltLength) was accepted")
        } catch let error as KeymakerError {
            guard case .corruptEnvelope = error else { Issue.record("unexpected \(error)"); return }
        } catch {
            Issue.record("untyped \(error)")
        }
    }

    @Test func aSaltLengthBeyondTheDataIsACorruptEnvelope() {
        var data = Self.encoded(logN: 15, r: 8, p: 1, saltLength: 16)
        data[10] = 0xFF
        #expect(throws: (any Error).self) { _ = try ScryptParameters.decode(data) }
    }
}
