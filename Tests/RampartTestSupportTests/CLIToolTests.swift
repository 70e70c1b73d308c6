import Foundation
import RampartTestSupport
import Testing

/// The shared runner must report what a child did, and fail a test instead of hanging it.
@Suite("Test support: CLITool, ChildProcess, TemporaryHome")
struct CLIToolTests {
    let sh = CLITool(path: URL(fileURLWithPath: "/bin/sh"))

    @Test func aRunReportsStatusOutputAndErrorSeparately() throws {
        let result = try sh.run(["-c", "read line; printf 'out:%s' \"$line\"; printf 'err:%s' \"$X\" >&2; exit 3"],
                                stdin: "hello\n", environment: ["X": "set"])
        #expect(result.status == 3)
        #expect(!result.terminatedBySignal)
        #expect(result.stdout == "out:hello")
        #expect(result.stderr == "err:set")
    }

    @Test func binaryInputAndOutputPassUnchanged() throws {
        let bytes = Data((0...255).map { UInt8($0) } + [0, 0xFF, 0x0A])
        let result = try CLITool(path: URL(fileURLWithPath: "/bin/cat")).run([], input: bytes)
        #expect(result.output == bytes)
    }

    @Test func aChattyStandardErrorDoesNotBlockTheChild() throws {
        // 1 MiB on each stream: far more than a pipe buffer holds.
        let result = try sh.run(["-c", "head -c 1048576 /dev/zero; head -c 1048576 /dev/zero >&2"])
        #expect(result.status == 0)
        #expect(result.output.count == 1 << 20)
        #expect(result.stderr.utf8.count == 1 << 20)
    }

    @Test func aRunThatOverstaysIsKilledAndReported() throws {
        let started = ContinuousClock.now
        #expect {
            try sh.run(["-c", "echo begun; exec sleep 30"], timeout: .milliseconds(300))
        } throws: { error in
            guard case TestSupportError.timedOut(_, _, let stdout, _) = error else { return false }
            return stdout == "begun\n"
        }
        // Bounded by the child's 30 s, not the 300 ms limit: this checks the kill, not the scheduler.
        #expect(ContinuousClock.now - started < .seconds(25))
    }

    @Test func aSpawnedChildIsReadWhileItRunsAndAfterSIGKILL() throws {
        let child = try sh.spawn(["-c", "echo one; echo ready; exec sleep 30"])
        try child.requireLine("ready", timeout: .seconds(10))
        #expect(child.lines == ["one", "ready"])
        child.kill(SIGKILL)
        #expect(child.process.terminationReason == .uncaughtSignal)
        #expect(!child.isRunning)
    }

    @Test func aLineThatNeverComesIsAnError() throws {
        let child = try sh.spawn(["-c", "echo other; exit 0"])
        #expect(throws: TestSupportError.self) { try child.requireLine("ready", timeout: .seconds(10)) }
    }

    @Test func aMissingExecutableNamesItsVariable() {
        // A variable of this test's own, naming nothing runnable: the search stops there.
        setenv("RAMPART_NO_SUCH_TOOL_BIN", "/nonexistent/rampart-no-such-tool", 1)
        let missing = BuiltExecutable("rampart-no-such-tool", overriddenBy: "RAMPART_NO_SUCH_TOOL_BIN")
        #expect {
            try missing.url()
        } throws: { error in
            "\(error)".contains("RAMPART_NO_SUCH_TOOL_BIN") && "\(error)".contains("swift build --product rampart-no-such-tool")
        }
    }

    @Test func aTemporaryHomeIsPrivateListsItsFilesAndIsRemoved() throws {
        var home: TemporaryHome? = try TemporaryHome("support")
        let url = try #require(home?.url)
        let mode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(mode == 0o700)
        let folder = try #require(try home?.folder("a"))
        try Data("x".utf8).write(to: folder.appendingPathComponent("f"))
        try FileManager.default.createSymbolicLink(at: url.appendingPathComponent("link"), withDestinationURL: folder.appendingPathComponent("f"))
        #expect(home?.regularFiles() == ["/a/f"])
        #expect(home?.allBytes() == Data("x".utf8))
        home = nil
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }
    /// The async waits block threads of their own: more children than the cooperative pool has
    /// threads are awaited at once, and each ends only when a flag file appears, which a task on
    /// the pool writes after the waits began. Waits that held pool threads would leave that task no
    /// thread: the children would give up after 60 s and exit 7. (No clock: the suite runs beside
    /// every other one, so how long this takes says nothing.)
    @Test func awaitedChildrenHoldNoCooperativeThread() async throws {
        let home = try TemporaryHome("support")
        let flag = home.url.appendingPathComponent("flag").path
        let children = 3 * ProcessInfo.processInfo.activeProcessorCount + 2
        let script = "i=0; while [ ! -e '\(flag)' ]; do i=$((i+1)); [ $i -gt 600 ] && exit 7; sleep 0.1; done"
        let statuses = try await withThrowingTaskGroup(of: Int32?.self) { group in
            for _ in 0..<children { group.addTask { try await sh.run(["-c", script]).status } }
            group.addTask {
                try await Task.sleep(for: .milliseconds(200))
                FileManager.default.createFile(atPath: flag, contents: Data())
                return nil
            }
            return try await group.reduce(into: [Int32]()) { if let status = $1 { $0.append(status) } }
        }
        #expect(statuses == Array(repeating: Int32(0), count: children), "7: the flag never came, the pool was held")
    }

    @Test func theAsyncWaitsSeeLinesExitAndResult() async throws {
        let child = try sh.spawn(["-c", "echo one; echo ready; sleep 1; echo done"])
        try await child.requireLine("ready", timeout: .seconds(10))
        #expect(await child.waitForLines(timeout: .seconds(10)) { $0.last == "done" })
        let result = try await child.result(timeout: .seconds(10))
        #expect(result.lines == ["one", "ready", "done"])
        let silent = try sh.spawn(["-c", "exit 0"])
        await #expect(throws: TestSupportError.self) { try await silent.requireLine("ready", timeout: .seconds(10)) }
        let sleeper = try sh.spawn(["-c", "exec sleep 30"])
        #expect(await !sleeper.waitForExit(timeout: .milliseconds(200)))
        sleeper.kill(SIGKILL)
        #expect(!sleeper.isRunning)
        #expect(await sleeper.waitForExit(timeout: .seconds(1)))
    }
}
