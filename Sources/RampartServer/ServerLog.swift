import Foundation
import Logging

/// A swift-log handler that appends one line per entry to `<data>/server.log` (0600), and
/// optionally to standard error.
///
/// Trust-model row **database (critical)** / **access token (high)**: what the server logs is
/// chosen field by field (ids, routes, statuses, error codes); no route logs a header, a query, a
/// body, a password, a token or a key, and a test reads this file back looking for them.
public struct ServerLogHandler: LogHandler {
    final class Sink: @unchecked Sendable {
        let lock = NSLock()
        let handle: FileHandle?
        let toStandardError: Bool
        init(file: URL?, toStandardError: Bool) {
            if let file {
                if !FileManager.default.fileExists(atPath: file.path) {
                    _ = FileManager.default.createFile(atPath: file.path, contents: nil, attributes: [.posixPermissions: 0o600])
                }
                handle = try? FileHandle(forWritingTo: file)
                _ = try? handle?.seekToEnd()
            } else {
                handle = nil
            }
            self.toStandardError = toStandardError
        }
        func write(_ line: String) {
            let data = Data(line.utf8)
            lock.withLock {
                try? handle?.write(contentsOf: data)
                if toStandardError { FileHandle.standardError.write(data) }
            }
        }
        deinit { try? handle?.close() }
    }

    let label: String
    let sink: Sink
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info

    init(label: String, sink: Sink) {
        self.label = label
        self.sink = sink
    }

    /// A logger writing to `file` (and to standard error when asked).
    public static func logger(file: URL?, toStandardError: Bool, level: Logger.Level = .info) -> Logger {
        let sink = Sink(file: file, toStandardError: toStandardError)
        var logger = Logger(label: "rampart.server") { ServerLogHandler(label: $0, sink: sink) }
        logger.logLevel = level
        return logger
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let time = ISO8601DateFormatter().string(from: Date())
        sink.write("\(time) \(event.level) \(label): \(event.message)\(fields.isEmpty ? "" : " " + fields)\n")
    }
}
