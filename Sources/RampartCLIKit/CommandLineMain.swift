import ArgumentParser
import Foundation
import RampartCore
import RampartRuntime

/// The entry point both tools run: ArgumentParser's, except that a usage error (unknown option,
/// missing argument, a failed `validate()`) exits with the documented status 2 (bad usage or bad
/// input) instead of ArgumentParser's own 64, so one table of exit statuses holds for every error.
///
/// Trust-model row: **device memory (moderate)** — every `rampart` and `rampart-dev` process
/// may hold a MainKey, a private key or a PIN, so before the command line is even parsed it
/// turns core dumps off (`RLIMIT_CORE` 0) and makes itself non-dumpable
/// (`prctl(PR_SET_DUMPABLE, 0)`: no core file, and other processes of the same user can neither
/// `ptrace`-attach nor read its `/proc/<pid>/mem`). Root (`CAP_SYS_PTRACE`) is not stopped.
public enum CommandLineMain {
    public static func run<Root: AsyncParsableCommand>(_ root: Root.Type) async -> Never {
        if !ProcessHardening.disableCoreDumps() {
            FileHandle.standardError.write(Data("warning: could not turn core dumps off for this process; a crash could write secrets to disk.\n".utf8))
        }
        do {
            var command = try root.parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            exit(ExitStatus.success)
        } catch {
            if root.exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((root.fullMessage(for: error) + "\n").utf8))
                exit(ExitStatus.badInput)
            }
            root.exit(withError: error)
        }
    }
}
