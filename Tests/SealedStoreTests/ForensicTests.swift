import Foundation
import GRDB
import RampartCore
import Testing
@testable import SealedStore

/// Scans raw bytes for marker strings in UTF-8, UTF-16LE and UTF-16BE.
struct MarkerScanner {
    let markers: [String]
    private let patterns: [(String, Data)]

    init(markers: [String]) {
        self.markers = markers
        patterns = markers.flatMap { marker in
            [(marker, Data(marker.utf8)),
             (marker, marker.data(using: .utf16LittleEndian)!),
             (marker, marker.data(using: .utf16BigEndian)!)]
        }
    }

    /// The markers found in every regular file under `folder`, with the file name.
    func scan(folder: URL) throws -> [(file: String, marker: String)] {
        var hits: [(String, String)] = []
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])!
        for case let url as URL in enumerator {
            guard (try url.resourceValues(forKeys: [.isRegularFileKey])).isRegularFile == true else { continue }
            let content = try Data(contentsOf: url)
            for (marker, pattern) in patterns where content.range(of: pattern) != nil {
                hits.append((url.lastPathComponent, marker))
            }
        }
        return hits
    }

    /// Whether any marker's distinctive core occurs (a cheap test over all markers at once).
    static func commonPrefix(_ marker: String) -> String { String(marker.prefix(12)) }
}

@Suite struct ForensicTests {
    /// 1 000 messages with known marker strings in subject, sender, recipients and body; after
    /// closing, no file of the data folder (database, WAL, SHM, journal) contains a marker.
    @Test func noPlaintextMarkerReachesAnyFileOfTheDataFolder() throws {
        let fixture = try StoreFixture()
        let prefix = "ZQXMARK"
        var messages: [MailMessage] = []
        for number in 0..<1_000 {
            messages.append(MailMessage(
                id: "msg-\(number)", conversationID: "c\(number)", time: Int64(number), size: 1, labelIDs: ["inbox"],
                subject: "\(prefix)SUBJ\(number) quarterly",
                sender: MailAddress(name: "\(prefix)NAME\(number)", address: "\(prefix.lowercased())from\(number)@example.org"),
                recipients: [MailAddress(name: "\(prefix)RCPT\(number)", address: "to\(number)@example.org")],
                body: "Dear friend, \(prefix)BODY\(number) is the secret. Ünïcødé \(prefix)UNI\(number)é"))
        }
        for batch in stride(from: 0, to: messages.count, by: 100) {
            try fixture.store.mail.insert(messages: Array(messages[batch..<(batch + 100)]))
        }
        try fixture.store.mail.save(contact: Contact(id: "k", modified: 0, name: "\(prefix)CONTACT", emails: [], card: ""))
        try fixture.store.drive.insert(node: DriveNode(id: "n", shareID: "s", parentID: nil, kind: 1, state: 1, size: 0,
                                                       modified: 0, name: "\(prefix)FILENAME.pdf", mimeType: "x", keyMaterial: Data()))
        // Deleted rows must not leave plaintext either (they never had any, but check the freed pages).
        try fixture.store.mail.deleteMessage(id: "msg-0")
        fixture.store.close()

        // Every distinct marker root: matching the shared prefix would already catch any of them,
        // so scanning for the prefix in every encoding is the strongest check.
        let scanner = MarkerScanner(markers: [prefix, prefix.lowercased(), "BODY999", "quarterly", "Dear friend"])
        let folder = fixture.files.root
        let hits = try scanner.scan(folder: folder)
        #expect(hits.isEmpty, "plaintext found: \(hits.prefix(5))")
        let scanned = try FileManager.default.contentsOfDirectory(atPath: fixture.files.directory(for: "alice").path)
        #expect(scanned.contains("store.sqlite"))

        // The scanner can fail: a marker written in clear to a control file is found, in both encodings.
        let control = fixture.files.directory(for: "alice").appendingPathComponent("control.txt")
        try Data("log: \(prefix)BODY5 leaked".utf8).write(to: control)
        #expect(try scanner.scan(folder: folder).map(\.marker).contains(prefix))
        try "log: \(prefix)BODY5 leaked".data(using: .utf16LittleEndian)!.write(to: control)
        #expect(try scanner.scan(folder: folder).map(\.marker).contains(prefix))
        // And a plain GRDB database with the same content would be caught too.
        let plain = try DatabaseQueue(path: fixture.files.directory(for: "alice").appendingPathComponent("plain.sqlite").path)
        try plain.write { db in
            try db.execute(sql: "CREATE TABLE t (body TEXT)")
            try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [messages[7].body])
        }
        try plain.close()
        try FileManager.default.removeItem(at: control)
        #expect(try scanner.scan(folder: folder).contains { $0.file == "plain.sqlite" })
    }
}
