import CRampartShims

/// Names of the threads Rampart starts, as `ps -L`, `top -H`, `/proc/<pid>/task/*/comm` and a
/// debugger show them.
///
/// Foundation's `Thread.current.name` is not used: in swift-corelibs-foundation its setter goes
/// through the pthread handle that `Thread.start()` stores only *after* `pthread_create` returns,
/// so a new thread that runs before its parent gets there (common on a loaded two-core machine)
/// silently keeps no name. Naming the calling thread directly has no such race.
public enum ThreadName {
    /// The longest name Linux accepts, in bytes; a longer one is refused as a whole.
    public static let maximumLength = 15

    /// Names the calling thread. A name longer than ``maximumLength`` bytes is cut at a
    /// character boundary so that it still applies.
    ///
    /// - Returns: whether the system took the name.
    @discardableResult
    public static func setCurrent(_ name: String) -> Bool {
        let fitted = fitted(name)
        return rampart_set_current_thread_name(fitted) == 0
    }

    /// The calling thread's name as the system reports it ("" when it has none or cannot say).
    public static var current: String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard rampart_current_thread_name(&buffer, buffer.count) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `name` shortened to at most `length` UTF-8 bytes (by default ``maximumLength``) without
    /// splitting a character.
    public static func fitted(_ name: String, toBytes length: Int = maximumLength) -> String {
        guard name.utf8.count > length else { return name }
        var result = ""
        for character in name {
            if result.utf8.count + character.utf8.count > length { break }
            result.append(character)
        }
        return result
    }
}
