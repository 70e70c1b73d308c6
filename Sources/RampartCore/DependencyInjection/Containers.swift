import Foundation

/// A typed name for one injectable dependency, used as the cache key of a container.
///
/// Each module declares the keys of what it provides:
/// ```swift
/// extension DependencyKey where Value == any Keychain {
///     public static let keychain = DependencyKey("keychain")
/// }
/// extension GlobalContainer: HasKeychain {
///     public var keychain: any Keychain { resolve(.keychain) { FileKeychain(...) } }
/// }
/// ```
public struct DependencyKey<Value>: Hashable, Sendable {
    public let name: String
    public init(_ name: String) { self.name = name }
}

/// Lazily created instances with the lifetime of the container that owns this cache.
///
/// `resolve` creates an instance on first use and returns the same one afterwards; `override`
/// installs a chosen instance before first use (tests, or the app's composition root choosing
/// a backend). Thread-safe; creation may resolve other dependencies (the lock is recursive).
public final class InstanceCache: @unchecked Sendable {
    private let lock = NSRecursiveLock()
    private var instances: [String: Any] = [:]

    public init() {}

    /// Runs `body` holding the cache's (recursive) lock: a look-up, a creation and an
    /// installation that must not interleave with another thread's.
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock.lock(); defer { lock.unlock() }
        return try body()
    }

    public func resolve<Value>(_ key: DependencyKey<Value>, _ make: () throws -> Value) rethrows -> Value {
        lock.lock(); defer { lock.unlock() }
        if let existing = instances[key.name] as? Value { return existing }
        let created = try make()
        instances[key.name] = created
        return created
    }

    public func override<Value>(_ key: DependencyKey<Value>, with value: Value) {
        lock.withLock { instances[key.name] = value }
    }

    /// The instance cached under `key`, if one was created or installed (nothing is created).
    public func current<Value>(_ key: DependencyKey<Value>) -> Value? {
        lock.withLock { instances[key.name] as? Value }
    }

    /// Drops the instance cached under `key`; the next `resolve` creates a new one.
    public func remove<Value>(_ key: DependencyKey<Value>) {
        lock.withLock { _ = instances.removeValue(forKey: key.name) }
    }

    /// Drops every cached instance (they are released once nobody else holds them).
    public func removeAll() {
        lock.withLock { instances.removeAll() }
    }
}

/// Where the app keeps its files, and the clock it runs on.
public struct RampartEnvironment: Sendable {
    /// The root folder of everything Rampart stores (keychain, databases, caches).
    public var homeDirectory: URL
    /// The clock used for autolock and expiry.
    public var clock: any RampartClock
    /// Free-form settings read by modules (e.g. `keychain.backend = file|secret-service|memory`).
    public var settings: [String: String]

    public init(homeDirectory: URL, clock: any RampartClock = SystemClock(), settings: [String: String] = [:]) {
        self.homeDirectory = homeDirectory
        self.clock = clock
        self.settings = settings
    }
}

/// App-wide dependencies (keychain, clock, wipe registry, …), created lazily and kept for the
/// container's lifetime. Modules add `Has…` conformances in extensions.
///
/// Trust-model section "Dependency injection": a type declares
/// `typealias Dependencies = HasA & HasB` and is given a container; it sees only what it declared.
open class GlobalContainer: @unchecked Sendable {
    public let environment: RampartEnvironment
    public let instances = InstanceCache()

    public init(environment: RampartEnvironment) {
        self.environment = environment
    }

    /// Shorthand for `instances.resolve`.
    public func resolve<Value>(_ key: DependencyKey<Value>, _ make: () throws -> Value) rethrows -> Value {
        try instances.resolve(key, make)
    }

    /// Shorthand for `instances.override`.
    public func override<Value>(_ key: DependencyKey<Value>, with value: Value) {
        instances.override(key, with: value)
    }
}

/// Dependencies of one logged-in user (Keymaker, sealed store, caches), created lazily and
/// released with the container at logout. It also exposes the global container's dependencies.
open class UserContainer: @unchecked Sendable {
    public let global: GlobalContainer
    public let userID: UserID
    public let instances = InstanceCache()

    public init(userID: UserID, global: GlobalContainer) {
        self.userID = userID
        self.global = global
    }

    public func resolve<Value>(_ key: DependencyKey<Value>, _ make: () throws -> Value) rethrows -> Value {
        try instances.resolve(key, make)
    }

    public func override<Value>(_ key: DependencyKey<Value>, with value: Value) {
        instances.override(key, with: value)
    }
}

extension DependencyKey where Value == WipeRegistry {
    public static let wipeRegistry = DependencyKey("wipeRegistry")
}

extension GlobalContainer: HasClock, HasWipeRegistry {
    public var clock: any RampartClock { environment.clock }
    public var wipeRegistry: WipeRegistry { resolve(.wipeRegistry) { WipeRegistry() } }
}

extension UserContainer: HasClock, HasWipeRegistry {
    public var clock: any RampartClock { global.clock }
    public var wipeRegistry: WipeRegistry { global.wipeRegistry }
}

/// Gives access to the file locations.
public protocol HasEnvironment {
    var environment: RampartEnvironment { get }
}

extension GlobalContainer: HasEnvironment {}
extension UserContainer: HasEnvironment {
    public var environment: RampartEnvironment { global.environment }
}
