import ArgumentParser
import Foundation
import RampartRuntime

/// The entry point both tools run: ArgumentParser's, except that a usage error (unknown option,
/// missing argument, a failed `validate()`) exits with the documented status 2 (bad usage or bad
/// input) instead of ArgumentParser's own 64, so one table of exit statuses holds for every error.
public enum CommandLineMain {
    public static func run<Root: AsyncParsableCommand>(_ root: Root.Type) async -> Never {
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
