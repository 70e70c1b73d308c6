import Foundation
import NIOCore
import NIOPosix
import RampartCore

/// The listening half the IMAP and SMTP servers share: an event loop group, the sessions' own
/// threads (`ServerTasks`), the bound channel and its port.
///
/// ```swift
/// let listener = MailListener(threads: 1, name: "imap")
/// try await listener.listen(host: "127.0.0.1", port: 0, idleTimeout: .minutes(30)) { [MyHandler()] }
/// print(listener.port)
/// try await listener.stop()
/// ```
/// Trust-model row **transport (low)**: the servers listen on loopback unless given a TLS context;
/// ``isLoopback(_:)`` is the one test of that.
public final class MailListener: Sendable {
    private let group: MultiThreadedEventLoopGroup
    private let state = Locked()
    /// The sessions' own threads: a process whose shared cooperative pool is blocked (other work
    /// waiting on child processes) must not stall a mail program's session. Pass it to
    /// `ServerTasks.start(on:)`.
    public let sessionThreads: (any Sendable & AnyObject)?

    /// Creates a listener with `threads` event loop and session threads named after `name`;
    /// nothing listens until ``listen(_:host:port:plaintextOnLoopback:hasTLS:idleTimeout:maxMessagesPerRead:handlers:)``.
    public init(threads: Int, name: String) {
        group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
        sessionThreads = ServerTasks.makeThreads(count: max(1, threads), name: name)
    }

    /// The bound port (0 before listening).
    public var port: Int { state.withLock { $0.port } }

    /// Checks where passwords may travel, binds `host:port` and accepts connections. Each
    /// connection's pipeline gets an `IdleStateHandler` (a read timeout of `idleTimeout`) followed by
    /// the handlers `handlers` makes.
    /// - Parameters:
    ///   - served: the protocol served, named in the errors.
    ///   - host: the address to bind.
    ///   - port: the port (0: any free one; read it from ``port``).
    ///   - plaintextOnLoopback: the caller allows passwords in the clear; only valid on loopback.
    ///   - hasTLS: the caller gave a TLS context for STARTTLS.
    ///   - idleTimeout: how long a connection may send nothing.
    ///   - maxMessagesPerRead: the channel's reads per event-loop turn (NIO's default when nil).
    ///   - handlers: makes each connection's handlers.
    /// - Throws: ``MailServerError`` naming `Protocol`.
    public func listen<Protocol: MailProtocol>(_ served: Protocol.Type, host: String, port: Int, plaintextOnLoopback: Bool, hasTLS: Bool,
                                               idleTimeout: TimeAmount, maxMessagesPerRead: UInt? = nil,
                                               handlers: @escaping @Sendable () -> [any ChannelHandler]) async throws(MailServerError<Protocol>) {
        if plaintextOnLoopback, !Self.isLoopback(host) { throw .plaintextNeedsLoopback(host: host) }
        if !plaintextOnLoopback, !hasTLS { throw .noWayToLogIn }
        var bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(.backlog, value: 64)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        if let maxMessagesPerRead { bootstrap = bootstrap.childChannelOption(.maxMessagesPerRead, value: maxMessagesPerRead) }
        let channel: any Channel
        do {
            channel = try await bootstrap.childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: idleTimeout))
                    try channel.pipeline.syncOperations.addHandlers(handlers())
                }
            }.bind(host: host, port: port).get()
        } catch {
            throw .cannotListen(host: host, port: port, reason: "\(error)")
        }
        let bound = channel.localAddress?.port ?? 0
        state.withLock { $0.channel = channel; $0.port = bound }
    }

    /// Stops listening, closes every connection, the event loops and the session threads.
    public func stop() async throws {
        let channel = state.withLock { s -> (any Channel)? in defer { s.channel = nil }; return s.channel }
        try? await channel?.close().get()
        try await group.shutdownGracefully()
        ServerTasks.shutdown(sessionThreads)
    }

    /// Whether `host` names the loopback interface (`localhost`, `::1`, `127.x.y.z`): the only
    /// addresses where a password may travel in the clear.
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    private final class Locked: @unchecked Sendable {
        struct Value { var channel: (any Channel)?; var port = 0 }
        private let lock = NSLock()
        private var value = Value()
        func withLock<T>(_ body: (inout Value) -> T) -> T { lock.lock(); defer { lock.unlock() }; return body(&value) }
    }
}

/// A mail protocol a ``MailListener`` serves, named in its ``MailServerError``s.
public protocol MailProtocol: Sendable {
    /// The protocol's name (`IMAP`, `SMTP`).
    static var name: String { get }
    /// What a client does with a password there (`log in`, `authenticate`).
    static var logIn: String { get }
}

/// IMAP (RFC 3501), as a ``MailServerError`` names it.
public enum IMAP: MailProtocol {
    /// `IMAP`; a client would `log in`.
    public static let name = "IMAP", logIn = "log in"
}

/// SMTP submission (RFC 6409), as a ``MailServerError`` names it.
public enum SMTP: MailProtocol {
    /// `SMTP`; a client would `authenticate`.
    public static let name = "SMTP", logIn = "authenticate"
}

/// Why a mail server could not start. Trust-model row **transport (low)**.
public enum MailServerError<Protocol: MailProtocol>: Error, Sendable, Equatable, CustomStringConvertible {
    /// Plain-text logins were asked for on an address that is not loopback.
    case plaintextNeedsLoopback(host: String)
    /// Neither TLS nor loopback plain text: no client could ever log in.
    case noWayToLogIn
    /// Binding the address failed.
    case cannotListen(host: String, port: Int, reason: String)

    /// A sentence saying what to change.
    public var description: String {
        switch self {
        case .plaintextNeedsLoopback(let host):
            "Plain-text \(Protocol.name) is allowed only on a loopback address, not \(host): listen on 127.0.0.1 or give a TLS context"
        case .noWayToLogIn:
            "Give a TLS context (for STARTTLS) or declare the loopback listener plain-text; otherwise no client can \(Protocol.logIn)"
        case .cannotListen(let host, let port, let reason): "Cannot listen on \(host):\(port): \(reason)"
        }
    }
}

/// Counts a server's open connections against a limit. Trust-model row **inbox (low)**: a client
/// cannot hold more than the limit of sessions.
public final class ConnectionCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    /// The most connections at once (at least 1).
    public let limit: Int
    /// Creates a counter allowing `limit` connections (at least 1).
    public init(limit: Int) { self.limit = max(1, limit) }
    /// Takes a place; false when all are taken.
    public func enter() -> Bool { lock.lock(); defer { lock.unlock() }; guard count < limit else { return false }; count += 1; return true }
    /// Gives a place back.
    public func leave() { lock.lock(); count -= 1; lock.unlock() }
}
