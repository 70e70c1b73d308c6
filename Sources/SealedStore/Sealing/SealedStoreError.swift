import Foundation
import RampartCore

/// Every failure of the sealed store, typed.
///
/// Trust-model rows: **database (critical to read, disclose, modify)** — a modified or moved
/// ciphertext surfaces as ``tampered(table:column:primaryKey:reason:)``, never as data;
/// **device memory** — any access while the MainKey is locked is ``locked(_:)``.
public enum SealedStoreError: DescribedRampartError, Equatable {
    /// The MainKey is locked (or was wiped during the operation). Unlock, then retry.
    case locked(UserID)
    /// A sealed value failed authentication: it was changed, truncated, moved to another row,
    /// column or user, or sealed under a key this store does not hold.
    case tampered(table: String, column: String, primaryKey: String, reason: TamperReason)
    /// No row with this identifier.
    case notFound(kind: String, id: String)
    /// The store was opened with a key provider of another user.
    case wrongUser(store: UserID, provider: UserID)
    /// The store was closed (after a wipe or an explicit close).
    case closed(UserID)
    /// A value given to the store is not acceptable (empty id, negative limit, ...).
    case invalidInput(String)
    /// SQLite reported an error (disk full, corrupt file, I/O error).
    case database(code: Int32, message: String)
    /// A file or folder of the store could not be created, checked or removed.
    case files(String)
    /// The dependency container cannot build a store (no MainKey provider registered).
    case notConfigured(String)
    /// Key rotation was asked with keys that do not match the rotation already in progress.
    case rotationMismatch(inProgressFrom: String, inProgressTo: String)
    /// The database was written by an older Rampart whose layout did not authenticate whole rows:
    /// it is not opened (nothing in it can be vouched for). Log out and in again to download a
    /// fresh copy from the server.
    case outdatedStore(UserID)

    /// The code, category (the CLI's exit status) and message of each case.
    public var info: RampartErrorInfo {
        switch self {
        case .locked(let user): RampartErrorInfo(code: "store.locked", kind: .locked, message: "The local store of \(user) is locked: unlock with your PIN (or hardware key) first.")
        case .tampered(let table, let column, let primaryKey, let reason): RampartErrorInfo(code: "store.tampered", kind: .tampered, message: "Stored data was modified outside Rampart (\(table).\(column), row \(primaryKey): \(reason)). "
                + "It is not shown. Log out and in again to download a clean copy.")
        case .notFound(let kind, let id): RampartErrorInfo(code: "store.notFound", kind: .notFound, message: "No \(kind) with id \(id) in the local store.")
        case .wrongUser(let store, let provider): RampartErrorInfo(code: "store.wrongUser", kind: .failure, message: "The store of \(store) cannot be opened with the key of \(provider).")
        case .closed(let user): RampartErrorInfo(code: "store.closed", kind: .failure, message: "The local store of \(user) was closed (wiped or logged out); open it again after login.")
        case .invalidInput(let detail): RampartErrorInfo(code: "store.invalidInput", kind: .badInput, message: "Invalid input for the local store: \(detail).")
        case .database(let code, let message): RampartErrorInfo(code: "store.database", kind: .failure, message: "The local database failed (SQLite code \(code)): \(message). If this persists, log out to rebuild it.")
        case .files(let detail): RampartErrorInfo(code: "store.files", kind: .failure, message: "The store's files could not be prepared: \(detail).")
        case .notConfigured(let detail): RampartErrorInfo(code: "store.notConfigured", kind: .failure, message: "The sealed store is not configured: \(detail).")
        case .rotationMismatch(let from, let to): RampartErrorInfo(code: "store.rotationMismatch", kind: .failure, message: "A key rotation from key \(from) to key \(to) is in progress; resume it with the same keys.")
        case .outdatedStore(let user): RampartErrorInfo(code: "store.outdated", kind: .failure, message: "The local store of \(user) was written by an older version of Rampart that did not authenticate whole rows, so it is not used. "
                + "Log out and log in again to download a fresh copy from the server (mail on the server is not affected; local privacy settings return to their safe defaults).")
        }
    }

}

/// Why a sealed value was rejected.
public enum TamperReason: String, Sendable, Equatable, Codable, CustomStringConvertible, Error {
    /// The envelope is shorter than its header and tag.
    case truncated
    /// The envelope's format or algorithm byte is unknown.
    case unknownFormat
    /// The envelope names a key version other than the store's current one.
    case foreignKeyVersion
    /// The AEAD tag did not verify: content changed, or the value belongs to another
    /// row, column, table, user or schema version.
    case authenticationFailed
    /// The value authenticated but its content is malformed (an encoder bug, not an attack).
    case malformedContent
    /// A sealed column is NULL where a value is required.
    case missingValue
    /// The set of rows of a table is not the one Rampart last wrote: a row was deleted or
    /// inserted, or an older copy of a row was put back.
    case rowSetChanged
    /// The store is older than the one the rollback anchor (keychain) remembers: an older copy
    /// of the database was put back.
    case rolledBack

    public var description: String {
        switch self {
        case .truncated: "truncated ciphertext"
        case .unknownFormat: "unknown envelope format"
        case .foreignKeyVersion: "sealed under another key"
        case .authenticationFailed: "authentication failed (changed or moved)"
        case .malformedContent: "malformed content"
        case .missingValue: "missing value"
        case .rowSetChanged: "rows deleted, inserted or replaced by older copies"
        case .rolledBack: "an older copy of the store was put back"
        }
    }
}
