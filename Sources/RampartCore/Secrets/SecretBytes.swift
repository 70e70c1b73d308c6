import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A buffer of secret bytes that is zeroized when it is wiped or released, never printed,
/// and compared in constant time.
///
/// Trust-model row: **device memory (moderate)** — "keep secrets in memory only while unlocked;
/// wipe them on lock". `SecretBytes` is the one place where key material lives in memory.
///
/// ## What this type guarantees
/// - The bytes live in a buffer allocated by this type (not in a Swift `Array` or `Data`, whose
///   copy-on-write storage can be duplicated and freed without being cleared). The buffer is
///   overwritten with zeros (through a volatile-style write the optimizer cannot drop) by
///   ``wipe()`` and by `deinit`.
/// - Where the platform allows, the pages are locked in RAM (`mlock`) so they are not swapped
///   out. Failure to lock is tolerated (unprivileged processes have a small `RLIMIT_MEMLOCK`)
///   and reported by ``isMemoryLocked``. Core dumps are turned off per process by
///   ``ProcessHardening/disableCoreDumps()`` (the agent and the CLI call it at start).
/// - `description`, `debugDescription` and `customMirror` are redacted, so `print`, string
///   interpolation, `dump` and logging never show the content.
/// - `==` compares in time that depends only on the lengths, not on the content.
/// - After ``wipe()`` every access throws ``SecretError/wiped``: nothing returns zeros silently.
///
/// ## What it cannot guarantee
/// Swift and Foundation give no control over copies made *outside* this type: a caller that
/// turns the bytes into `Data`, `[UInt8]` or a `String` inside ``withUnsafeBytes(_:)`` creates
/// an unmanaged copy; swift-crypto's `SymmetricKey` keeps its own copy (it zeroizes it when the
/// key is released, but not earlier); registers and stack slots may keep fragments; and a
/// process with the same uid or root (a kernel compromise, a debugger) can read memory anyway.
/// The API is shaped so that such copies are short-lived and scoped to a closure.
public final class SecretBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: UnsafeMutableRawBufferPointer
    private var isWiped = false
    /// Whether the pages of this buffer are locked in RAM (not swappable).
    public let isMemoryLocked: Bool

    /// The number of secret bytes (still known after ``wipe()``).
    public let count: Int

    /// Creates a buffer of `count` cryptographically random bytes.
    public convenience init(randomCount count: Int) {
        var generator = SystemRandomNumberGenerator()
        self.init(count: count) { buffer in
            for index in 0..<buffer.count {
                buffer[index] = UInt8.random(in: 0...255, using: &generator)
            }
        }
    }

    /// Creates a buffer of `count` bytes filled by `initializer`.
    ///
    /// The closure writes straight into the protected buffer, so no intermediate copy exists.
    public init(count: Int, initializer: (inout UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        precondition(count >= 0, "SecretBytes count must not be negative")
        self.count = count
        let allocation = UnsafeMutableRawBufferPointer.allocate(byteCount: max(count, 1), alignment: 16)
        allocation.initializeMemory(as: UInt8.self, repeating: 0)
        var locked = false
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        if let base = allocation.baseAddress {
            locked = mlock(base, allocation.count) == 0
        }
        #endif
        self.isMemoryLocked = locked
        var view = UnsafeMutableRawBufferPointer(rebasing: allocation[0..<count])
        self.storage = allocation
        // If `initializer` throws, every stored property is already set, so Swift runs `deinit`
        // on the partly filled object: it zeroizes and releases the allocation. Releasing it
        // here as well was a double free (found by the agent-wire fuzz target: a frame cut off
        // in the middle made `AgentWire.read`'s initializer throw).
        try initializer(&view)
    }

    /// Copies `bytes` into a new secret buffer. The caller remains responsible for its own copy.
    public convenience init<Bytes: ContiguousBytes>(copying bytes: Bytes) {
        let length = bytes.withUnsafeBytes { $0.count }
        self.init(count: length) { buffer in
            bytes.withUnsafeBytes { source in
                if let base = source.baseAddress, length > 0 {
                    buffer.baseAddress!.copyMemory(from: base, byteCount: length)
                }
            }
        }
    }

    /// Moves the content of `array` into a new secret buffer and zeroizes the array.
    public convenience init(consuming array: inout [UInt8]) {
        self.init(copying: array)
        array.withUnsafeMutableBytes { SecretBytes.zeroize($0) }
        array.removeAll()
    }

    deinit {
        SecretBytes.zeroize(storage)
        Self.release(storage, locked: isMemoryLocked)
    }

    /// Whether ``wipe()`` has run.
    public var wiped: Bool {
        lock.lock(); defer { lock.unlock() }
        return isWiped
    }

    /// Overwrites the bytes with zeros. Every later access throws ``SecretError/wiped``.
    public func wipe() {
        lock.lock(); defer { lock.unlock() }
        guard !isWiped else { return }
        SecretBytes.zeroize(storage)
        isWiped = true
    }

    /// Calls `body` with the secret bytes. Do not let the pointer escape the closure.
    /// - Throws: ``SecretError/wiped`` after ``wipe()``; rethrows what `body` throws.
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        lock.lock(); defer { lock.unlock() }
        guard !isWiped else { throw SecretError.wiped }
        return try body(UnsafeRawBufferPointer(rebasing: storage[0..<count]))
    }

    /// A swift-crypto key over these bytes, for the duration of `body`.
    ///
    /// `SymmetricKey` keeps its own copy, which swift-crypto zeroizes when the key is released;
    /// keep the key inside the closure so that happens promptly.
    public func withSymmetricKey<R>(_ body: (SymmetricKey) throws -> R) throws -> R {
        let key = try withUnsafeBytes { SymmetricKey(data: $0) }
        return try body(key)
    }

    /// Compares two secrets in time independent of their content (only of their lengths).
    /// - Throws: ``SecretError/wiped`` if either side was wiped.
    public func constantTimeEquals(_ other: SecretBytes) throws -> Bool {
        if other === self { return !wiped }
        return try withUnsafeBytes { lhs in
            try other.withUnsafeBytes { rhs in
                SecretBytes.constantTimeEquals(lhs, rhs)
            }
        }
    }

    /// Compares two byte buffers in time that does not depend on where they differ.
    public static func constantTimeEquals(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var difference: UInt8 = 0
        for index in 0..<lhs.count {
            difference |= lhs[index] ^ rhs[index]
        }
        return difference == 0
    }

    /// Overwrites a buffer with zeros in a way the optimizer may not remove.
    public static func zeroize(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        #if canImport(Darwin)
        _ = memset_s(base, buffer.count, 0, buffer.count)
        #else
        // explicit_bzero is in glibc >= 2.25 and is guaranteed not to be elided.
        explicit_bzero(base, buffer.count)
        #endif
    }

    private static func release(_ buffer: UnsafeMutableRawBufferPointer, locked: Bool) {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        if locked, let base = buffer.baseAddress { munlock(base, buffer.count) }
        #endif
        buffer.deallocate()
    }
}

extension SecretBytes: Equatable {
    /// Constant-time comparison; a wiped secret equals nothing.
    public static func == (lhs: SecretBytes, rhs: SecretBytes) -> Bool {
        (try? lhs.constantTimeEquals(rhs)) ?? false
    }
}

extension SecretBytes: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "SecretBytes(\(count) bytes, redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["redacted": count], displayStyle: .struct) }
}

/// Errors raised when secret material is used after it was destroyed.
public enum SecretError: Error, Equatable, CustomStringConvertible {
    /// The secret was wiped (the key was locked or logged out); unlock again to get a new handle.
    case wiped

    public var description: String {
        switch self {
        case .wiped: "The secret was wiped (locked or logged out); unlock again to get a fresh key handle."
        }
    }
}
