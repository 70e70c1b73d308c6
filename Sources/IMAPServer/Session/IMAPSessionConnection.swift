/// What a session needs from its connection: writing bytes and switching to TLS. The server
/// implements it over a NIO channel; tests may drive a session through their own.
public protocol IMAPSessionConnection: Sendable {
    /// Writes `bytes` and returns once they are handed to the network (backpressure: a slow reader
    /// slows the session instead of growing a buffer).
    func write(_ bytes: [UInt8]) async throws
    /// Whether STARTTLS can be offered (a TLS context was configured and TLS is not active yet).
    var canStartTLS: Bool { get }
    /// Whether the connection is (already) encrypted.
    var isEncrypted: Bool { get }
    /// Writes `response` (the `OK` to STARTTLS) and starts TLS right behind it, with nothing read
    /// in between: the client's TLS handshake must not reach the command framer.
    func startTLS(after response: [UInt8]) async throws
    /// Whether a password may be sent in the clear here (a loopback listener the caller declared so).
    var plaintextLoginAllowed: Bool { get }
}
