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
    /// Starts TLS right after the `OK` to STARTTLS was written.
    func startTLS() async throws
    /// Whether a password may be sent in the clear here (a loopback listener the caller declared so).
    var plaintextLoginAllowed: Bool { get }
}
