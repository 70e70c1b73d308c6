import Foundation
import RampartCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The agent's frame reader and header decoders, exposed for the fuzz target in `Fuzz/` (SPI
/// `Fuzzing`, not part of the public API).
///
/// Trust-model row **device memory (moderate)**: whatever a local peer writes to the agent's
/// socket (or an agent impostor writes back to a client) must be refused with a typed error,
/// never crash or hang the reader.
@_spi(Fuzzing)
public enum AgentWireFuzzing {
    /// What one frame decoded to, for the fuzz target's oracles.
    public struct Decoded: Equatable {
        /// The frame's header bytes and secret bytes.
        public var header: Data
        public var secret: [UInt8]?
        /// The request it decodes to (operation and user), if any.
        public var request: String?
        /// The response it decodes to (ok flag, error code and kind, the client-side error), if any.
        public var response: String?
        /// The request written again by the client's writer and read back (nil if it did not
        /// read back); equals `request` when the wire round-trips.
        public var rewritten: String?
    }

    /// Reads every frame from `bytes` (written to one end of a socket pair, as a peer would) and
    /// decodes each header as a request and as a response. Stops at the end of the bytes or at
    /// the first error, which is returned as the final element's `Error`.
    public static func readFrames(_ bytes: [UInt8]) throws -> ([Decoded], (any Error)?) {
        let fds = try UnixSocket.makePair()
        defer { close(fds[0]) }
        // Frames are at most 64 KiB + 4; more than the socket buffer would block this thread.
        let chunk = Array(bytes.prefix(AgentWire.maxFrameLength + 8))
        do {
            defer { close(fds[1]) }
            try chunk.withUnsafeBytes { try UnixSocket.writeAll(fds[1], $0) }
        }
        var out: [Decoded] = []
        do {
            while let frame = try AgentWire.read(fds[0]) {
                let secret = try frame.secret.map { try $0.withUnsafeBytes { Array($0) } }
                var decoded = Decoded(header: frame.header, secret: secret)
                if let request = try? AgentWire.decode(AgentRequest.self, frame) {
                    decoded.request = "\(request.op.rawValue) \(request.user?.rawValue ?? "-")"
                    decoded.rewritten = rewritten(request, secret: frame.secret)
                }
                if let response = try? AgentWire.decode(AgentResponse.self, frame) {
                    let error = response.error.map { "\($0.code) \($0.errorKind.rawValue) \($0.agentError.code)" } ?? "-"
                    decoded.response = "\(response.ok) \(error) \(response.status?.userID.rawValue ?? "-")"
                }
                out.append(decoded)
            }
        } catch {
            return (out, error)
        }
        return (out, nil)
    }

    /// Writes `request` with its secret as the client does, and reads it back as the agent
    /// does: the description of what was read (`nil` when it does not read back).
    static func rewritten(_ request: AgentRequest, secret: SecretBytes?) -> String? {
        guard let fds = try? UnixSocket.makePair() else { return nil }
        defer { close(fds[0]) }
        do {
            defer { close(fds[1]) }
            guard (try? AgentWire.write(fds[1], header: request, secret: secret)) != nil else { return nil }
        }
        guard let frame = try? AgentWire.read(fds[0]), let back = try? AgentWire.decode(AgentRequest.self, frame) else { return nil }
        let secretBack = frame.secret.flatMap { try? $0.withUnsafeBytes { Array($0) } }
        let secretSent = secret.flatMap { try? $0.withUnsafeBytes { Array($0) } }
        guard secretBack == secretSent else { return nil }
        return "\(back.op.rawValue) \(back.user?.rawValue ?? "-")"
    }
}
