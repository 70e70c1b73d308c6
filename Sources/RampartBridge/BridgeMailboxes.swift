import Foundation
import RampartAPI
import SealedStore

/// One IMAP mailbox of the bridge and where it sits on the account.
///
/// Every mailbox is a label of the account (Rampart's messages carry labels, as Proton's do),
/// except *All Mail*, which is every message. Some are **folders** (exclusive: INBOX, Sent,
/// Drafts, Trash, Archive, Spam and `Folders/…`): MOVE into one takes the message out of the other
/// folders, and EXPUNGE in one moves it to Trash. The others are **labels** (`Labels/…`): COPY
/// adds the label, EXPUNGE removes it, and the message stays wherever else it is.
public struct BridgeMailbox: Sendable, Hashable {
    /// The IMAP name (`INBOX`, `Folders/Work`, `Labels/Travel`).
    public var name: String
    /// The account's label id; nil for *All Mail*.
    public var labelID: String?
    /// LIST attributes (RFC 6154 SPECIAL-USE and children).
    public var attributes: [String]
    /// Whether it is a folder (exclusive) rather than a label.
    public var isFolder: Bool

    /// The key the bridge keeps this mailbox's UIDs under (the label id, so a label renamed on
    /// another device keeps its UIDs).
    var stateKey: String { labelID ?? "*all" }
}

/// The names of the bridge's mailboxes and the account labels behind them.
///
/// Trust-model row **database (critical)**: label names come from the sealed store (opened with
/// the MainKey); the bridge shows nothing while the account is locked.
public enum BridgeMailboxes {
    /// The labels behind Drafts and Spam, and behind `\Flagged` (Proton's *Starred*, a flag other
    /// devices see): the bridge creates them on the server when missing, and never lists them
    /// under `Labels/`.
    public static let draftsLabelName = "Drafts", spamLabelName = "Spam", starredLabelName = "Starred"
    /// Folders a mail program makes are labels named `Folders/<name>`; other labels show as
    /// `Labels/<name>`; *All Mail* is every message.
    public static let folderPrefix = "Folders/", labelPrefix = "Labels/", allMail = "All Mail"

    /// Every mailbox, given the account's labels (id, name): INBOX, Sent, Drafts, Trash, Archive,
    /// Spam and All Mail first, then folders and labels by name.
    static func list(labels: [(id: String, name: String)]) -> [BridgeMailbox] {
        let byName = Dictionary(labels.map { ($0.name, $0.id) }, uniquingKeysWith: { a, _ in a })
        var result = [
            BridgeMailbox(name: "INBOX", labelID: SystemLabel.inbox, attributes: [], isFolder: true),
            BridgeMailbox(name: "Sent", labelID: SystemLabel.sent, attributes: ["\\Sent"], isFolder: true),
            BridgeMailbox(name: "Drafts", labelID: byName[draftsLabelName], attributes: ["\\Drafts"], isFolder: true),
            BridgeMailbox(name: "Trash", labelID: SystemLabel.trash, attributes: ["\\Trash"], isFolder: true),
            BridgeMailbox(name: "Archive", labelID: SystemLabel.archive, attributes: ["\\Archive"], isFolder: true),
            BridgeMailbox(name: "Spam", labelID: byName[spamLabelName], attributes: ["\\Junk"], isFolder: true),
            BridgeMailbox(name: allMail, labelID: nil, attributes: ["\\All"], isFolder: false),
        ].filter { $0.labelID != nil || $0.name == allMail }
        let reserved: Set<String> = [SystemLabel.inbox, SystemLabel.sent, SystemLabel.trash, SystemLabel.archive]
        var custom: [BridgeMailbox] = []
        for label in labels where !reserved.contains(label.id) {
            if [draftsLabelName, spamLabelName, starredLabelName].contains(label.name) { continue }
            if label.name.hasPrefix(folderPrefix), label.name.count > folderPrefix.count {
                custom.append(BridgeMailbox(name: label.name, labelID: label.id, attributes: [], isFolder: true))
            } else {
                custom.append(BridgeMailbox(name: labelPrefix + label.name, labelID: label.id, attributes: [], isFolder: false))
            }
        }
        custom.sort { $0.name < $1.name }
        result += custom
        let names = result.map(\.name)
        for index in result.indices {
            let hasChildren = names.contains { $0.hasPrefix(result[index].name + "/") }
            result[index].attributes.insert(hasChildren ? "\\HasChildren" : "\\HasNoChildren", at: 0)
        }
        // The parents `Folders` and `Labels` exist as names only.
        for parent in ["Folders", "Labels"] where custom.contains(where: { $0.name.hasPrefix(parent + "/") }) {
            result.append(BridgeMailbox(name: parent, labelID: "", attributes: ["\\Noselect", "\\HasChildren"], isFolder: false))
        }
        return result
    }

    /// The account label name a new IMAP mailbox becomes: `Folders/X` stays `Folders/X`,
    /// `Labels/X` becomes `X`. Anything else is refused (nil).
    static func labelName(forNewMailbox name: String) -> String? {
        if name.hasPrefix(folderPrefix), name.count > folderPrefix.count { return name }
        if name.hasPrefix(labelPrefix), name.count > labelPrefix.count {
            let bare = String(name.dropFirst(labelPrefix.count))
            return [draftsLabelName, spamLabelName, starredLabelName].contains(bare) ? nil : bare
        }
        return nil
    }
}
