import Crypto
import Foundation
import RampartCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A keychain kept in a private folder: one authenticated, encrypted file per item. The default
/// backend on Linux.
///
/// Trust-model rows: **keychain (low)** — items sit in 0700/0600 files that are refused when
/// their permissions are looser, and are authenticated so truncation or tampering is reported as
/// ``KeychainError/corruptItem(_:reason:)``; **device backups (low)** — this-device-only items
/// are encrypted under a key derived from the machine identity, so a copied folder or a backup
/// restored on another machine yields ``KeychainError/boundToAnotherDevice(_:)``.
///
/// ## Layout
/// ```
/// <directory>/                 0700, CACHEDIR.TAG (excluded from backups)
///   <access group>/            0700 — one folder per group, so a process can be given one only
///     keychain.salt            0600 — 32 random bytes, created once under the lock
///     .lock                    0600 — advisory lock (flock) taken by every writer
///     <sha256(address)>.item   0600 — the format: article "The file keychain"
/// ```
///
/// ## Guarantees
/// - Writes are atomic and durable (`PrivateFiles/writeAtomically(_:to:)`: temporary file,
///   `fsync`, `rename`, `fsync` of the folder): after a crash each item holds its old or its new
///   value, never a mix.
/// - Writers in several processes exclude each other with `flock` on the group's `.lock`, so
///   `add` is check-and-create atomically and the salt is created once.
/// - Readers take no lock: a rename is atomic, so they see a whole file.
///
/// ```swift
/// let keychain = FileKeychain(directory: home.appendingPathComponent("keychain"))
/// try keychain.add(secret, for: .user(userID, "mainkey"), accessibility: .default)
/// ```
public final class FileKeychain: Keychain {
    /// The root folder (its subfolders are the access groups).
    public let directory: URL
    /// Where the machine identity of this-device-only items is read.
    public let machineIdentity: MachineIdentity

    static let saltFileName = "keychain.salt"
    static let lockFileName = ".lock"
    static let saltMagic: [UInt8] = Array("RKCS".utf8)
    static let saltLength = 32

    /// A keychain rooted at `directory` (created 0700 on the first write).
    ///
    /// Nothing is touched until the first operation, so this never fails; a folder with loose
    /// permissions makes every operation throw ``KeychainError/permissionsTooOpen(path:mode:)``.
    public init(directory: URL, machineIdentity: MachineIdentity = .system) {
        self.directory = directory
        self.machineIdentity = machineIdentity
    }

    public var backendName: String { "file" }

    /// The largest value an item may hold (64 KiB).
    public static var maximumValueSize: Int { KeychainItemFile.maximumValueSize }

    /// The folder of one access group.
    public func groupDirectory(_ group: KeychainAccessGroup) -> URL {
        directory.appendingPathComponent(group.name, isDirectory: true)
    }

    /// The file of one item.
    public func itemFile(_ id: KeychainItemID) -> URL {
        groupDirectory(id.accessGroup).appendingPathComponent(KeychainItemFile.fileName(for: id))
    }

    // MARK: - Keychain

    public func add(_ value: SecretBytes, for id: KeychainItemID, accessibility: KeychainAccessibility) throws {
        try KeychainItemFile.validate(id)
        try checkSize(value, id)
        let group = try prepareGroupForWriting(id.accessGroup)
        try withWriteLock(group) {
            let salt = try loadOrCreateSalt(group, id: id)
            let file = itemFile(id)
            if try readFileIfPresent(file, id: id) != nil { throw KeychainError.duplicate(id) }
            try write(value, id: id, accessibility: accessibility, salt: salt, to: file)
        }
    }

    public func read(_ id: KeychainItemID) throws -> SecretBytes {
        try KeychainItemFile.validate(id)
        guard try checkExistingGroup(id.accessGroup) != nil,
              let bytes = try readFileIfPresent(itemFile(id), id: id) else { throw KeychainError.notFound(id) }
        let item = try KeychainItemFile.parse(bytes, expected: id)
        guard let salt = try loadSalt(groupDirectory(id.accessGroup), id: id) else {
            throw KeychainError.corruptItem(id, reason: "the folder salt file \(Self.saltFileName) is missing")
        }
        let key = try itemKey(for: item, salt: salt)
        return try item.open(using: key)
    }

    public func update(_ value: SecretBytes, for id: KeychainItemID) throws {
        try KeychainItemFile.validate(id)
        try checkSize(value, id)
        guard let group = try checkExistingGroup(id.accessGroup) else { throw KeychainError.notFound(id) }
        try withWriteLock(group) {
            let file = itemFile(id)
            guard let bytes = try readFileIfPresent(file, id: id) else { throw KeychainError.notFound(id) }
            // Only the header is needed: the item keeps its accessibility. An item bound to
            // another device may be overwritten (that is how a new login on this device
            // replaces it); its old value is never decrypted.
            let existing = try KeychainItemFile.parse(bytes, expected: id)
            let salt = try loadOrCreateSalt(group, id: id)
            try write(value, id: id, accessibility: existing.accessibility, salt: salt, to: file)
        }
    }

    public func delete(_ id: KeychainItemID) throws {
        try KeychainItemFile.validate(id)
        guard let group = try checkExistingGroup(id.accessGroup) else { throw KeychainError.notFound(id) }
        try withWriteLock(group) {
            let file = itemFile(id)
            if unlink(file.path) != 0 {
                if errno == ENOENT { throw KeychainError.notFound(id) }
                throw Self.ioError(path: file.path, operation: "unlink", code: errno)
            }
            PrivateFiles.syncDirectory(group)
        }
    }

    public func deleteAll(service: String, accessGroup: KeychainAccessGroup) throws {
        try deleteItems(in: accessGroup) { $0?.service == service }
    }

    public func deleteAll(accessGroup: KeychainAccessGroup) throws {
        try deleteItems(in: accessGroup) { _ in true }
    }

    public func itemIDs(accessGroup: KeychainAccessGroup) throws -> [KeychainItemID] {
        guard let group = try checkExistingGroup(accessGroup) else { return [] }
        var ids: [KeychainItemID] = []
        for name in try listItemFiles(group) {
            // Files that do not parse, or whose name is not the hash of the address inside,
            // are not items of this group; `deleteAll(accessGroup:)` still removes them.
            guard let bytes = try? readFileIfPresent(group.appendingPathComponent(name), id: nil),
                  let item = try? KeychainItemFile.parse(bytes, expected: nil),
                  item.id.accessGroup == accessGroup,
                  KeychainItemFile.fileName(for: item.id) == name else { continue }
            ids.append(item.id)
        }
        return ids.sorted { ($0.service, $0.account) < ($1.service, $1.account) }
    }

    /// The accessibility an item was stored with (read from its authenticated header).
    public func accessibility(of id: KeychainItemID) throws -> KeychainAccessibility {
        guard try checkExistingGroup(id.accessGroup) != nil,
              let bytes = try readFileIfPresent(itemFile(id), id: id) else { throw KeychainError.notFound(id) }
        return try KeychainItemFile.parse(bytes, expected: id).accessibility
    }

    // MARK: - Writing

    private func write(_ value: SecretBytes, id: KeychainItemID, accessibility: KeychainAccessibility,
                       salt: [UInt8], to file: URL) throws {
        let kind: KeychainItemFile.KeyKind = accessibility.isThisDeviceOnly ? .device : .folder
        let keys = try derive(kind: kind, group: id.accessGroup, salt: salt)
        let bytes = try KeychainItemFile.seal(value, id: id, accessibility: accessibility, keyKind: kind,
                                              folderCheck: keys.folderCheck, deviceCheck: keys.deviceCheck, key: keys.key)
        do {
            try PrivateFiles.writeAtomically(bytes, to: file)
        } catch let failure as PrivateFiles.Failure {
            throw Self.map(failure)
        }
    }

    private func deleteItems(in accessGroup: KeychainAccessGroup, where matches: (KeychainItemID?) -> Bool) throws {
        guard let group = try checkExistingGroup(accessGroup) else { return }
        try withWriteLock(group) {
            var removed = false
            for name in try listItemFiles(group) {
                let file = group.appendingPathComponent(name)
                let id = (try? readFileIfPresent(file, id: nil)).flatMap { $0 }
                    .flatMap { try? KeychainItemFile.parse($0, expected: nil) }?.id
                guard matches(id) else { continue }
                if unlink(file.path) != 0, errno != ENOENT {
                    throw Self.ioError(path: file.path, operation: "unlink", code: errno)
                }
                removed = true
            }
            if removed { PrivateFiles.syncDirectory(group) }
        }
    }

    private func checkSize(_ value: SecretBytes, _ id: KeychainItemID) throws {
        if value.count > KeychainItemFile.maximumValueSize {
            throw KeychainError.itemTooLarge(id, size: value.count, limit: KeychainItemFile.maximumValueSize)
        }
    }

    // MARK: - Keys

    private struct ItemKeys {
        var key: SymmetricKey
        var folderCheck: [UInt8]
        var deviceCheck: [UInt8]
    }

    private func derive(kind: KeychainItemFile.KeyKind, group: KeychainAccessGroup, salt: [UInt8]) throws -> ItemKeys {
        let folderMaterial = SymmetricKey(data: salt)
        let folderCheck = Self.hkdf(folderMaterial, salt: Array("rampart.keychain.folder".utf8),
                                    info: "rampart.keychain.v1/check/folder/\(group.name)", count: KeychainItemFile.checkLength)
        switch kind {
        case .folder:
            let key = Self.hkdf(folderMaterial, salt: Array("rampart.keychain.folder".utf8),
                                info: "rampart.keychain.v1/item-key/folder/\(group.name)", count: 32)
            return ItemKeys(key: SymmetricKey(data: key), folderCheck: folderCheck,
                            deviceCheck: [UInt8](repeating: 0, count: KeychainItemFile.checkLength))
        case .device:
            var identity = try machineIdentity.read()
            defer { identity.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
            let deviceMaterial = SymmetricKey(data: identity)
            let key = Self.hkdf(deviceMaterial, salt: salt,
                                info: "rampart.keychain.v1/item-key/device/\(group.name)", count: 32)
            let deviceCheck = Self.hkdf(deviceMaterial, salt: salt,
                                        info: "rampart.keychain.v1/check/device/\(group.name)", count: KeychainItemFile.checkLength)
            return ItemKeys(key: SymmetricKey(data: key), folderCheck: folderCheck, deviceCheck: deviceCheck)
        }
    }

    private func itemKey(for item: KeychainItemFile, salt: [UInt8]) throws -> SymmetricKey {
        let keys = try derive(kind: item.keyKind, group: item.id.accessGroup, salt: salt)
        guard SecretBytes.constantTimeEquals(keys.folderCheck, item.folderCheck) else {
            throw KeychainError.corruptItem(item.id, reason: "it was written with another folder salt (files mixed from two keychains)")
        }
        if item.keyKind == .device, !SecretBytes.constantTimeEquals(keys.deviceCheck, item.deviceCheck) {
            throw KeychainError.boundToAnotherDevice(item.id)
        }
        return keys.key
    }

    private static func hkdf(_ material: SymmetricKey, salt: [UInt8], info: String, count: Int) -> [UInt8] {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: material, salt: salt, info: Array(info.utf8), outputByteCount: count)
            .withUnsafeBytes { Array($0) }
    }

    // MARK: - Salt

    /// Reads the group's salt. Returns nil when there is no salt file yet.
    private func loadSalt(_ group: URL, id: KeychainItemID) throws -> [UInt8]? {
        guard let bytes = try readFileIfPresent(group.appendingPathComponent(Self.saltFileName), id: id) else { return nil }
        guard bytes.count == 5 + Self.saltLength, Array(bytes[0..<4]) == Self.saltMagic, bytes[4] == 1 else {
            throw KeychainError.corruptItem(id, reason: "the folder salt file \(Self.saltFileName) is damaged; the group's items cannot be read")
        }
        return Array(bytes[5...])
    }

    /// Reads the salt or creates it. Called with the write lock held, so two processes never
    /// create two different salts.
    private func loadOrCreateSalt(_ group: URL, id: KeychainItemID) throws -> [UInt8] {
        if let salt = try loadSalt(group, id: id) { return salt }
        var salt = [UInt8](repeating: 0, count: Self.saltLength)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = UInt8.random(in: 0...255, using: &generator) }
        do {
            try PrivateFiles.writeAtomically(Self.saltMagic + [1] + salt, to: group.appendingPathComponent(Self.saltFileName))
        } catch let failure as PrivateFiles.Failure {
            throw Self.map(failure)
        }
        return salt
    }

    // MARK: - Folders, files, lock

    /// Creates (0700) or checks the root and the group folder.
    private func prepareGroupForWriting(_ accessGroup: KeychainAccessGroup) throws -> URL {
        let group = groupDirectory(accessGroup)
        do {
            try PrivateFiles.ensurePrivateDirectory(directory)
            try PrivateFiles.ensurePrivateDirectory(group)
        } catch let failure as PrivateFiles.Failure {
            throw Self.map(failure)
        }
        return group
    }

    /// Checks the root and the group folder if they exist; nil when the group has no folder.
    private func checkExistingGroup(_ accessGroup: KeychainAccessGroup) throws -> URL? {
        let group = groupDirectory(accessGroup)
        // The root is checked only if it is visible: a process given one group's folder (for
        // instance through a bind mount) may not see the root's permissions.
        for folder in [directory, group] {
            var info = stat()
            if lstat(folder.path, &info) != 0 {
                if errno == ENOENT { return nil }
                throw Self.ioError(path: folder.path, operation: "stat", code: errno)
            }
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw KeychainError.storageFailure(path: folder.path, reason: "it exists but is not a folder")
            }
            if info.st_mode & 0o077 != 0 {
                throw KeychainError.permissionsTooOpen(path: folder.path, mode: String(info.st_mode & 0o777, radix: 8))
            }
        }
        return group
    }

    /// Reads a whole file, refusing symlinks, non-regular files, loose permissions and files
    /// larger than an item can be. Returns nil when it does not exist.
    private func readFileIfPresent(_ url: URL, id: KeychainItemID?) throws -> [UInt8]? {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw Self.ioError(path: url.path, operation: "open", code: errno)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw Self.ioError(path: url.path, operation: "fstat", code: errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw KeychainError.storageFailure(path: url.path, reason: "it is not a regular file")
        }
        if info.st_mode & 0o077 != 0 {
            throw KeychainError.permissionsTooOpen(path: url.path, mode: String(info.st_mode & 0o777, radix: 8))
        }
        let size = Int(info.st_size)
        guard size <= KeychainItemFile.maximumFileSize else {
            throw KeychainError.corruptItem(id ?? KeychainItemID(service: "?", account: "?"),
                                            reason: "the file is \(size) bytes, larger than any item")
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        while offset < size {
            let count = bytes.withUnsafeMutableBytes { posixRead(fd, $0.baseAddress! + offset, size - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw Self.ioError(path: url.path, operation: "read", code: errno)
            }
            if count == 0 { break }
            offset += count
        }
        return offset == size ? bytes : Array(bytes[0..<offset])
    }

    private func listItemFiles(_ group: URL) throws -> [String] {
        guard let dir = opendir(group.path) else {
            if errno == ENOENT { return [] }
            throw Self.ioError(path: group.path, operation: "opendir", code: errno)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = directoryEntryName(UnsafePointer(entry))
            if name.hasSuffix(".item"), !name.hasPrefix(".") { names.append(name) }
        }
        return names
    }

    /// Runs `body` holding the group's exclusive advisory lock (`flock` on `.lock`). The lock
    /// is released when the descriptor closes, also when the process dies.
    private func withWriteLock<R>(_ group: URL, _ body: () throws -> R) throws -> R {
        let path = group.appendingPathComponent(Self.lockFileName).path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw Self.ioError(path: path, operation: "open", code: errno) }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR { throw Self.ioError(path: path, operation: "flock", code: errno) }
        }
        removeStaleTemporaryFiles(group)
        return try body()
    }

    /// Temporary files left by a writer that died before its rename. Only called with the lock
    /// held, when no other writer can be mid-write.
    private func removeStaleTemporaryFiles(_ group: URL) {
        guard let dir = opendir(group.path) else { return }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = directoryEntryName(UnsafePointer(entry))
            if name.hasPrefix("."), name.hasSuffix(".tmp") {
                unlink(group.appendingPathComponent(name).path)
            }
        }
    }

    // MARK: - Errors

    static func ioError(path: String, operation: String, code: Int32) -> KeychainError {
        let message = "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
        switch code {
        case EACCES, EPERM: return .accessDenied("\(path): \(message)")
        case ELOOP: return .storageFailure(path: path, reason: "it is a symbolic link, which the keychain refuses")
        default: return .storageFailure(path: path, reason: message)
        }
    }

    static func map(_ failure: PrivateFiles.Failure) -> KeychainError {
        switch failure {
        case .permissionsTooOpen(let path, let mode): .permissionsTooOpen(path: path, mode: mode)
        case .notADirectory(let path): .storageFailure(path: path, reason: "it exists but is not a folder")
        case .ioFailure(let path, let operation, let code): ioError(path: path, operation: operation, code: code)
        }
    }
}

/// The name in a `readdir(3)` entry, read in place.
///
/// Not `entry.pointee.d_name`: that copies the whole declared array (256 bytes), but the C
/// library packs entries at their real length (`d_reclen`), so the copy of the last entry of a
/// buffer can run past its end into an unmapped page. It did: a writer of the two-process test
/// died with SIGSEGV in `memcpy` under `removeStaleTemporaryFiles`.
package func directoryEntryName(_ entry: UnsafePointer<dirent>) -> String {
    let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name)!
    return String(cString: (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))
}

/// `read(2)` (the name `read` is taken by ``FileKeychain/read(_:)`` inside the class).
private func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}

extension SecretBytes {
    /// Constant-time comparison of two byte arrays (for key check values).
    static func constantTimeEquals(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.withUnsafeBytes { l in rhs.withUnsafeBytes { r in constantTimeEquals(l, r) } }
    }
}
