import Crypto
import Foundation
import MIME
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore

/// Where mail to import comes from.
public enum MailImportSource: Sendable, Equatable {
    /// One RFC 5322 message in a file.
    case eml(URL)
    /// An mbox file (mboxo or mboxrd `From ` lines), read in bounded memory.
    case mbox(URL)
    /// A Maildir folder (`cur/` and `new/`).
    case maildir(URL)

    /// Tells the kind of `url`: a folder with `cur/` or `new/` is a Maildir, a file that starts
    /// with `From ` an mbox, any other file one message.
    /// - Throws: `ClientError/notFound(_:)` when nothing is there, ``ClientError/badInput(_:)``
    ///   for a folder that is not a Maildir.
    public static func detect(_ url: URL) throws -> MailImportSource {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ClientError.notFound(kind: "file or folder to import", id: url.path)
        }
        if isDirectory.boolValue {
            let fm = FileManager.default
            guard fm.fileExists(atPath: url.appendingPathComponent("cur").path) || fm.fileExists(atPath: url.appendingPathComponent("new").path)
            else { throw ClientError.badInput("\(url.path) is a folder but not a Maildir (it has no cur/ or new/)") }
            return .maildir(url)
        }
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw ClientError.badInput("\(url.path) cannot be read")
        }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: 5)) ?? Data()
        return head == Data("From ".utf8) ? .mbox(url) : .eml(url)
    }
}

/// What an import did.
public struct MailImportSummary: Sendable, Equatable {
    /// Messages stored by this run.
    public var imported = 0
    /// Messages that were already stored (an earlier or interrupted run, or a duplicate).
    public var alreadyThere = 0
    /// Messages that could not be imported, with why (`where: why`).
    public var failed: [String] = []
    /// Messages stored whose parts could not all be decoded (kept as raw bytes), with what.
    public var warnings: [String] = []

    public init() {}

    /// One line: `imported 10, already there 2, failed 1`.
    public var line: String {
        "imported \(imported), already there \(alreadyThere), failed \(failed.count)"
    }
}

/// Imports real mail (.eml, mbox, Maildir) into the user's mailbox, as Proton's importer does:
/// each message is sealed on this device to the user's own key and uploaded; the server never
/// sees it in clear. The original bytes are kept, sealed, so export gives them back unchanged.
///
/// Trust-model rows **inbox (low)** and **device memory (moderate)**: an mbox is read one
/// message at a time in bounded memory; a message that cannot be parsed is still imported with
/// its undecodable parts kept as raw bytes (and reported). Idempotent and resumable: a message's
/// id is derived from its bytes (`ImportIdentity`), the server stores each message in one
/// transaction, and a run asks which ids it already has before sealing anything, so a run killed
/// halfway and started again stores every message exactly once.
public struct MailImporter: Sendable {
    /// Messages asked about and uploaded per round trip batch.
    public static let batchSize = 64
    /// The largest message imported; a larger one is reported as failed.
    public static let maximumMessageSize = 12 * 1024 * 1024

    public let api: APIClient
    public let keys: PGPPrivateKey
    /// The account's id on the server (the sealed parts are bound to it).
    public let serverUserID: String

    public init(api: APIClient, keys: PGPPrivateKey, serverUserID: String) {
        self.api = api; self.keys = keys; self.serverUserID = serverUserID
    }

    /// One message read from a source.
    struct Entry {
        var label: String
        var message: [UInt8]
        var original: MailOriginal
        var unread: Bool
    }

    /// Imports every message of `source` with the labels `labelIDs`.
    /// - Parameters:
    ///   - progress: called after each message with (messages done, bytes read, total bytes).
    ///   - source: the mailbox, mbox or message files to read.
    ///   - labelIDs: the labels every imported message gets.
    /// - Throws: `LockedError`, ``ClientError`` for transport or server failures (what was stored
    ///   stays stored: run again to finish).
    public func run(_ source: MailImportSource, labelIDs: [String],
                    progress: (@Sendable (Int, Int64, Int64) -> Void)? = nil) async throws -> MailImportSummary {
        var summary = MailImportSummary()
        let batch = UInt64(Date().timeIntervalSince1970 * 1000)
        var pending: [Entry] = []
        var done = 0
        func flush() async throws {
            try await upload(pending, labelIDs: labelIDs, summary: &summary)
            done += pending.count
            pending.removeAll(keepingCapacity: true)
        }
        switch source {
        case .eml(let url):
            let bytes = try Self.read(url)
            pending.append(Entry(label: url.lastPathComponent, message: bytes,
                                 original: MailOriginal(kind: .message, batch: batch, sequence: 0, bytes: Data(bytes)), unread: false))
            try await flush()
            progress?(done, Int64(bytes.count), Int64(bytes.count))
        case .maildir(let url):
            let paths: [String]
            do { paths = try MaildirReader(path: url.path).messagePaths() } catch {
                throw ClientError.badInput("\(url.path) cannot be listed as a Maildir: \(error)")
            }
            var read: Int64 = 0
            for (sequence, path) in paths.enumerated() {
                let file = URL(fileURLWithPath: path)
                let bytes: [UInt8]
                do { bytes = try Self.read(file) } catch {
                    summary.failed.append("\(file.lastPathComponent): \(error)")
                    continue
                }
                read += Int64(bytes.count)
                pending.append(Entry(label: file.lastPathComponent, message: bytes,
                                     original: MailOriginal(kind: .message, batch: batch, sequence: UInt64(sequence), bytes: Data(bytes)),
                                     unread: !Self.maildirSeen(file)))
                if pending.count >= Self.batchSize { try await flush(); progress?(done, read, read) }
            }
            try await flush()
            progress?(done, read, read)
        case .mbox(let url):
            let total = Int64((try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value ?? 0)
            let reader: MboxReader
            do { reader = try MboxReader(path: url.path, maxMessageBytes: Self.maximumMessageSize) } catch {
                throw ClientError.badInput("\(url.path) cannot be read as an mbox: \(error)")
            }
            var position: Int64 = 0
            while true {
                let next: Result<MboxEntry, MIMEError>?
                do { next = try reader.nextEntry() } catch {
                    throw ClientError.badInput("\(url.path) cannot be read as an mbox: \(error)")
                }
                guard let next else { break }
                switch next {
                case .failure(let error):
                    summary.failed.append("\(url.lastPathComponent): \(error)")
                case .success(let entry):
                    position = Int64(entry.offset) + Int64(entry.originalBytes.count)
                    pending.append(Entry(label: "\(url.lastPathComponent) message \(entry.index + 1)", message: entry.messageBytes,
                                         original: MailOriginal(kind: .mboxEntry, batch: batch, sequence: UInt64(entry.index),
                                                                bytes: Data(entry.originalBytes)),
                                         unread: false))
                }
                if pending.count >= Self.batchSize { try await flush(); progress?(done, position, total) }
            }
            try await flush()
            progress?(done, total, total)
        }
        return summary
    }

    /// Asks which of the batch's messages are stored, then seals and uploads the others.
    func upload(_ entries: [Entry], labelIDs: [String], summary: inout MailImportSummary) async throws {
        guard !entries.isEmpty else { return }
        let importKey = try keys.importKey
        let ids = entries.map { ImportIdentity.messageID(original: Data($0.message), key: importKey) }
        let known = try await api.knownMessages(Array(Set(ids)))
        var seen: Set<String> = []
        for (entry, id) in zip(entries, ids) {
            if known.contains(id) || seen.contains(id) {
                // Already stored (an earlier run, or the same message twice): it joins the labels
                // of this run, so an import under a new label finds all of its messages there.
                if known.contains(id) && !seen.contains(id) { try await api.changeLabels(of: id, add: labelIDs) }
                seen.insert(id)
                summary.alreadyThere += 1
                continue
            }
            seen.insert(id)
            guard entry.message.count <= Self.maximumMessageSize else {
                summary.failed.append("\(entry.label): larger than \(Self.maximumMessageSize / (1024 * 1024)) MiB")
                continue
            }
            let converted = ConvertedMail(bytes: entry.message)
            for problem in converted.problems { summary.warnings.append("\(entry.label): \(problem)") }
            let request = try seal(converted, id: id, entry: entry, labelIDs: labelIDs)
            do {
                let response = try await api.importMessage(request)
                if response.created { summary.imported += 1 } else { summary.alreadyThere += 1 }
            } catch let error as ClientError {
                if case .http(let status, let body) = error, (400..<500).contains(status), status != 401 {
                    summary.failed.append("\(entry.label): \(body?.error.message ?? "refused by the server (\(status))")")
                    continue
                }
                throw error
            }
        }
    }

    /// Seals one converted message (body, attachments, original) to the user's own key.
    func seal(_ mail: ConvertedMail, id: String, entry: Entry, labelIDs: [String]) throws -> ImportRequest {
        // Encrypted to the user's own key, unsigned: the device vouches for nobody's mail.
        let publicKey = [keys.publicKey]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var body = try encoder.encode(mail.content)
        defer { body.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        let sealedBody = try MailPart.seal(body, to: publicKey, signedBy: nil, messageID: id, part: SealedPartName.body)
        var original = entry.original.encoded()
        defer { original.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
        let sealedOriginal = try MailPart.seal(original, to: publicKey, signedBy: nil, messageID: id, part: SealedPartName.original)
        var attachments: [ImportAttachment] = []
        for (index, attachment) in mail.attachments.enumerated() {
            let attachmentID = ImportIdentity.attachmentID(messageID: id, index: index)
            let sealed = try MailPart.seal(attachment.data, to: publicKey, signedBy: nil, messageID: id,
                                           part: SealedPartName.attachment(index))
            attachments.append(ImportAttachment(id: attachmentID, name: attachment.name, mimeType: attachment.mimeType,
                                                size: attachment.data.count, contentId: attachment.contentID,
                                                sealedData: sealed.base64EncodedString()))
        }
        let time = Int64((mail.date ?? Date()).timeIntervalSince1970)
        return ImportRequest(id: id, time: max(0, time), labelIds: labelIDs, unread: entry.unread, size: Int64(entry.message.count),
                             sealedBody: sealedBody.base64EncodedString(), sealedOriginal: sealedOriginal.base64EncodedString(),
                             attachments: attachments)
    }

    /// Whether a Maildir file carries the Seen flag (`:2,` info with `S`); files in `new/` never do.
    static func maildirSeen(_ file: URL) -> Bool {
        guard file.deletingLastPathComponent().lastPathComponent == "cur",
              let info = file.lastPathComponent.range(of: ":2,", options: .backwards) else { return false }
        return file.lastPathComponent[info.upperBound...].contains("S")
    }

    /// One message file, refused past ``maximumMessageSize`` (MIME's size-limited reader).
    static func read(_ url: URL) throws -> [UInt8] {
        do { return try EMLReader.readBytes(path: url.path, maxMessageBytes: maximumMessageSize) } catch let error as MIMEError {
            switch error {
            case .messageTooLarge: throw ClientError.badInput("\(url.path) is larger than \(maximumMessageSize / (1024 * 1024)) MiB")
            default: throw ClientError.badInput("\(url.path) cannot be read (\(error))")
            }
        }
    }
}
