import Foundation
import Testing
@testable import RampartCore

/// ``ThreadName``: every thread Rampart starts names itself, and the name sticks even when the
/// new thread runs before its parent returns from `start()` (the race that left the agent's accept
/// thread unnamed in CI with Foundation's `Thread.current.name`).
@Suite("Thread names")
struct ThreadNameTests {
    @Test func namesFitLinuxsFifteenBytesWithoutSplittingACharacter() {
        #expect(ThreadName.fitted("agent-accept") == "agent-accept")
        #expect(ThreadName.fitted("fifteen-bytes-x") == "fifteen-bytes-x")
        #expect(ThreadName.fitted("sixteen-bytes-xy") == "sixteen-bytes-x")
        // "é" is two bytes: 14 ASCII bytes leave room for none of it.
        let cut = ThreadName.fitted(String(repeating: "a", count: 14) + "éé")
        #expect(cut == String(repeating: "a", count: 14))
        #expect(cut.utf8.count <= ThreadName.maximumLength)
        // Room kept for a suffix ("-12"): a cut inside "é" drops the whole character, not the name.
        #expect(ThreadName.fitted("srv-caf\u{E9}-threads", toBytes: 8) == "srv-caf")
        #expect(ThreadName.fitted("\u{E9}\u{E9}", toBytes: 3) == "\u{E9}")
    }

    /// Many threads started at once, each naming itself first thing: every one carries its name.
    @Test func everyNewThreadCarriesItsName() async throws {
        final class Seen: @unchecked Sendable {
            let lock = NSLock()
            var names: [Int: String] = [:]
        }
        let count = 64
        let seen = Seen()
        let done = DispatchGroup()
        for index in 0..<count {
            done.enter()
            Thread {
                let name = "rp-name-\(index)"
                let read = ThreadName.setCurrent(name) ? ThreadName.current : "(refused)"
                seen.lock.withLock { seen.names[index] = read }
                done.leave()
            }.start()
        }
        await withCheckedContinuation { continuation in
            done.notify(queue: .global()) { continuation.resume() }
        }
        let names = seen.lock.withLock { seen.names }
        #expect(names.count == count)
        for index in 0..<count {
            #expect(names[index] == "rp-name-\(index)")
        }
    }

    /// A name that is too long is shortened rather than dropped.
    @Test func aLongNameIsShortenedNotDropped() async throws {
        let name: String = await withCheckedContinuation { continuation in
            Thread {
                ThreadName.setCurrent("a-very-long-thread-name-indeed")
                continuation.resume(returning: ThreadName.current)
            }.start()
        }
        #expect(name == "a-very-long-thr")
    }
}
