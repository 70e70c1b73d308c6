import Foundation

/// A pin validation failure report, in the spirit of TrustKit's and HPKP's reports: which host
/// and port, which keys the server's chain actually had, the policy it broke, and when.
///
/// Trust-model row: **transport (network), low trust — a person in the middle**: interception
/// attempts are made visible to the backend operator, not only to one user.
///
/// JSON form (keys sorted, dates ISO 8601):
/// ```json
/// {"host":"api.rampart.test","port":443,"servedChainPins":["..."],"validatedChainPins":["..."],
///  "policy":{"domain":"rampart.test","pins":["...","..."],"includeSubdomains":true,"enforcement":"enforce"},
///  "enforced":true,"time":"2026-11-22T22:40:00Z","format":1}
/// ```
public struct PinViolationReport: Sendable, Codable, Equatable {
    /// Format version of this report.
    public var format: Int = 1
    /// The host name the client asked for.
    public var host: String
    /// The port it connected to.
    public var port: Int
    /// The pins of every certificate the server sent, in the order it sent them.
    public var servedChainPins: [SPKIPin]
    /// The pins of the chain after validation (leaf to trusted root): what was compared.
    public var validatedChainPins: [SPKIPin]
    /// The policy that was broken.
    public var policy: DomainPinningPolicy
    /// Whether the connection was cut (`enforce`) or allowed (`reportOnly`).
    public var enforced: Bool
    /// When the handshake happened (to the second).
    public var time: Date

    /// Builds a report; `enforced` follows the policy's enforcement and `time` is cut to the second.
    public init(host: String, port: Int, servedChainPins: [SPKIPin], validatedChainPins: [SPKIPin],
                policy: DomainPinningPolicy, time: Date) {
        self.host = host
        self.port = port
        self.servedChainPins = servedChainPins
        self.validatedChainPins = validatedChainPins
        self.policy = policy
        self.enforced = policy.enforcement == .enforce
        // Whole seconds: the JSON form carries ISO 8601 without fractions, so a report read back
        // equals the one written.
        self.time = Date(timeIntervalSince1970: time.timeIntervalSince1970.rounded(.down))
    }

    /// The report as JSON (sorted keys, ISO 8601 dates).
    public func jsonData() throws -> Data {
        try PinViolationReport.encoder.encode(self)
    }

    /// Reads a report written by ``jsonData()``.
    public static func decode(_ data: Data) throws -> PinViolationReport {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(PinViolationReport.self, from: data)
    }

    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}

/// Where pin violation reports go (a file, the backend's report endpoint, the app's telemetry).
///
/// Trust-model row: **transport (network), low trust**. Delivery is best effort: a failing sink
/// never changes the outcome of the request (the client emits ``PinningEvent/reportNotDelivered(_:reason:)``).
public protocol PinViolationReportSink: Sendable {
    /// Delivers one report.
    func deliver(_ report: PinViolationReport) async throws
}

/// A sink that appends each report as one JSON line to a file readable only by its owner.
///
/// Trust-model row: **transport (network), low trust**: keeps the evidence of an interception on
/// the device for later upload or support.
public actor JSONLinesReportFile: PinViolationReportSink {
    /// The JSON-lines file.
    public let url: URL

    /// A sink appending to `url` (created with mode 0600 on first report).
    public init(url: URL) {
        self.url = url
    }

    /// Appends `report` as one line.
    /// - Throws: ``PinnedTransportError/reportNotDelivered(_:)`` or the file system's error.
    public func deliver(_ report: PinViolationReport) async throws {
        var line = try report.jsonData()
        line.append(0x0A)
        let manager = FileManager.default
        if !manager.fileExists(atPath: url.path) {
            guard manager.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw PinnedTransportError.reportNotDelivered("cannot create the report file \(url.path)")
            }
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: line)
    }

    /// Every report in the file, oldest first.
    public func reports() throws -> [PinViolationReport] {
        guard let data = FileManager.default.contents(atPath: url.path) else { return [] }
        return try data.split(separator: 0x0A).map { try PinViolationReport.decode(Data($0)) }
    }
}
