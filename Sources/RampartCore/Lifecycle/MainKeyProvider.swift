import Foundation

/// An event in the life of the MainKey, published to every dependent.
public enum KeyLifecycleEvent: Sendable, Equatable {
    /// The MainKey was unwrapped and is usable.
    case unlocked(UserID)
    /// The MainKey (and every key derived from it) was zeroized. Drop every decrypted value.
    case locked(UserID, reason: LockReason)
    /// Every local item of the user was erased (logout or too many wrong PINs).
    case wiped(UserID, reason: WipeReason)
}

/// Why the MainKey was locked.
public enum LockReason: String, Sendable, Equatable, Codable {
    case userRequest, autolockTimeout, enteredBackground, clockTampering, logout, wipe
}

/// Why the user's local data was wiped.
public enum WipeReason: String, Sendable, Equatable, Codable {
    case logout, tooManyFailedAttempts, userRequest
}

/// The one way for a component to get the MainKey: only while it is unlocked.
///
/// Trust-model row: **device storage (low)** — components that read or write local data ask the
/// provider for the key at each use and never keep it (nor anything derived from it) past a
/// ``KeyLifecycleEvent/locked(_:reason:)`` event.
public protocol MainKeyProvider: AnyObject, Sendable {
    /// The user this provider's key belongs to.
    var userID: UserID { get }
    /// Whether the key is currently in memory.
    var isUnlocked: Bool { get }
    /// The MainKey, valid until the next lock.
    /// - Throws: ``LockedError`` while locked.
    func currentMainKey() throws -> MainKey
    /// Registers a handler run synchronously on every lifecycle event, before the call that
    /// caused it returns. Keep the returned token to keep the observer registered.
    func observeLifecycle(_ handler: @escaping @Sendable (KeyLifecycleEvent) -> Void) -> ObserverToken
    /// Lifecycle events as an asynchronous stream.
    func lifecycleEvents() -> AsyncStream<KeyLifecycleEvent>
}

extension MainKeyProvider {
    /// Runs `body` with the MainKey; throws ``LockedError`` while locked.
    public func withMainKey<R>(_ body: (MainKey) throws -> R) throws -> R {
        try body(try currentMainKey())
    }
}

/// Gives access to the MainKey provider of a user: the Keymaker of this process, or the agent
/// that holds the unlocked key in another process (the composition root chooses).
public protocol HasMainKeyProvider {
    var mainKeyProvider: any MainKeyProvider { get }
}

extension DependencyKey where Value == any MainKeyProvider {
    /// The user's MainKey provider (see ``HasMainKeyProvider``). The Keymaker module resolves it
    /// to the user's Keymaker; the composition root overrides it with the agent's provider when
    /// the agent holds the key.
    public static let mainKeyProvider = DependencyKey("mainKeyProvider")
}

/// Thrown by every operation that needs the MainKey while it is locked.
public struct LockedError: Error, Equatable, CustomStringConvertible {
    public let userID: UserID
    public init(userID: UserID) { self.userID = userID }
    public var description: String {
        "Rampart is locked for \(userID): unlock with your PIN (or hardware key) first."
    }
}

/// Keeps an observer registered; unregisters it when cancelled (and, unless created with
/// `cancelsOnRelease: false`, when released).
public final class ObserverToken: @unchecked Sendable {
    private let lock = NSLock()
    private var onCancel: (() -> Void)?
    private let cancelsOnRelease: Bool
    public init(cancelsOnRelease: Bool = true, onCancel: @escaping () -> Void) {
        self.onCancel = onCancel
        self.cancelsOnRelease = cancelsOnRelease
    }
    public func cancel() {
        let action = lock.withLock { () -> (() -> Void)? in
            defer { onCancel = nil }
            return onCancel
        }
        action?()
    }
    deinit { if cancelsOnRelease { cancel() } }
}

/// A thread-safe list of lifecycle observers and stream continuations. Building block for
/// ``MainKeyProvider`` implementations.
public final class LifecycleBroadcaster: @unchecked Sendable {
    private let lock = NSLock()
    private var handlers: [UUID: @Sendable (KeyLifecycleEvent) -> Void] = [:]
    private var continuations: [UUID: AsyncStream<KeyLifecycleEvent>.Continuation] = [:]

    public init() {}

    public func observe(_ handler: @escaping @Sendable (KeyLifecycleEvent) -> Void) -> ObserverToken {
        let id = UUID()
        lock.withLock { handlers[id] = handler }
        return ObserverToken { [weak self] in
            guard let self else { return }
            _ = self.lock.withLock { self.handlers.removeValue(forKey: id) }
        }
    }

    public func stream() -> AsyncStream<KeyLifecycleEvent> {
        let id = UUID()
        let (stream, continuation) = AsyncStream<KeyLifecycleEvent>.makeStream(bufferingPolicy: .unbounded)
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            _ = self.lock.withLock { self.continuations.removeValue(forKey: id) }
        }
        lock.withLock { continuations[id] = continuation }
        return stream
    }

    /// Delivers `event` to every handler (synchronously) and every stream.
    public func publish(_ event: KeyLifecycleEvent) {
        let (handlers, continuations) = lock.withLock { (Array(self.handlers.values), Array(self.continuations.values)) }
        handlers.forEach { $0(event) }
        continuations.forEach { $0.yield(event) }
    }
}
