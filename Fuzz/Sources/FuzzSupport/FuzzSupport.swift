#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What every fuzz target shares: turning libFuzzer's buffer into bytes, reading structured
/// choices from the front of an input, and reporting an oracle violation so that libFuzzer
/// saves the input (`crash-…`) and `scripts/fuzz.sh` fails.
public enum Fuzz {
    /// The input as an array (libFuzzer may pass a null pointer for an empty input).
    public static func bytes(_ data: UnsafePointer<UInt8>?, _ size: Int) -> [UInt8] {
        guard let data, size > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// Reports a broken invariant and aborts (libFuzzer treats SIGABRT as a crash and writes
    /// the input out). The message names the target and the oracle.
    public static func violation(_ target: String, _ message: String) -> Never {
        let text = Array("\n==ORACLE VIOLATION== [\(target)] \(message)\n".utf8)
        text.withUnsafeBytes { _ = write(2, $0.baseAddress, $0.count) }
        abort()
    }

    /// Checks `condition`; on failure reports `message` as a violation.
    @inline(__always)
    public static func check(_ condition: Bool, _ target: String, _ message: @autoclosure () -> String) {
        if !condition { violation(target, message()) }
    }

    /// Runs `body`; an error it throws must be a typed error of the library under test
    /// (`isTyped`, described as `expected` in the report), which counts as a refusal (nil).
    @inline(__always)
    public static func typed<T>(_ target: String, _ what: String, expected: String, isTyped: (any Error) -> Bool,
                                _ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch where isTyped(error) {
            return nil
        } catch {
            violation(target, "\(what) threw \(type(of: error)) \(error), not \(expected)")
        }
    }

    /// Checks that `string` is well-formed UTF-8 and flagged ASCII exactly when it is: the
    /// parser's token strings and the serializer's output are made without a second validation
    /// (`what` names the string in the report).
    public static func checkWellFormed(_ string: String, _ target: String, _ what: String) {
        let bytes = Array(string.utf8)
        guard String(validating: bytes, as: UTF8.self) == string else {
            violation(target, "\(what) is not well-formed UTF-8: \(bytes)")
        }
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *), string.utf8Span.isKnownASCII != bytes.allSatisfy({ $0 < 0x80 }) {
            violation(target, "\(what) has the wrong ASCII flag: \(bytes)")
        }
    }
}

/// Reads typed choices from the front of a fuzz input (so that one input can pick a mode, sizes,
/// offsets) and hands out the rest.
public struct FuzzReader {
    public private(set) var bytes: ArraySlice<UInt8>

    public init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

    public var isEmpty: Bool { bytes.isEmpty }

    /// One byte (0 when the input is used up).
    public mutating func byte() -> UInt8 {
        guard let first = bytes.first else { return 0 }
        bytes = bytes.dropFirst()
        return first
    }

    /// A big-endian 16-bit value.
    public mutating func uint16() -> Int { Int(byte()) << 8 | Int(byte()) }

    /// Up to `count` bytes.
    public mutating func take(_ count: Int) -> [UInt8] {
        let n = min(count, bytes.count)
        defer { bytes = bytes.dropFirst(n) }
        return Array(bytes.prefix(n))
    }

    /// Everything left.
    public mutating func rest() -> [UInt8] {
        defer { bytes = bytes.suffix(0) }
        return Array(bytes)
    }
}

/// The input as text: valid UTF-8 as is, otherwise decoded with replacement characters (the
/// parsers under test take `String`s; invalid bytes are the byte-level targets' business).
public func fuzzText(_ bytes: [UInt8]) -> String {
    String(decoding: bytes, as: UTF8.self)
}

/// libFuzzer's driver (compiler-rt's FuzzerDriver): runs the fuzzing loop with `callback` as
/// the target, parsing libFuzzer's usual command line.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

extension Fuzz {
    /// The process entry point of a fuzz target. SwiftPM links an executable target with
    /// `main` defined as `<module>_main`, which `-parse-as-library` does not emit; each target
    /// defines that symbol and calls this, which hands over to libFuzzer's driver.
    public static func main(
        _ argc: Int32,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32 {
        var count = argc
        var arguments = argv
        return LLVMFuzzerRunDriver(&count, &arguments, callback)
    }
}
