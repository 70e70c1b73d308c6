import Foundation
@testable import OpenPGP
import RampartTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The system clock's current second (`clock_gettime(CLOCK_REALTIME)`, what `Date()`, Go's
/// `time.Now` and Rust's `SystemTime::now` read) and `time()`'s second, read together.
private func seconds() -> (system: UInt64, timeCall: UInt64) {
    (UInt64(SystemClock.nanoseconds() / 1_000_000_000), UInt64(time(nil)))
}

/// Waits until the system clock reaches `second`; then both clocks, read together.
private func waitForSecond(_ second: UInt64) -> (system: UInt64, timeCall: UInt64) {
    SystemClock.wait(until: Int64(second) * 1_000_000_000)
    return seconds()
}

@Suite("OpenPGP clock")
struct ClockTests {
    /// On Linux `time()` reads the coarse clock (the second of the kernel's last timer tick): for a
    /// few milliseconds after each second boundary it still says the previous second while the
    /// system clock says the new one. RNP judges keys by its "now", which is `time()` unless the
    /// context is given one, so a key a peer made in the new second (GopenPGP stamps its keys with
    /// Go's `time.Now`) was refused as "created 1 seconds in future" ("no valid encryption key").
    /// This makes such a key at the boundary and checks it at once, while `time()` still lags.
    /// An attempt counts only if `time()` still showed the previous second after the checks; it
    /// waits for another boundary otherwise (at most five).
    @Test("A key made in the current second by the system clock is usable at once, even while time() still shows the previous second")
    func keyMadeThisSecond() throws {
        var conclusive = 0
        for _ in 0..<5 where conclusive == 0 {
            let second = seconds().system + 1
            let made = try PGPPrivateKey.generate(name: "Fresh Key", address: "fresh@example.org", createdAt: second)
            let binary = made.publicKey.binary
            let clocks = waitForSecond(second)
            guard clocks.timeCall < second else { continue }    // time() had already caught up
            let key = try PGPPublicKey(binary: binary)
            let encrypted = Result { try OpenPGP.encrypt(Data("hello".utf8), to: [key], signedBy: nil) }
            guard UInt64(time(nil)) < second else { continue }  // the checks ran past the lag
            conclusive += 1
            #expect(key.canEncrypt, "a key created at \(second), checked at system second \(clocks.system) (time() \(clocks.timeCall))")
            #expect(throws: Never.self, "encrypting to a key created at \(second) while time() said \(clocks.timeCall)") {
                _ = try encrypted.get()
            }
        }
        if conclusive == 0 {
            print("ClockTests.keyMadeThisSecond: time() never lagged the system clock long enough here; nothing was checked")
        }
    }
}
