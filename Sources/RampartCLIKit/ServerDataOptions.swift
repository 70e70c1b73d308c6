import ArgumentParser
import Foundation

/// Where the embedded server keeps its data (`rampart server start|info|invite|deliver --data DIR`).
///
/// Trust-model row **server (zero access)**: the folder holds the server's database (sealed mail,
/// SRP verifiers, locked keys, hashed invitation codes) and its TLS and modulus keys (0700).
public struct ServerDataOptions: ParsableArguments {
    @OptionGroup public var global: GlobalOptions

    @Option(name: .customLong("data"), help: "The server's data folder (default: <home>/server).")
    public var data: String?

    public init() {}

    /// The data folder: `--data`, or `<home>/server`.
    public var dataDirectory: URL {
        if let data { return URL(fileURLWithPath: (data as NSString).expandingTildeInPath, isDirectory: true) }
        return global.homeDirectory.appendingPathComponent("server", isDirectory: true)
    }
}
