import Foundation

/// The tools' JSON output: pretty, sorted keys, ISO 8601 dates.
public enum JSONOutput {
    /// Encodes `value` as the tools print it.
    public static func encode(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    /// Prints `value` on standard output.
    public static func print(_ value: some Encodable) throws {
        Swift.print(try encode(value))
    }
}
