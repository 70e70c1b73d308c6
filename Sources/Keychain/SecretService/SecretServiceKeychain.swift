#if canImport(CLibSecret)
import CLibSecret
import Foundation
import RampartCore

/// A keychain in the desktop's Secret Service (GNOME Keyring, KWallet, KeePassXC), reached
/// through libsecret over the D-Bus session bus.
///
/// Trust-model row: **keychain (low)** — on a Linux desktop the Secret Service is the platform
/// keychain: its collection is encrypted with the login password and locked with the session.
/// It does **not** bind items to the device: the accessibility is recorded as an attribute,
/// but a keyring file copied with its password opens elsewhere (<doc:SecretServiceBackend>).
///
/// ## Mapping
/// Items use the schema ``schemaName`` (`org.rampart.Keychain`, stored by libsecret as the
/// `xdg:schema` attribute) with four string attributes:
/// `rampart.group` (access group), `rampart.service`, `rampart.account`, and
/// `rampart.accessibility` (the ``KeychainAccessibility`` raw value). The secret is the value's
/// bytes (content type `application/octet-stream`), stored in the default collection.
///
/// ## Errors
/// No session bus or no Secret Service daemon → ``KeychainError/backendUnavailable(_:)``;
/// a locked collection or a D-Bus access refusal → ``KeychainError/accessDenied(_:)``.
///
/// All calls are synchronous libsecret calls, serialized by a process-wide lock.
public final class SecretServiceKeychain: Keychain, @unchecked Sendable {
    /// The libsecret schema name of Rampart's items.
    public static let schemaName = "org.rampart.Keychain"
    /// The largest value stored (the same limit as the file backend).
    public static let maximumValueSize = KeychainLimits.maximumValueSize

    static let groupAttribute = "rampart.group"
    static let serviceAttribute = "rampart.service"
    static let accountAttribute = "rampart.account"
    static let accessibilityAttribute = "rampart.accessibility"

    /// libsecret keeps per-thread main contexts for its sync calls; one lock keeps every call
    /// of this process in order (the contract's check-then-store in `add` relies on it).
    private static let callLock = NSLock()

    // Immutable after init; freed in deinit.
    private let schema: UnsafeMutablePointer<SecretSchema>

    /// Connects lazily: nothing happens until the first call.
    public init() {
        let types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, nil)
        for name in [Self.groupAttribute, Self.serviceAttribute, Self.accountAttribute, Self.accessibilityAttribute] {
            // GINT_TO_POINTER(SECRET_SCHEMA_ATTRIBUTE_STRING) is NULL.
            g_hash_table_insert(types, UnsafeMutableRawPointer(g_strdup(name)), nil)
        }
        schema = secret_schema_newv(Self.schemaName, SECRET_SCHEMA_NONE, types)
        g_hash_table_unref(types)
    }

    deinit {
        secret_schema_unref(schema)
    }

    public var backendName: String { "secret-service" }

    /// Connects to the Secret Service and opens a session.
    /// - Throws: ``KeychainError/backendUnavailable(_:)`` when there is no session bus or no
    ///   daemon answering `org.freedesktop.secrets`.
    public func probe() throws {
        try Self.callLock.withLock {
            var error: UnsafeMutablePointer<GError>?
            let service = secret_service_get_sync(SECRET_SERVICE_OPEN_SESSION, nil, &error)
            if let error { throw Self.map(error, operation: "connect") }
            if let service { g_object_unref(UnsafeMutableRawPointer(service)) }
        }
    }

    // MARK: - Keychain

    public func add(_ value: SecretBytes, for id: KeychainItemID, accessibility: KeychainAccessibility) throws {
        try checkSize(value, id)
        try Self.callLock.withLock {
            if try searchLocked(address(id)).first != nil { throw KeychainError.duplicate(id) }
            try storeLocked(value, id: id, accessibility: accessibility)
        }
    }

    public func read(_ id: KeychainItemID) throws -> SecretBytes {
        try Self.callLock.withLock {
            try withAttributes(address(id)) { attributes in
                var error: UnsafeMutablePointer<GError>?
                let found = secret_password_lookupv_binary_sync(schema, attributes, nil, &error)
                if let error { throw Self.map(error, operation: "look up \(id)") }
                guard let found else { throw KeychainError.notFound(id) }
                defer { secret_value_unref(UnsafeMutableRawPointer(found)) }
                var length: gsize = 0
                guard let bytes = secret_value_get(found, &length) else { return SecretBytes(copying: [UInt8]()) }
                return SecretBytes(copying: UnsafeRawBufferPointer(start: bytes, count: Int(length)))
            }
        }
    }

    public func update(_ value: SecretBytes, for id: KeychainItemID) throws {
        try checkSize(value, id)
        try Self.callLock.withLock {
            guard let existing = try searchLocked(address(id)).first else { throw KeychainError.notFound(id) }
            let accessibility = existing[Self.accessibilityAttribute].flatMap(KeychainAccessibility.init(rawValue:)) ?? .default
            // The store replaces the item whose attributes (accessibility included) all match.
            try storeLocked(value, id: id, accessibility: accessibility)
        }
    }

    public func delete(_ id: KeychainItemID) throws {
        try Self.callLock.withLock {
            guard try clearLocked(address(id), what: "\(id)") else { throw KeychainError.notFound(id) }
        }
    }

    public func deleteAll(service: String, accessGroup: KeychainAccessGroup) throws {
        try Self.callLock.withLock {
            _ = try clearLocked([Self.groupAttribute: accessGroup.name, Self.serviceAttribute: service],
                                what: "\(accessGroup.name)/\(service)")
        }
    }

    public func deleteAll(accessGroup: KeychainAccessGroup) throws {
        try Self.callLock.withLock {
            _ = try clearLocked([Self.groupAttribute: accessGroup.name], what: accessGroup.name)
        }
    }

    public func itemIDs(accessGroup: KeychainAccessGroup) throws -> [KeychainItemID] {
        let found = try Self.callLock.withLock { try searchLocked([Self.groupAttribute: accessGroup.name]) }
        let ids = found.compactMap { attributes -> KeychainItemID? in
            guard attributes[Self.groupAttribute] == accessGroup.name,
                  let service = attributes[Self.serviceAttribute],
                  let account = attributes[Self.accountAttribute] else { return nil }
            return KeychainItemID(service: service, account: account, accessGroup: accessGroup)
        }
        return Set(ids).sorted { ($0.service, $0.account) < ($1.service, $1.account) }
    }

    /// The accessibility recorded on an item.
    public func accessibility(of id: KeychainItemID) throws -> KeychainAccessibility {
        try Self.callLock.withLock {
            guard let existing = try searchLocked(address(id)).first else { throw KeychainError.notFound(id) }
            return existing[Self.accessibilityAttribute].flatMap(KeychainAccessibility.init(rawValue:)) ?? .default
        }
    }

    // MARK: - libsecret calls (callLock held)

    private func address(_ id: KeychainItemID) -> [String: String] {
        [Self.groupAttribute: id.accessGroup.name, Self.serviceAttribute: id.service, Self.accountAttribute: id.account]
    }

    private func checkSize(_ value: SecretBytes, _ id: KeychainItemID) throws {
        if value.count > Self.maximumValueSize {
            throw KeychainError.itemTooLarge(id, size: value.count, limit: Self.maximumValueSize)
        }
    }

    private func storeLocked(_ value: SecretBytes, id: KeychainItemID, accessibility: KeychainAccessibility) throws {
        var attributes = address(id)
        attributes[Self.accessibilityAttribute] = accessibility.rawValue
        let secret: OpaquePointer = try value.withUnsafeBytes { bytes in
            // secret_value_new copies into libsecret's own (non-pageable where possible) memory.
            guard let start = bytes.baseAddress, bytes.count > 0 else {
                return secret_value_new("", 0, "application/octet-stream")
            }
            return secret_value_new(start.assumingMemoryBound(to: CChar.self), gssize(bytes.count), "application/octet-stream")
        }
        defer { secret_value_unref(UnsafeMutableRawPointer(secret)) }
        try withAttributes(attributes) { table in
            var error: UnsafeMutablePointer<GError>?
            let stored = secret_password_storev_binary_sync(
                schema, table, nil, "Rampart keychain item \(id)", secret, nil, &error)
            if let error { throw Self.map(error, operation: "store \(id)") }
            if stored == 0 { throw KeychainError.backendUnavailable("the Secret Service did not store \(id)") }
        }
    }

    private func clearLocked(_ attributes: [String: String], what: String) throws -> Bool {
        try withAttributes(attributes) { table in
            var error: UnsafeMutablePointer<GError>?
            let cleared = secret_password_clearv_sync(schema, table, nil, &error)
            if let error { throw Self.map(error, operation: "delete \(what)") }
            return cleared != 0
        }
    }

    /// The attributes of every matching item (locked ones included; no value is read).
    private func searchLocked(_ attributes: [String: String]) throws -> [[String: String]] {
        try withAttributes(attributes) { table in
            var error: UnsafeMutablePointer<GError>?
            let flags = SecretSearchFlags(rawValue: SECRET_SEARCH_ALL.rawValue)
            let list = secret_password_searchv_sync(schema, table, flags, nil, &error)
            if let error { throw Self.map(error, operation: "search") }
            defer { if let list { g_list_free_full(list, g_object_unref) } }
            var results: [[String: String]] = []
            var node = list
            while let current = node {
                if let item = current.pointee.data {
                    let retrievable = OpaquePointer(item)
                    if let table = secret_retrievable_get_attributes(retrievable) {
                        results.append(Self.dictionary(table))
                        g_hash_table_unref(table)
                    }
                }
                node = current.pointee.next
            }
            return results
        }
    }

    private func withAttributes<R>(_ attributes: [String: String], _ body: (OpaquePointer) throws -> R) throws -> R {
        let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free)!
        defer { g_hash_table_unref(table) }
        for (key, value) in attributes {
            g_hash_table_insert(table, UnsafeMutableRawPointer(g_strdup(key)), UnsafeMutableRawPointer(g_strdup(value)))
        }
        return try body(table)
    }

    private static func dictionary(_ table: OpaquePointer) -> [String: String] {
        var result: [String: String] = [:]
        for name in [groupAttribute, serviceAttribute, accountAttribute, accessibilityAttribute] {
            if let value = g_hash_table_lookup(table, name) {
                result[name] = String(cString: value.assumingMemoryBound(to: CChar.self))
            }
        }
        return result
    }

    // MARK: - Errors

    /// Maps a GError (and frees it).
    static func map(_ error: UnsafeMutablePointer<GError>, operation: String) -> KeychainError {
        defer { g_error_free(error) }
        let domain = error.pointee.domain
        let code = error.pointee.code
        let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"
        let remote = g_dbus_error_get_remote_error(error).map { pointer -> String in
            defer { g_free(pointer) }
            return String(cString: pointer)
        } ?? ""
        let detail = "\(operation): \(message)"
        if domain == secret_error_get_quark() {
            if code == Int32(SECRET_ERROR_IS_LOCKED.rawValue) {
                return .accessDenied("the Secret Service collection is locked; unlock it (log in to the desktop session) — \(detail)")
            }
            return .backendUnavailable("the Secret Service answered with an error — \(detail)")
        }
        if remote.hasSuffix(".IsLocked") {
            return .accessDenied("the Secret Service collection is locked — \(detail)")
        }
        if domain == g_dbus_error_quark() {
            switch code {
            case Int32(G_DBUS_ERROR_ACCESS_DENIED.rawValue), Int32(G_DBUS_ERROR_AUTH_FAILED.rawValue):
                return .accessDenied(detail)
            default:
                return .backendUnavailable("no Secret Service on the D-Bus session bus (start gnome-keyring-daemon or another provider) — \(detail)")
            }
        }
        if domain == g_io_error_quark() {
            if code == Int32(G_IO_ERROR_PERMISSION_DENIED.rawValue) { return .accessDenied(detail) }
            return .backendUnavailable("no D-Bus session bus (is DBUS_SESSION_BUS_ADDRESS set?) — \(detail)")
        }
        return .backendUnavailable(detail)
    }
}
#endif
