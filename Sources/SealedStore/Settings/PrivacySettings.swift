import Crypto
import Foundation
import GRDB
import RampartCore

/// The stored autolock choice (when the MainKey leaves memory). Mirrors the Keymaker's
/// `AutolockSetting` case by case; the store keeps it authenticated, the Keymaker applies it.
public enum AutolockSetting: Sendable, Hashable, Codable {
    /// Never lock automatically (weakest).
    case never
    /// Lock when the app enters the background.
    case onBackground
    /// Lock after this many minutes without user activity.
    case afterMinutes(Int)
}

/// The settings whose silent change would hurt privacy.
///
/// Trust-model row: **settings — modified: high** ("a silent change can hurt privacy:
/// auto-load images, strip image metadata"). Each setting is stored with an HMAC-SHA256 under
/// the sub-key `store.settings-mac[user]` of the MainKey, over (user, setting name, value). A
/// value changed on disk without the key fails the check; the store then uses ``safeDefaults``
/// for that setting and reports a ``SettingIntegrityWarning``.
public struct PrivacySettings: Sendable, Hashable, Codable {
    /// Load remote images, CSS and fonts automatically (tracks the reader). Safe default: off.
    public var autoLoadRemoteContent: Bool
    /// Remove EXIF and other metadata from images before sending. Safe default: on.
    public var stripImageMetadata: Bool
    /// Senders whose remote content loads automatically. Safe default: none.
    public var trustedSenders: [String]
    /// When the MainKey is locked. Safe default: ``AutolockSetting/onBackground``.
    public var autolock: AutolockSetting
    /// "Block all remote content": wins over ``autoLoadRemoteContent``, over trusted senders and
    /// over a request to load remote content for one message. Default: off. A store written
    /// before this setting existed has no value for it and reads as off (its set of settings is
    /// still authentic); the next save stores it.
    public var blockAllRemoteContent: Bool

    public init(autoLoadRemoteContent: Bool, stripImageMetadata: Bool, trustedSenders: [String],
                autolock: AutolockSetting, blockAllRemoteContent: Bool = false) {
        self.autoLoadRemoteContent = autoLoadRemoteContent
        self.stripImageMetadata = stripImageMetadata
        self.trustedSenders = trustedSenders
        self.autolock = autolock
        self.blockAllRemoteContent = blockAllRemoteContent
    }

    /// The values used when nothing is stored or a stored value fails its integrity check.
    public static let safeDefaults = PrivacySettings(autoLoadRemoteContent: false, stripImageMetadata: true,
                                                     trustedSenders: [], autolock: .onBackground)
}

/// Settings as read from disk, with a warning for each value that failed its check.
public struct PrivacySettingsReadout: Sendable, Hashable {
    public let settings: PrivacySettings
    public let warnings: [SettingIntegrityWarning]
}

/// A stored setting that did not verify and was replaced by its safe default.
public struct SettingIntegrityWarning: Sendable, Hashable, CustomStringConvertible {
    public enum Reason: String, Sendable, Hashable {
        /// The value or its MAC was changed outside Rampart (or written under another key).
        case authenticationFailed
        /// The value authenticated but does not decode (written by an incompatible version).
        case unreadable
        /// The set of stored settings is not the one Rampart last wrote: an older value was put
        /// back, or a setting was removed or added. Every setting falls back to its safe default.
        case rolledBack
    }

    public let setting: String
    public let reason: Reason

    public var description: String {
        switch reason {
        case .authenticationFailed:
            "The setting '\(setting)' was changed outside Rampart; the safe default is used. Check your settings."
        case .unreadable:
            "The setting '\(setting)' could not be read; the safe default is used."
        case .rolledBack:
            "The stored settings were replaced by an older copy outside Rampart; the safe default of '\(setting)' is used. Check your settings and save them again."
        }
    }
}

extension SealedStore {
    private static let settingNames = ["autoLoadRemoteContent", "stripImageMetadata", "trustedSenders", "autolock", "blockAllRemoteContent"]

    /// Reads the privacy settings, verifying each one and the set of them (a replayed older
    /// value or a removed one is caught by the store's authenticated state); failed values fall
    /// back to their safe default with a warning.
    public func privacySettings() throws -> PrivacySettingsReadout {
        try read([.settings, .state]) { db, keys in
            guard let key = keys.settingsKey else { preconditionFailure("settings key not derived") }
            var settings = PrivacySettings.safeDefaults
            var warnings: [SettingIntegrityWarning] = []
            let setIsAuthentic: Bool
            do {
                try checkRowSets([StoreState.settingsTable], in: db, keys: keys)
                setIsAuthentic = true
            } catch SealedStoreError.tampered {
                setIsAuthentic = false
            }
            guard setIsAuthentic else {
                // Which value is the older one cannot be told apart: none is used.
                forgetChecks([StoreState.settingsTable])
                return PrivacySettingsReadout(settings: settings, warnings: Self.settingNames.sorted().map {
                    SettingIntegrityWarning(setting: $0, reason: .rolledBack)
                })
            }
            let rows = try Row.fetchAll(db, sql: "SELECT name, value, version, mac FROM settings")
            for row in rows {
                guard let name = try? row.decode(String.self, forColumn: "name"),
                      Self.settingNames.contains(name) else { continue }
                guard let value = try? row.decode(String.self, forColumn: "value"),
                      let version = try? row.decode(Int64.self, forColumn: "version"),
                      let mac = try? row.decode(Data.self, forColumn: "mac") else {
                    warnings.append(SettingIntegrityWarning(setting: name, reason: .unreadable))
                    continue
                }
                guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: Self.macInput(user, name, value, version),
                                                             using: key) else {
                    warnings.append(SettingIntegrityWarning(setting: name, reason: .authenticationFailed))
                    continue
                }
                do {
                    try Self.apply(name: name, json: value, to: &settings)
                } catch {
                    warnings.append(SettingIntegrityWarning(setting: name, reason: .unreadable))
                }
            }
            return PrivacySettingsReadout(settings: settings, warnings: warnings.sorted { $0.setting < $1.setting })
        }
    }

    /// Stores every privacy setting with a fresh MAC and version, in one transaction. The stored
    /// set is replaced as a whole (saving the settings again repairs a set changed on disk).
    public func setPrivacySettings(_ settings: PrivacySettings) throws {
        try mutate(.settings) { db, keys, state in
            guard let key = keys.settingsKey else { preconditionFailure("settings key not derived") }
            try Self.store(settings, in: db, user: user, key: key, state: state)
        }
        forgetChecks([StoreState.settingsTable])
    }

    /// Writes the settings' rows; `names` limits them (a test writes the set an older version wrote).
    static func store(_ settings: PrivacySettings, in db: Database, user: UserID, key: SymmetricKey,
                      state: StateTransaction, names: [String] = settingNames) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        func json<T: Encodable>(_ value: T) throws -> String { String(decoding: try encoder.encode(value), as: UTF8.self) }
        let values: [(String, String)] = [
            ("autoLoadRemoteContent", try json(settings.autoLoadRemoteContent)),
            ("stripImageMetadata", try json(settings.stripImageMetadata)),
            ("trustedSenders", try json(settings.trustedSenders)),
            ("autolock", try json(settings.autolock)),
            ("blockAllRemoteContent", try json(settings.blockAllRemoteContent)),
        ].filter { names.contains($0.0) }
        try db.execute(sql: "DELETE FROM settings")
        var digest = StoreState.TableDigest()
        let version = state.version
        for (name, value) in values {
            let mac = Data(HMAC<SHA256>.authenticationCode(for: macInput(user, name, value, version), using: key))
            try db.execute(sql: "INSERT INTO settings (name, value, version, mac) VALUES (?, ?, ?, ?)",
                           arguments: [name, value, version, mac])
            digest.toggle(state.key.settingElement(name: name, version: version))
            digest.count += 1
        }
        state.reset(StoreState.settingsTable, to: digest)
    }

    static func macInput(_ user: UserID, _ name: String, _ value: String, _ version: Int64) -> [UInt8] {
        var bytes = Array("rampart.settings.v2".utf8)
        for part in [user.rawValue, name, value] {
            withUnsafeBytes(of: UInt32(part.utf8.count).bigEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: part.utf8)
        }
        withUnsafeBytes(of: version.bigEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    static func apply(name: String, json: String, to settings: inout PrivacySettings) throws {
        let decoder = JSONDecoder()
        let data = Data(json.utf8)
        switch name {
        case "autoLoadRemoteContent": settings.autoLoadRemoteContent = try decoder.decode(Bool.self, from: data)
        case "stripImageMetadata": settings.stripImageMetadata = try decoder.decode(Bool.self, from: data)
        case "trustedSenders": settings.trustedSenders = try decoder.decode([String].self, from: data)
        case "autolock": settings.autolock = try decoder.decode(AutolockSetting.self, from: data)
        case "blockAllRemoteContent": settings.blockAllRemoteContent = try decoder.decode(Bool.self, from: data)
        default: break
        }
    }
}
