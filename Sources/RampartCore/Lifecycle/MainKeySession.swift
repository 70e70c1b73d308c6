import Foundation

/// The in-memory holder of one user's unlocked MainKey: the state behind a ``MainKeyProvider``.
///
/// Trust-model row: **device memory (moderate)** — "keep secrets in memory only while unlocked;
/// wipe them on lock". ``lock(reason:)`` wipes the key (and every key derived from it) *before*
/// publishing the event, so an observer can never see a live key after a lock.
///
/// The Keymaker owns one session per user and drives it (unwrap → ``unlock(with:)``, autolock →
/// ``lock(reason:)``). Other processes that obtain a MainKey by other means (a test, the agent)
/// use the same type.
public final class MainKeySession: MainKeyProvider, @unchecked Sendable {
    public let userID: UserID
    private let lock = NSLock()
    private var key: MainKey?
    private let broadcaster = LifecycleBroadcaster()

    public init(userID: UserID) {
        self.userID = userID
    }

    public var isUnlocked: Bool {
        lock.withLock { key.map { !$0.isWiped } ?? false }
    }

    public func currentMainKey() throws -> MainKey {
        try lock.withLock {
            guard let key, !key.isWiped else { throw LockedError(userID: userID) }
            return key
        }
    }

    /// Installs `key` as the unlocked MainKey (wiping any previous one) and publishes
    /// ``KeyLifecycleEvent/unlocked(_:)``.
    public func unlock(with key: MainKey) {
        let previous = lock.withLock { () -> MainKey? in
            defer { self.key = key }
            return self.key
        }
        if let previous, previous !== key { previous.wipe() }
        broadcaster.publish(.unlocked(userID))
    }

    /// Wipes the MainKey and its derived keys, then publishes ``KeyLifecycleEvent/locked(_:reason:)``.
    /// Locking an already locked session publishes nothing.
    public func lock(reason: LockReason) {
        let previous = lock.withLock { () -> MainKey? in
            defer { self.key = nil }
            return self.key
        }
        guard let previous else { return }
        previous.wipe()
        broadcaster.publish(.locked(userID, reason: reason))
    }

    /// Publishes a wipe event (after the owner erased the user's data).
    public func publishWipe(reason: WipeReason) {
        broadcaster.publish(.wiped(userID, reason: reason))
    }

    public func observeLifecycle(_ handler: @escaping @Sendable (KeyLifecycleEvent) -> Void) -> ObserverToken {
        broadcaster.observe(handler)
    }

    public func lifecycleEvents() -> AsyncStream<KeyLifecycleEvent> {
        broadcaster.stream()
    }
}
