import CRNP
import Foundation
import RampartCore

// The thin internal layer over RNP's C API: one `RNPContext` (an `rnp_ffi_t`) per operation, keys
// imported from memory, memory inputs and outputs. Nothing here touches a keyring file.

/// RNP result codes as `rnp_result_t`.
enum RNPResult {
    static let success = rnp_result_t(RNP_SUCCESS)
    static let badFormat = rnp_result_t(RNP_ERROR_BAD_FORMAT)
    static let badParameters = rnp_result_t(RNP_ERROR_BAD_PARAMETERS)
    static let notSupported = rnp_result_t(RNP_ERROR_NOT_SUPPORTED)
    static let notImplemented = rnp_result_t(RNP_ERROR_NOT_IMPLEMENTED)
    static let outOfMemory = rnp_result_t(RNP_ERROR_OUT_OF_MEMORY)
    static let shortBuffer = rnp_result_t(RNP_ERROR_SHORT_BUFFER)
    static let read = rnp_result_t(RNP_ERROR_READ)
    static let write = rnp_result_t(RNP_ERROR_WRITE)
    static let badState = rnp_result_t(RNP_ERROR_BAD_STATE)
    static let macInvalid = rnp_result_t(RNP_ERROR_MAC_INVALID)
    static let signatureInvalid = rnp_result_t(RNP_ERROR_SIGNATURE_INVALID)
    static let badPassword = rnp_result_t(RNP_ERROR_BAD_PASSWORD)
    static let keyNotFound = rnp_result_t(RNP_ERROR_KEY_NOT_FOUND)
    static let noSuitableKey = rnp_result_t(RNP_ERROR_NO_SUITABLE_KEY)
    static let decryptFailed = rnp_result_t(RNP_ERROR_DECRYPT_FAILED)
    static let noSignaturesFound = rnp_result_t(RNP_ERROR_NO_SIGNATURES_FOUND)
    static let signatureExpired = rnp_result_t(RNP_ERROR_SIGNATURE_EXPIRED)
    static let verificationFailed = rnp_result_t(RNP_ERROR_VERIFICATION_FAILED)
    static let signatureUnknown = rnp_result_t(RNP_ERROR_SIGNATURE_UNKNOWN)
    static let notEnoughData = rnp_result_t(RNP_ERROR_NOT_ENOUGH_DATA)
    static let unknownTag = rnp_result_t(RNP_ERROR_UNKNOWN_TAG)
    static let packetNotConsumed = rnp_result_t(RNP_ERROR_PACKET_NOT_CONSUMED)
    static let noUserID = rnp_result_t(RNP_ERROR_NO_USERID)
    static let eof = rnp_result_t(RNP_ERROR_EOF)

    static func message(_ result: rnp_result_t) -> String {
        guard let text = rnp_result_to_string(result) else { return String(format: "RNP error 0x%08x", result) }
        return String(cString: text)
    }

    /// Whether `result` says the input itself is not valid OpenPGP (bad, truncated, unknown packets).
    static func isFormatError(_ result: rnp_result_t) -> Bool {
        [badFormat, notEnoughData, unknownTag, packetNotConsumed, eof, read, badParameters, notSupported,
         notImplemented, noUserID, signatureUnknown].contains(result)
    }
}

/// Throws ``OpenPGPError/library(_:)`` unless `result` is success.
func rnpCheck(_ result: rnp_result_t, _ what: @autoclosure () -> String) throws {
    guard result != RNPResult.success else { return }
    throw OpenPGPError.library("\(what()): \(RNPResult.message(result))")
}

/// Takes an RNP-allocated C string, returns it as a Swift string and frees it.
func rnpTakeString(_ pointer: UnsafeMutablePointer<CChar>?) -> String? {
    guard let pointer else { return nil }
    defer { rnp_buffer_destroy(pointer) }
    return String(cString: pointer)
}

/// Never hands out a password: an operation that needs one it was not given fails instead of
/// prompting on a terminal.
private let refusePassword: rnp_password_cb = { _, _, _, _, _, _ in false }

/// Hands out the passphrase held by the `SecretBytes` passed as context (NUL-terminated, into
/// RNP's own buffer, which RNP clears after use).
private let secretPassword: rnp_password_cb = { _, context, _, _, buffer, length in
    guard let context, let buffer else { return false }
    let secret = Unmanaged<SecretBytes>.fromOpaque(context).takeUnretainedValue()
    return (try? secret.withUnsafeBytes { bytes -> Bool in
        guard bytes.count < length else { return false }
        if let base = bytes.baseAddress, bytes.count > 0 {
            UnsafeMutableRawPointer(buffer).copyMemory(from: base, byteCount: bytes.count)
        }
        buffer[bytes.count] = 0
        return true
    }) ?? false
}

/// The clocks an RNP context uses.
///
/// RNP reads "now" with `time()`. On Linux that is the coarse clock: the second of the kernel's
/// last timer tick, which for a few milliseconds after each second boundary (up to 6 ms measured
/// on the 2-core machine) still shows the previous second while the system clock
/// (`clock_gettime(CLOCK_REALTIME)`, what `Date()`, Go's `time.Now` and Rust's `SystemTime` read)
/// shows the new one. A key another program stamped with the new second (GopenPGP does) was
/// then "created 1 seconds in future" for RNP: its self-signatures did not count, and the key had
/// "no valid encryption key" although it was made before the check.
enum RNPClock {
    /// The system clock's current second: what keys and signatures are judged at.
    static func now() -> UInt64 {
        var now = timespec()
        guard clock_gettime(CLOCK_REALTIME, &now) == 0, now.tv_sec > 0 else { return stamp() }
        return UInt64(now.tv_sec)
    }

    /// `time()`: what Rampart stamps new keys and signatures with (RNP's own choice until now).
    /// It is never later than the system clock, nor than `time()` in a process that reads it
    /// afterwards (gpg does), so nothing Rampart makes is "in the future" for another program on
    /// the same machine.
    static func stamp() -> UInt64 { UInt64(max(time(nil), 0)) }
}

/// One RNP FFI object for one operation; destroyed (with every key it holds) when released.
/// Its "now" (for key and signature validity) is ``RNPClock/now()`` when it is made.
final class RNPContext {
    let ffi: OpaquePointer

    init() throws {
        var created: OpaquePointer?
        try rnpCheck(rnp_ffi_create(&created, "GPG", "GPG"), "creating an RNP context")
        guard let created else { throw OpenPGPError.library("RNP returned no context") }
        ffi = created
        rnp_ffi_set_pass_provider(ffi, refusePassword, nil)
        // RNP's per-context diagnostics go to /dev/null: Debian's librnp is built with its log on,
        // and a refused message must not print RNP internals on the user's terminal. RNP takes
        // ownership of the descriptor (fdopen, and fclose when the context is destroyed), so each
        // context gets a descriptor of its own; sharing one would close it under other users.
        let log = open("/dev/null", O_WRONLY | O_CLOEXEC)
        if log >= 0, rnp_ffi_set_log_fd(ffi, log) != RNPResult.success {
            close(log)
        }
        try rnpCheck(rnp_set_timestamp(ffi, RNPClock.now()), "setting the time")
    }

    deinit {
        rnp_ffi_destroy(ffi)
    }

    /// Runs `body` with a fresh context that stays alive (with every key handle made from it)
    /// until `body` returns; the context and all its keys are destroyed afterwards.
    static func run<R>(_ body: (RNPContext) throws -> R) throws -> R {
        let context = try RNPContext()
        return try withExtendedLifetime(context) { try body(context) }
    }

    /// Runs `body` with the pass provider handing out `passphrase`, then refuses passwords again.
    func withPassphrase<R>(_ passphrase: SecretBytes, _ body: () throws -> R) throws -> R {
        let context = Unmanaged.passUnretained(passphrase).toOpaque()
        rnp_ffi_set_pass_provider(ffi, secretPassword, context)
        defer { rnp_ffi_set_pass_provider(ffi, refusePassword, nil) }
        return try withExtendedLifetime(passphrase) { try body() }
    }

    /// Imports OpenPGP keys (binary or armored) from memory; returns the primary fingerprints that
    /// are in the context afterwards.
    @discardableResult
    func importKeys(_ bytes: UnsafeRawBufferPointer, secret: Bool) throws -> [String] {
        var flags = UInt32(RNP_LOAD_SAVE_PUBLIC_KEYS)
        if secret { flags |= UInt32(RNP_LOAD_SAVE_SECRET_KEYS) }
        let result = try RNPInput.withMemory(bytes) { input in
            var json: UnsafeMutablePointer<CChar>?
            let result = rnp_import_keys(ffi, input, flags, &json)
            rnp_buffer_destroy(json)
            return result
        }
        guard result == RNPResult.success else {
            throw OpenPGPError.malformed("not a valid OpenPGP key (\(RNPResult.message(result)))")
        }
        return try primaryFingerprints()
    }

    @discardableResult
    func importKeys(_ data: Data, secret: Bool) throws -> [String] {
        try data.withUnsafeBytes { try importKeys($0, secret: secret) }
    }

    /// The fingerprints of every primary key in the context.
    func primaryFingerprints() throws -> [String] {
        var iterator: OpaquePointer?
        try rnpCheck(rnp_identifier_iterator_create(ffi, &iterator, "fingerprint"), "listing keys")
        defer { rnp_identifier_iterator_destroy(iterator) }
        var all: [String] = []
        while true {
            var identifier: UnsafePointer<CChar>?
            guard rnp_identifier_iterator_next(iterator, &identifier) == RNPResult.success, let identifier else { break }
            all.append(String(cString: identifier))
        }
        return try all.filter { fingerprint in
            let key = try locate(fingerprint: fingerprint)
            return key.isPrimary
        }
    }

    /// The key with this fingerprint (primary or subkey).
    func locate(fingerprint: String) throws -> RNPKey {
        try locate("fingerprint", fingerprint)
    }

    /// The key with this keygrip (what key generation reports).
    func locate(grip: String) throws -> RNPKey {
        try locate("grip", grip)
    }

    private func locate(_ type: String, _ identifier: String) throws -> RNPKey {
        var handle: OpaquePointer?
        try rnpCheck(rnp_locate_key(ffi, type, identifier, &handle), "looking up key \(identifier)")
        guard let handle else { throw OpenPGPError.library("key \(identifier) is not in the RNP context") }
        return RNPKey(handle)
    }
}

/// A key handle, destroyed on release.
final class RNPKey {
    let handle: OpaquePointer
    init(_ handle: OpaquePointer) { self.handle = handle }
    deinit { rnp_key_handle_destroy(handle) }

    private func flag(_ call: (OpaquePointer, UnsafeMutablePointer<Bool>) -> rnp_result_t) -> Bool {
        var value = false
        return call(handle, &value) == RNPResult.success && value
    }

    var isPrimary: Bool { flag { rnp_key_is_primary($0, $1) } }
    var hasSecret: Bool { flag { rnp_key_have_secret($0, $1) } }
    var isProtected: Bool { flag { rnp_key_is_protected($0, $1) } }
    var isValid: Bool { flag { rnp_key_is_valid($0, $1) } }

    var fingerprint: String? {
        var value: UnsafeMutablePointer<CChar>?
        guard rnp_key_get_fprint(handle, &value) == RNPResult.success else { return nil }
        return rnpTakeString(value)
    }

    /// The fingerprint of the primary key this key belongs to (its own if it is primary).
    var primaryFingerprint: String? {
        if isPrimary { return fingerprint }
        var value: UnsafeMutablePointer<CChar>?
        guard rnp_key_get_primary_fprint(handle, &value) == RNPResult.success else { return nil }
        return rnpTakeString(value)
    }

    var algorithm: String? {
        var value: UnsafeMutablePointer<CChar>?
        guard rnp_key_get_alg(handle, &value) == RNPResult.success else { return nil }
        return rnpTakeString(value)
    }

    var curve: String? {
        var value: UnsafeMutablePointer<CChar>?
        guard rnp_key_get_curve(handle, &value) == RNPResult.success else { return nil }
        return rnpTakeString(value)
    }

    /// The user ids with a valid self-signature that are not revoked (an id someone else added
    /// to the key, or one its owner revoked, is left out).
    var userIDs: [String] {
        indexedHandles(count: { rnp_key_get_uid_count(handle, &$0) }, at: { rnp_key_get_uid_handle_at(handle, $0, &$1) }) { index, uid in
            defer { rnp_uid_handle_destroy(uid) }
            var valid = false
            var revoked = true
            guard rnp_uid_is_valid(uid, &valid) == RNPResult.success, valid,
                  rnp_uid_is_revoked(uid, &revoked) == RNPResult.success, !revoked else { return nil }
            var value: UnsafeMutablePointer<CChar>?
            guard rnp_key_get_uid_at(handle, index, &value) == RNPResult.success else { return nil }
            return rnpTakeString(value)
        }
    }

    var subkeys: [RNPKey] {
        indexedHandles(count: { rnp_key_get_subkey_count(handle, &$0) }, at: { rnp_key_get_subkey_at(handle, $0, &$1) }) { _, sub in
            RNPKey(sub)
        }
    }

    /// For each index below the count `count` reports (none when it fails), the handle `at` gives
    /// for it, made into a value by `transform` (nil leaves the index out).
    private func indexedHandles<T>(count: (inout Int) -> rnp_result_t, at: (Int, inout OpaquePointer?) -> rnp_result_t,
                                   _ transform: (Int, OpaquePointer) -> T?) -> [T] {
        var total = 0
        guard count(&total) == RNPResult.success else { return [] }
        return (0..<total).compactMap { index in
            var item: OpaquePointer?
            guard at(index, &item) == RNPResult.success, let item else { return nil }
            return transform(index, item)
        }
    }

    /// The key RNP would use for `usage` ("encrypt", "sign"), if any valid one exists.
    func defaultKey(for usage: String) -> RNPKey? {
        var found: OpaquePointer?
        guard rnp_key_get_default_key(handle, usage, 0, &found) == RNPResult.success, let found else { return nil }
        return RNPKey(found)
    }

    /// Exports this key (with its subkeys) into a memory output.
    func export(secret: Bool, armored: Bool) throws -> RNPOutput {
        let output = try RNPOutput(limit: 0)
        var flags = UInt32(RNP_KEY_EXPORT_SUBKEYS) | UInt32(secret ? RNP_KEY_EXPORT_SECRET : RNP_KEY_EXPORT_PUBLIC)
        if armored { flags |= UInt32(RNP_KEY_EXPORT_ARMORED) }
        try rnpCheck(rnp_key_export(handle, output.handle, flags), "exporting a key")
        return output
    }
}

/// An input callback that is at its end at once.
private let emptyReader: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, Int, UnsafeMutablePointer<Int>?) -> Bool = {
    _, _, _, read in
    read?.pointee = 0
    return true
}

/// Memory input over caller-owned bytes (not copied: valid only inside the closure).
enum RNPInput {
    static func withMemory<R>(_ bytes: UnsafeRawBufferPointer, _ body: (OpaquePointer) throws -> R) throws -> R {
        var placeholder: UInt8 = 0
        return try withUnsafeMutablePointer(to: &placeholder) { empty in
            let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(empty)
            var input: OpaquePointer?
            if bytes.isEmpty {
                // RNP refuses an empty memory input; an input that reads nothing is the same thing.
                try rnpCheck(rnp_input_from_callback(&input, emptyReader, nil, nil), "reading empty input")
            } else {
                try rnpCheck(rnp_input_from_memory(&input, base, bytes.count, false), "reading from memory")
            }
            guard let input else { throw OpenPGPError.library("RNP returned no input") }
            defer { rnp_input_destroy(input) }
            return try body(input)
        }
    }

    static func withMemory<R>(_ data: Data, _ body: (OpaquePointer) throws -> R) throws -> R {
        try data.withUnsafeBytes { try withMemory($0, body) }
    }
}

/// A bounded memory output. Its buffer is zeroized (`rnp_buffer_clear`) before it is freed, since
/// it may hold cleartext or secret key material.
final class RNPOutput {
    let handle: OpaquePointer
    /// The most bytes RNP may write (0: unbounded).
    let limit: Int

    init(limit: Int) throws {
        var created: OpaquePointer?
        try rnpCheck(rnp_output_to_memory(&created, limit), "creating a memory output")
        guard let created else { throw OpenPGPError.library("RNP returned no output") }
        handle = created
        self.limit = limit
    }

    deinit {
        clear()
        rnp_output_destroy(handle)
    }

    /// The internal buffer (not a copy), valid until the output is released.
    private var buffer: UnsafeMutableRawBufferPointer? {
        var pointer: UnsafeMutablePointer<UInt8>?
        var length = 0
        guard rnp_output_memory_get_buf(handle, &pointer, &length, false) == RNPResult.success, let pointer else { return nil }
        return UnsafeMutableRawBufferPointer(start: pointer, count: length)
    }

    /// The number of bytes written so far.
    var count: Int { buffer?.count ?? 0 }

    /// Zeroizes what RNP wrote.
    func clear() {
        if let buffer, let base = buffer.baseAddress, buffer.count > 0 {
            rnp_buffer_clear(base, buffer.count)
        }
    }

    /// A copy of the output.
    func data() -> Data {
        guard let buffer, buffer.count > 0 else { return Data() }
        return Data(buffer)
    }

    /// The output without a copy: the returned `Data` refers to RNP's buffer and keeps this
    /// output alive; when the last copy of it is released, the buffer is zeroized and freed
    /// (``clear()`` in `deinit`). For large cleartexts (a 10 MiB attachment) this saves a copy and
    /// the page faults of a second buffer of that size.
    func takeData() -> Data {
        guard let buffer, let base = buffer.baseAddress, buffer.count > 0 else { return Data() }
        return Data(bytesNoCopy: base, count: buffer.count, deallocator: .custom { _, _ in
            withExtendedLifetime(self) {}
        })
    }

    /// A copy of the output in secret storage.
    func secret() -> SecretBytes {
        guard let buffer, buffer.count > 0 else { return SecretBytes(count: 0) { _ in } }
        return SecretBytes(copying: UnsafeRawBufferPointer(buffer))
    }

    func string() -> String {
        String(decoding: data(), as: UTF8.self)
    }
}
