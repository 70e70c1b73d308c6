import ArgumentParser
import Foundation
import RampartCore

/// The `rampart` command-line tool: the reference client of the Rampart security core.
@main
struct Rampart: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rampart",
        abstract: "The Rampart reference client: keys, mail safety, sealed storage, transport.",
        discussion: """
        Exit codes:
          0   success
          1   general failure (message on stderr)
          2   bad usage or bad input
          3   locked: unlock first
          4   wrong PIN (attempts left on stderr)
          5   data wiped after too many wrong PINs
          6   not found (no key, no item)
          7   tampered or corrupt data
          8   certificate pin mismatch
        """,
        subcommands: RampartCommands.all
    )

    /// Accepted before the subcommand too (`rampart --home DIR key init`); the subcommands
    /// declare the same group and receive the values.
    @OptionGroup var global: GlobalOptions
}
