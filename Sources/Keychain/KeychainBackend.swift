import Foundation
import RampartCore

/// Which keychain backend the app uses, chosen by the setting `keychain.backend`.
///
/// Trust-model rows: **keychain (low)** and **keychain defaults** — the platform keychain where
/// there is one (Apple), the private file keychain with device binding by default on Linux, the
/// desktop Secret Service when asked for.
///
/// | setting value      | backend                                        |
/// |--------------------|------------------------------------------------|
/// | `file` (Linux default) | ``FileKeychain`` at `<home>/keychain`      |
/// | `secret-service`   | `SecretServiceKeychain` (Linux, libsecret)     |
/// | `apple` (Apple default) | `AppleKeychain` (Security framework)      |
/// | `memory`           | ``InMemoryKeychain`` (nothing persisted)       |
public enum KeychainBackend: String, Sendable, CaseIterable {
    case file
    case secretService = "secret-service"
    case apple
    case memory

    /// The settings key read by ``init(environment:)``.
    public static let settingKey = "keychain.backend"

    /// The backend used when the setting is absent.
    public static var platformDefault: KeychainBackend {
        #if canImport(Security)
        .apple
        #else
        .file
        #endif
    }

    /// Reads `keychain.backend` from the environment's settings.
    /// - Throws: ``KeychainError/backendUnavailable(_:)`` for an unknown value or a backend this
    ///   platform does not have.
    public init(environment: RampartEnvironment) throws {
        guard let raw = environment.settings[Self.settingKey]?.trimmingCharacters(in: .whitespaces), !raw.isEmpty else {
            self = Self.platformDefault
            return
        }
        guard let backend = KeychainBackend(rawValue: raw) else {
            let known = Self.allCases.map(\.rawValue).joined(separator: ", ")
            throw KeychainError.backendUnavailable("unknown \(Self.settingKey) '\(raw)'; use one of: \(known)")
        }
        guard backend.isAvailableOnThisPlatform else {
            throw KeychainError.backendUnavailable("the '\(raw)' keychain backend does not exist on this platform")
        }
        self = backend
    }

    /// Whether this build has the backend.
    public var isAvailableOnThisPlatform: Bool {
        switch self {
        case .file, .memory: return true
        case .secretService:
            #if canImport(CLibSecret)
            return true
            #else
            return false
            #endif
        case .apple:
            #if canImport(Security)
            return true
            #else
            return false
            #endif
        }
    }

    /// Creates the backend for `environment` (the file keychain lives at `<home>/keychain`).
    /// Nothing is opened yet: a backend that cannot work reports it on the first operation.
    public func makeKeychain(environment: RampartEnvironment) -> any Keychain {
        switch self {
        case .file:
            return FileKeychain(directory: environment.homeDirectory.appendingPathComponent("keychain", isDirectory: true))
        case .memory:
            return InMemoryKeychain()
        case .secretService:
            #if canImport(CLibSecret)
            return SecretServiceKeychain()
            #else
            return UnavailableKeychain(reason: "the Secret Service backend is not built on this platform")
            #endif
        case .apple:
            #if canImport(Security)
            return AppleKeychain()
            #else
            return UnavailableKeychain(reason: "the Apple keychain exists only on Apple platforms")
            #endif
        }
    }

    /// The keychain chosen by `environment`, or one that reports why none could be chosen.
    public static func keychain(for environment: RampartEnvironment) -> any Keychain {
        do {
            return try KeychainBackend(environment: environment).makeKeychain(environment: environment)
        } catch let error as KeychainError {
            return UnavailableKeychain(error: error)
        } catch {
            return UnavailableKeychain(reason: "\(error)")
        }
    }
}

/// The keychain given when the configured backend cannot be used (an unknown
/// `keychain.backend` value, a backend missing on this platform): every operation throws the
/// configuration error, so the problem surfaces at the first use with a message to act on,
/// instead of silently falling back to a weaker store.
///
/// Trust-model row: **keychain (low)** — never downgrade silently.
public struct UnavailableKeychain: Keychain {
    /// The error every operation throws.
    public let error: KeychainError

    public init(error: KeychainError) { self.error = error }
    public init(reason: String) { self.error = .backendUnavailable(reason) }

    public var backendName: String { "unavailable" }
    public func add(_ value: SecretBytes, for id: KeychainItemID, accessibility: KeychainAccessibility) throws { throw error }
    public func read(_ id: KeychainItemID) throws -> SecretBytes { throw error }
    public func update(_ value: SecretBytes, for id: KeychainItemID) throws { throw error }
    public func delete(_ id: KeychainItemID) throws { throw error }
    public func deleteAll(service: String, accessGroup: KeychainAccessGroup) throws { throw error }
    public func deleteAll(accessGroup: KeychainAccessGroup) throws { throw error }
    public func itemIDs(accessGroup: KeychainAccessGroup) throws -> [KeychainItemID] { throw error }
}

extension DependencyKey where Value == any Keychain {
    /// The app-wide keychain.
    public static let keychain = DependencyKey("keychain")
}

extension GlobalContainer: HasKeychain {
    /// The keychain chosen by `keychain.backend` (see ``KeychainBackend``), created on first use.
    /// Tests and the composition root may `override(.keychain, with:)` before first use.
    public var keychain: any Keychain {
        resolve(.keychain) { KeychainBackend.keychain(for: environment) }
    }
}
