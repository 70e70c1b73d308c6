import ArgumentParser
import Foundation
import RampartAPI
import RampartClient

/// How a command names the server it talks to: its `server.json` (written by
/// `rampart server start`), or its URL with the pins, root certificate and SRP modulus key.
///
/// Trust-model row **transport (low)**: every connection is pinned (at least two SPKI pins: the
/// live key and a backup), and the SRP modulus must be signed by the pinned modulus key, so the
/// server named here is the only one the client will talk to. `rampart login` and the coming
/// sign-up share this group.
public struct ServerOptions: ParsableArguments {
    @Option(name: .customLong("server-info"), help: "A server.json written by `rampart server start`; repeat it for each process of one server (same pins), tried in order when one cannot be reached.")
    public var serverInfos: [String] = []
    @Option(help: "The server's base URL (https://host:port); repeat it for more addresses of the same server (same pins), tried in order when one cannot be reached.")
    public var url: [String] = []
    @Option(name: .customLong("pin"), help: "An SPKI pin of the server (base64 SHA-256); give two or more.")
    public var pins: [String] = []
    @Option(help: "The server's root certificate (PEM file) trusted as the only root.")
    public var ca: String?
    @Option(name: .customLong("modulus-key"), help: "With --url: the server's SRP modulus public key (armored OpenPGP file).")
    public var modulusKey: String?
    @Option(name: .customLong("modulus-fingerprint"), help: "With --url: the pinned fingerprint of that key (40 hex).")
    public var modulusFingerprint: String?
    @Option(name: .customLong("log-key"), help: "With --url: the server's key log key (name+hash+base64), pinned; directory keys are then used only with its proofs.")
    public var logKey: String?
    @Option(name: .customLong("witness-key"), help: "A key log witness to require (name+hash+base64, from `rampart server witness --print-key`), besides those server.json pins.")
    public var witnessKeys: [String] = []

    public init() {}

    public func validate() throws {
        guard serverInfos.isEmpty != url.isEmpty else { throw ValidationError("Give --server-info FILE, or --url URL with --pin (twice or more).") }
        if !url.isEmpty && pins.count < 2 { throw ValidationError("--url needs at least two --pin (the live key and a backup key).") }
        if !url.isEmpty && !witnessKeys.isEmpty && logKey == nil { throw ValidationError("--witness-key with --url needs --log-key.") }
    }

    /// The pinned endpoint these options describe. - Throws: `ValidationError` for a file that
    /// cannot be read or a URL that is not https.
    public func endpoint() throws -> ServerEndpoint {
        if let serverInfo = serverInfos.first {
            var endpoint = try ServerEndpoint.fromServerInfoFile(URL(fileURLWithPath: serverInfo))
            for other in serverInfos.dropFirst() {
                let more = try ServerEndpoint.fromServerInfoFile(URL(fileURLWithPath: other))
                guard more.pins == endpoint.pins, more.modulusKeyFingerprint == endpoint.modulusKeyFingerprint,
                      more.keyLog?.logKey == endpoint.keyLog?.logKey else {
                    throw ValidationError("\(other) describes another server than \(serverInfo) (other pins, modulus key or log key): "
                        + "every --server-info must be a process of the same server.")
                }
                endpoint.alternateURLs = (endpoint.alternateURLs ?? []) + [more.url]
            }
            if !witnessKeys.isEmpty {
                guard let pinned = endpoint.keyLog else { throw ValidationError("\(serverInfo) pins no key log for --witness-key.") }
                endpoint.keyLog?.witnesses = pinned.witnesses + witnessKeys.filter { !pinned.witnesses.contains($0) }
            }
            return endpoint
        }
        let parsedURLs = url.compactMap { URL(string: $0) }.filter { $0.scheme == "https" && $0.host != nil }
        guard parsedURLs.count == url.count, let parsed = parsedURLs.first else { throw ValidationError("--url must be an https URL.") }
        // The log's origin is its key's name (the part before the first '+').
        let keyLog = logKey.map { KeyLogPins(origin: String($0.prefix { $0 != "+" }), logKey: $0, witnesses: witnessKeys) }
        return ServerEndpoint(url: parsed, pins: pins, certificatePEM: try ca.map(Self.read),
                              modulusKeyFingerprint: modulusFingerprint, modulusPublicKey: try modulusKey.map(Self.read), keyLog: keyLog,
                              alternateURLs: parsedURLs.count > 1 ? Array(parsedURLs.dropFirst()) : nil)
    }

    private static func read(_ path: String) throws -> String {
        do { return try String(contentsOfFile: path, encoding: .utf8) } catch { throw ValidationError("Cannot read \(path).") }
    }
}
