import Foundation
import MIME
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore

/// Writes the original bytes of imported or delivered messages back out: one message as an
/// .eml file, or every message of a label as an mbox file.
///
/// Trust-model row **device storage (low)**: the originals are opened in memory with the
/// mailbox key and written to the file the user named (created 0600, atomically); nothing else is
/// written. An mbox of a label that was imported from one mbox file comes out byte for byte as
/// that file (the entries keep their `From ` lines and quoting, in their original order).
public struct MailExporter: Sendable {
    public let api: APIClient
    public let keys: [PGPPrivateKey]
    public let serverUserID: String

    public init(api: APIClient, keys: PGPPrivateKey, serverUserID: String) {
        self.init(api: api, keys: [keys], serverUserID: serverUserID)
    }

    /// An exporter that opens originals with any of `keys` (every address key of the account).
    public init(api: APIClient, keys: [PGPPrivateKey], serverUserID: String) {
        self.api = api; self.keys = keys; self.serverUserID = serverUserID
    }

    /// What an mbox export did.
    public struct Summary: Sendable, Equatable {
        public var exported = 0
        /// Messages of the label that have no original (written inside Rampart), with their ids.
        public var withoutOriginal: [String] = []
    }

    /// The opened original of one message.
    /// - Throws: ``ClientError/notFound(kind:id:)`` when the message has no original,
    ///   ``ClientError/tampered(_:)`` when the sealed original does not open.
    public func original(of messageID: String) async throws -> MailOriginal {
        let sealed: Data
        do { sealed = try await api.original(of: messageID) } catch ClientError.http(404, _) {
            throw ClientError.notFound(kind: "original of message", id: messageID)
        }
        let opened: Data
        do {
            opened = try MailPart.open(sealed, with: keys, messageID: messageID, part: SealedPartName.original).data
        } catch {
            throw ClientError.tampered("The original of message \(messageID)")
        }
        do { return try MailOriginal(decoding: opened) } catch {
            throw ClientError.tampered("The original of message \(messageID)")
        }
    }

    /// The RFC 5322 bytes of one message (an mbox entry loses its `From ` line and quoting).
    public func messageBytes(of messageID: String) async throws -> Data {
        let original = try await original(of: messageID)
        switch original.kind {
        case .message: return original.bytes
        case .mboxEntry: return Data(MboxEntry(originalBytes: [UInt8](original.bytes)).messageBytes)
        }
    }

    /// Writes one message to `file` as .eml.
    public func exportEML(_ messageID: String, to file: URL) async throws {
        let bytes = try await messageBytes(of: messageID)
        try Self.write(bytes, to: file)
    }

    /// Writes every message of `labelID` that has an original to `file` as an mbox, in the order
    /// they were imported (delivered messages after, by time).
    public func exportMbox(labelID: String, to file: URL) async throws -> Summary {
        var ids: [String] = []
        var page = 0
        while true {
            let list = try await api.messages(label: labelID, page: page)
            ids += list.messages.map(\.id)
            if list.messages.isEmpty || ids.count >= list.total { break }
            page += 1
        }
        var summary = Summary()
        var originals: [(String, MailOriginal)] = []
        for id in ids {
            do { originals.append((id, try await original(of: id))) } catch ClientError.notFound {
                summary.withoutOriginal.append(id)
            }
        }
        originals.sort { a, b in
            (a.1.batch, a.1.sequence, a.0) < (b.1.batch, b.1.sequence, b.0)
        }
        var out = Data()
        for (_, original) in originals {
            switch original.kind {
            case .mboxEntry: out.append(original.bytes)
            case .message:
                let message = [UInt8](original.bytes)
                let mime = MIMEMessage(bytes: message)
                out.append(contentsOf: MboxWriter.entryBytes(message: message, sender: mime.from.first?.address ?? "MAILER-DAEMON",
                                                             date: mime.date ?? Date(timeIntervalSince1970: 0)))
            }
        }
        try Self.write(out, to: file)
        summary.exported = originals.count
        return summary
    }

    static func write(_ data: Data, to file: URL) throws {
        do { try PrivateFiles.writeAtomically(data, to: file) } catch {
            throw ClientError.file("Cannot write \(file.path): \(error)")
        }
    }
}
