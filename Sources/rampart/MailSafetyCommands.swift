import ArgumentParser
import Foundation
import MailSafety
import RampartCore

/// `rampart sanitize`: sanitizes mail HTML read on stdin.
///
/// Trust-model row: inbox (incoming mail) — the reference client's sanitizer, CSP and report.
struct SanitizeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sanitize",
        abstract: "Sanitize mail HTML from stdin (allowlist, CSS, remote content, trackers, CSP).",
        discussion: """
        Input must be UTF-8 (invalid bytes: exit 2 with the offset) and at most 32 MiB (exit 2).
        Elements nested deeper than 256 levels are removed; the report then has "truncated": true.
        Formats: html (the sanitized fragment), json ({html, csp, removed, blockedRemote, trackers,
        truncated}), document (a complete HTML document with the CSP <meta> first in <head>).
        """
    )

    enum Remote: String, ExpressibleByArgument, CaseIterable { case block, allow }
    enum Format: String, ExpressibleByArgument, CaseIterable { case html, json, document }

    @Option(help: "Remote content: block (default) or allow.") var remote: Remote = .block
    @Option(help: "Output: html, json or document.") var format: Format = .html
    @Option(help: "A tracker list to add (Rampart format, or MailTrackerBlocker .json).") var trackers: String?

    func run() throws {
        let input = FileHandle.standardInput.readDataToEndOfFile()
        var list = TrackerList.builtIn
        if let path = trackers {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("Cannot read the tracker list at \(path).")
            }
            do {
                let extra = path.hasSuffix(".json")
                    ? try TrackerList(mailTrackerBlockerJSON: data)
                    : try TrackerList(rampartList: String(decoding: data, as: UTF8.self))
                list = list.merging(extra)
            } catch let error as TrackerListError {
                throw ValidationError(error.description)
            }
        }
        let options = SanitizerOptions(remote: remote == .allow ? .allowThisMessage : .block, trackers: list)
        let message: SanitizedMessage
        do {
            message = try MailSanitizer(options: options).sanitize(bytes: input)
        } catch {
            FileHandle.standardError.write(Data((error.description + "\n").utf8))
            throw ExitCode(2)
        }
        let policy = ContentSecurityPolicy.viewer(remote == .allow ? .remoteAllowed : .embeddedImagesOnly)
        let output: String
        switch format {
        case .html:
            output = message.html
        case .document:
            output = renderDocument(message, policy: policy)
        case .json:
            struct Output: Encodable {
                var html: String
                var csp: String
                var removed: [String: Int]
                var blockedRemote: [BlockedResource]
                var trackers: [TrackerFinding]
                var truncated: Bool
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let value = Output(html: message.html, csp: policy.headerValue, removed: message.report.removed,
                               blockedRemote: message.report.blockedRemote, trackers: message.report.trackers,
                               truncated: message.report.truncated)
            output = String(decoding: try encoder.encode(value), as: UTF8.self)
        }
        FileHandle.standardOutput.write(Data((output + "\n").utf8))
    }
}
