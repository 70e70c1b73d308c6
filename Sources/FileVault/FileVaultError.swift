import Foundation
import RampartCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every failure of the file vault, as a typed value with a message a person can act on.
///
/// Trust-model rows: **encrypted file blocks (modified: low; unavailable: moderate)** and
/// **cleartext files (critical)** — a missing, truncated, reordered or swapped block, a forged
/// manifest, a full disk or an oversized file each surface as their own case, and none of them
/// leaves cleartext behind or presents a partial file as complete.
public enum FileVaultError: Error, Equatable, Sendable, DescribedRampartError {
    /// The attachment is not in the cache (never stored, expired, evicted or purged).
    case notCached(attachment: String)
    /// A stored attachment failed authentication (modified, truncated or moved between users).
    case attachmentTampered(attachment: String)
    /// The file is larger than the configured limit.
    case fileTooLarge(size: Int64, limit: Int64)
    /// The disk (or the configured write budget) is full.
    case diskFull(path: String)
    /// A drive file has no stored manifest.
    case fileNotFound(file: String)
    /// A block listed in the manifest is not on disk.
    case missingBlock(file: String, index: Int)
    /// A block is truncated, reordered, swapped with another file's, or otherwise modified.
    case blockTampered(file: String, index: Int)
    /// The manifest failed authentication, or belongs to another file.
    case manifestTampered(file: String)
    /// A thumbnail is missing or failed authentication.
    case thumbnailTampered(file: String)
    /// An envelope of a format version this build does not read.
    case unsupportedVersion(UInt8)
    /// The source file changed size while it was being read.
    case sourceChanged(path: String)
    /// The MainKey is locked: unlock before reading or writing the vault.
    case locked
    /// The cleartext lease already ended (lock, explicit end, or task cancellation).
    case leaseEnded
    /// An identifier that cannot be used (empty, too long, or with characters outside
    /// `[A-Za-z0-9._-]`).
    case invalidIdentifier(String)
    /// The attachment index database failed.
    case index(message: String)
    /// A file-system call failed.
    case io(path: String, operation: String, errno: Int32)

    /// The code, category (the CLI's exit status) and message of each case.
    public var info: RampartErrorInfo {
        switch self {
        case .notCached(let id): RampartErrorInfo(code: "vault.notCached", kind: .failure, message: "Attachment \(id) is not in the local cache (expired, evicted or purged): download it again.")
        case .attachmentTampered(let id): RampartErrorInfo(code: "vault.attachmentTampered", kind: .tampered, message: "The cached copy of attachment \(id) failed authentication and was discarded: download it again.")
        case .fileTooLarge(let size, let limit): RampartErrorInfo(code: "vault.fileTooLarge", kind: .failure, message: "The file is \(size) bytes, over the limit of \(limit) bytes: raise the limit or choose a smaller file.")
        case .diskFull(let path): RampartErrorInfo(code: "vault.diskFull", kind: .failure, message: "No space left while writing \(path): free some disk space and try again (nothing partial was kept).")
        case .fileNotFound(let file): RampartErrorInfo(code: "vault.fileNotFound", kind: .notFound, message: "Drive file \(file) is not stored on this device: download it again.")
        case .missingBlock(let file, let index): RampartErrorInfo(code: "vault.missingBlock", kind: .failure, message: "Block \(index) of drive file \(file) is missing: download the file again.")
        case .blockTampered(let file, let index): RampartErrorInfo(code: "vault.blockTampered", kind: .tampered, message: "Block \(index) of drive file \(file) was modified, truncated or moved: download the file again.")
        case .manifestTampered(let file): RampartErrorInfo(code: "vault.manifestTampered", kind: .tampered, message: "The manifest of drive file \(file) failed authentication: the local copy cannot be trusted; download it again.")
        case .thumbnailTampered(let file): RampartErrorInfo(code: "vault.thumbnailTampered", kind: .tampered, message: "The thumbnail of drive file \(file) is missing or failed authentication.")
        case .unsupportedVersion(let version): RampartErrorInfo(code: "vault.unsupportedVersion", kind: .failure, message: "Stored data has format version \(version), which this version of Rampart cannot read: update the app.")
        case .sourceChanged(let path): RampartErrorInfo(code: "vault.sourceChanged", kind: .failure, message: "\(path) changed while it was being encrypted: try again when it is no longer being written.")
        case .locked: RampartErrorInfo(code: "locked", kind: .locked, message: "Rampart is locked: unlock with your PIN (or hardware key) first.")
        case .leaseEnded: RampartErrorInfo(code: "vault.leaseEnded", kind: .failure, message: "The cleartext preview was closed (locked, ended or cancelled): open it again.")
        case .invalidIdentifier(let value): RampartErrorInfo(code: "vault.invalidIdentifier", kind: .badInput, message: "Invalid identifier (\(value.count) characters): use 1–128 characters of letters, digits, '.', '_' or '-'.")
        case .index(let message): RampartErrorInfo(code: "vault.index", kind: .failure, message: "The attachment index failed: \(message). Clearing the cache (log out and in) rebuilds it.")
        case .io(let path, let operation, let code): RampartErrorInfo(code: "vault.io", kind: .failure, message: "\(operation) failed for \(path): \(String(cString: strerror(code))) (errno \(code)).")
        }
    }

    /// Maps an `errno` from a write to the typed error (`ENOSPC`/`EDQUOT` become ``diskFull(path:)``).
    static func fromWrite(errno code: Int32, path: String, operation: String) -> FileVaultError {
        if code == ENOSPC || code == EDQUOT { return .diskFull(path: path) }
        return .io(path: path, operation: operation, errno: code)
    }

    /// Converts key-access errors (`LockedError`, `SecretError.wiped`) to ``locked``.
    static func wrap(_ error: any Error) -> any Error {
        if error is FileVaultError { return error }
        if error is LockedError || error is SecretError { return FileVaultError.locked }
        return error
    }
}

/// Validates identifiers used in file names and associated data.
enum VaultIdentifier {
    static func validate(_ value: String) throws {
        guard UserID.isValid(value) else { throw FileVaultError.invalidIdentifier(value) }
    }
}
