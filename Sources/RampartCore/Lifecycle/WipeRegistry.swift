import Foundation

/// Something that holds local data of a user and can erase it.
///
/// Trust-model rows: **database**, **attachments**, **push payload key** — everything a user left on
/// the device goes when the user logs out or too many wrong PINs are entered.
public protocol Wipeable: Sendable {
    /// A short name for reports (e.g. `keychain`, `sealed-store`).
    var wipeName: String { get }
    /// Erases every local item of `user`. Must be idempotent and must not need the MainKey.
    func wipe(user: UserID) throws
}

/// The list of ``Wipeable`` components; the Keymaker runs them all on a wipe.
public final class WipeRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var entries: [(id: UUID, item: any Wipeable)] = []

    public init() {}

    /// Registers `item` for the registry's lifetime; the returned token unregisters it when
    /// cancelled explicitly (releasing the token does not).
    @discardableResult
    public func register(_ item: any Wipeable) -> ObserverToken {
        let id = UUID()
        lock.withLock { entries.append((id, item)) }
        return ObserverToken(cancelsOnRelease: false) { [weak self] in
            guard let self else { return }
            self.lock.withLock { self.entries.removeAll { $0.id == id } }
        }
    }

    /// Names of the registered components, in registration order.
    public var registeredNames: [String] { lock.withLock { entries.map(\.item.wipeName) } }

    /// Wipes `user` from every registered component. Runs all of them even when one fails, and
    /// reports every failure.
    public func wipeAll(user: UserID) -> WipeReport {
        let items = lock.withLock { entries.map(\.item) }
        var report = WipeReport()
        for item in items {
            do {
                try item.wipe(user: user)
                report.wiped.append(item.wipeName)
            } catch {
                report.failures.append(.init(component: item.wipeName, message: String(describing: error)))
            }
        }
        return report
    }
}

/// What a wipe erased and what failed.
public struct WipeReport: Sendable, Equatable, Codable {
    public struct Failure: Sendable, Equatable, Codable {
        public let component: String
        public let message: String
        public init(component: String, message: String) {
            self.component = component
            self.message = message
        }
    }
    public var wiped: [String] = []
    public var failures: [Failure] = []
    public init(wiped: [String] = [], failures: [Failure] = []) {
        self.wiped = wiped
        self.failures = failures
    }
    public var isComplete: Bool { failures.isEmpty }
}

/// Gives access to the wipe registry.
public protocol HasWipeRegistry {
    var wipeRegistry: WipeRegistry { get }
}
