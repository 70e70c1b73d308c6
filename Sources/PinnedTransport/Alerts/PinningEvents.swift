import Foundation

/// Something about pinning the user or the app should know. ``isAlert`` events are the ones the
/// trust model asks to show as an alert ("the alert is shown and the connection cut").
///
/// Trust-model row: **transport (network), low trust — a person in the middle**.
public enum PinningEvent: Sendable, Equatable {
    /// Enforced pin mismatch: the connection was cut. Show an alert.
    case pinMismatch(PinViolationReport)
    /// Report-only mismatch: the connection went on, a report was sent.
    case pinMismatchReported(PinViolationReport)
    /// The policy for `domain` expired on `expiration`: pins were not enforced for `host`.
    case policyExpired(domain: String, host: String, expiration: Date)
    /// A report could not be delivered to the sink.
    case reportNotDelivered(PinViolationReport, reason: String)

    /// Whether the UI must show this as an alert.
    public var isAlert: Bool {
        if case .pinMismatch = self { return true }
        return false
    }

    /// A sentence the UI can show.
    public var message: String {
        switch self {
        case .pinMismatch(let report):
            return "The connection to \(report.host) was cut: the server's certificate is not the one this app "
                + "expects. Someone may be intercepting your traffic (a proxy or a hostile network). Nothing was sent."
        case .pinMismatchReported(let report):
            return "The certificate of \(report.host) does not match the pins; reported (pinning in report-only mode)."
        case .policyExpired(let domain, let host, let expiration):
            return "Warning: the pinning policy for \(domain) expired on \(ISO8601DateFormatter().string(from: expiration)); "
                + "\(host) was checked by TLS only. Update the app."
        case .reportNotDelivered(let report, let reason):
            return "The pin violation report for \(report.host) could not be delivered: \(reason)."
        }
    }
}

/// Broadcasts ``PinningEvent``s to any number of listeners as `AsyncStream`s.
///
/// Trust-model row: **transport (network), low trust**: the UI subscribes once and shows the
/// alert for every cut connection.
///
/// ```swift
/// for await event in client.events.stream() where event.isAlert { showAlert(event.message) }
/// ```
public final class PinningEvents: Sendable {
    private let state = LockedState()

    /// A broadcaster with no listener yet.
    public init() {}

    /// A new stream of every event emitted from now on. It ends when the client shuts down.
    public func stream() -> AsyncStream<PinningEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: PinningEvent.self, bufferingPolicy: .bufferingNewest(256))
        let id = state.add(continuation)
        continuation.onTermination = { [state] _ in state.remove(id) }
        return stream
    }

    /// Sends `event` to every listener.
    public func emit(_ event: PinningEvent) {
        for continuation in state.all() { continuation.yield(event) }
    }

    /// Ends every stream.
    public func finish() {
        for continuation in state.removeAll() { continuation.finish() }
    }

    private final class LockedState: @unchecked Sendable {
        private let lock = NSLock()
        private var next = 0
        private var continuations: [Int: AsyncStream<PinningEvent>.Continuation] = [:]

        func add(_ continuation: AsyncStream<PinningEvent>.Continuation) -> Int {
            lock.withLock {
                next += 1
                continuations[next] = continuation
                return next
            }
        }

        func remove(_ id: Int) { lock.withLock { _ = continuations.removeValue(forKey: id) } }
        func all() -> [AsyncStream<PinningEvent>.Continuation] { lock.withLock { Array(continuations.values) } }
        func removeAll() -> [AsyncStream<PinningEvent>.Continuation] {
            lock.withLock {
                let all = Array(continuations.values)
                continuations.removeAll()
                return all
            }
        }
    }
}
