import Foundation
import RampartTestSupport
import Testing

/// The waits that hold no cooperative thread: a bounded wait that gives up on a hang, and the
/// clean-ups a `defer` starts without waiting for them. Neither is checked with a clock: each
/// body waits on a gate the test opens only after the call returned, so a helper that waited
/// for the body would see it time out (60 s) and the expectations fail.
@Suite("Test support: bounded waits and background clean-ups")
struct BackgroundWaitTests {
    /// A gate a body waits on (at most 60 s) and a record of whether it got through.
    final class Gate: @unchecked Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var passed = false
        var wasPassed: Bool { lock.withLock { passed } }
        func open() { semaphore.signal() }
        /// Waits for ``open()``; true when it came (not the 60 s timeout).
        @discardableResult
        func pass() -> Bool {
            let opened = semaphore.wait(timeout: .now() + 60) == .success
            lock.withLock { passed = opened }
            return opened
        }
    }

    @Test func aBoundedWaitGivesUpOnABodyThatHangs() async {
        let gate = Gate()
        let outcome = await onThreadOfItsOwn(named: "hang", timeLimit: .milliseconds(200)) { gate.pass() }
        #expect(outcome == nil, "the wait ended with the body's answer, so it waited for the body")
        gate.open()
    }

    @Test func aBoundedWaitReturnsTheBodysValueOrError() async throws {
        let value = await onThreadOfItsOwn(timeLimit: .seconds(60)) { 6 * 7 }
        #expect(try value?.get() == 42)
        let failure = await onThreadOfItsOwn(timeLimit: .seconds(60)) { () throws -> Int in throw TestSupportError.cannotCreate(path: "/x", reason: "test") }
        #expect(throws: TestSupportError.self) { try failure?.get() }
    }

    @Test func aCleanupRunsWithoutTheCallerWaitingAndIsAwaitable() async {
        let gate = Gate()
        BackgroundCleanup.start(named: "test-cleanup") { gate.pass() }
        #expect(!gate.wasPassed, "start waited for the clean-up")
        gate.open()
        await BackgroundCleanup.finished()
        #expect(gate.wasPassed, "finished() returned before the clean-up ended")
    }

    @Test func aHomeWithoutAnAgentIsGoneWhenRemoveReturns() throws {
        let home = try TemporaryHome("bg")
        try Data("x".utf8).write(to: home.child("file"))
        home.remove()
        #expect(!FileManager.default.fileExists(atPath: home.path))
    }
}
