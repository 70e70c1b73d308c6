import Foundation
import Keychain
import PushCrypto
import RampartAPI
import RampartCore

/// The push process: reads the per-session push inboxes the backend writes (what a push service
/// would deliver) and opens them with the session's push key.
///
/// Trust-model row **push payload key**: it needs no MainKey and no PIN — it is given a keychain
/// limited to the **shared** access group, where only the push keys live; it finds the user from
/// the session id alone. Pushes are deleted once read (they are not kept, and never backed up);
/// replays are refused by PushCrypto's salt ledger.
public struct PushInbox: Sendable {
    /// One opened notification.
    public struct Delivery: Sendable {
        public var session: String
        public var user: UserID
        public var notification: PushNotification
    }

    /// `<pushDirectory>`, holding `<sessionId>/*.push`.
    public let directory: URL
    /// A keychain limited to the shared group.
    public let keychain: any Keychain
    public let clock: any RampartClock

    public init(directory: URL, keychain: any Keychain, clock: any RampartClock = SystemClock()) {
        self.directory = directory
        self.keychain = AccessGroupLimitedKeychain(keychain, allowedGroups: [.shared])
        self.clock = clock
    }

    /// Opens and deletes every push of the sessions whose keys are on this device, oldest first.
    /// With `user` (a local account), only that account's sessions. Returns the notifications
    /// and the number of pushes that did not open (also deleted).
    public func drain(only localUser: UserID? = nil) -> (deliveries: [Delivery], failures: Int) {
        let user = localUser.flatMap { try? PushKeysWipe.owner(of: $0, in: keychain) }
        if localUser != nil && user == nil { return ([], 0) }
        let fm = FileManager.default
        var deliveries: [Delivery] = []
        var failures = 0
        let sessions = ((try? fm.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
        for name in sessions {
            guard let session = try? PushSessionID(name),
                  let owner = try? PushKeyring.user(ofSession: session, in: keychain),
                  user == nil || owner == user else { continue }
            let receiver = PushReceiver(keyring: PushKeyring(keychain: keychain, clock: clock, userID: owner), sessionID: session)
            let folder = directory.appendingPathComponent(name, isDirectory: true)
            let files = ((try? fm.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".push") }.sorted()
            for file in files {
                let url = folder.appendingPathComponent(file)
                defer { try? fm.removeItem(at: url) }
                guard let body = try? Data(contentsOf: url), let notification = try? receiver.decrypt([UInt8](body)) else {
                    failures += 1
                    continue
                }
                deliveries.append(Delivery(session: name, user: owner, notification: notification))
            }
        }
        return (deliveries, failures)
    }
}

/// The push keys of a local account, and their wipe.
///
/// Push payloads name the account by its **server** user id (the push process knows nothing
/// else), so the push keyring lives under that id. A link item in the shared group (under the
/// local account's service) says which server id a local account's push keys belong to, so the
/// wipe — at logout or after too many wrong PINs, without the MainKey — finds and deletes them.
///
/// Trust-model row **push payload key**: "the private key is deleted at logout".
public struct PushKeysWipe: Wipeable {
    public let keychain: any Keychain
    static let linkItem = "client.push-owner"

    public init(keychain: any Keychain) { self.keychain = keychain }
    public var wipeName: String { "push-keys" }

    /// Records that `localUser`'s push keys are those of `serverUser`.
    public static func link(_ localUser: UserID, to serverUser: UserID, in keychain: any Keychain) throws {
        try keychain.set(SecretBytes(copying: Array(serverUser.rawValue.utf8)), for: .user(localUser, linkItem, accessGroup: .shared))
    }

    /// The server user id whose push keys belong to `localUser`, if any.
    public static func owner(of localUser: UserID, in keychain: any Keychain) throws -> UserID? {
        guard let value = try keychain.readIfPresent(.user(localUser, linkItem, accessGroup: .shared)) else { return nil }
        return try value.withUnsafeBytes { try UserID(validating: String(decoding: $0, as: UTF8.self)) }
    }

    public func wipe(user: UserID) throws {
        guard let owner = try Self.owner(of: user, in: keychain) else { return }
        try PushKeyring(keychain: keychain, clock: SystemClock(), userID: owner).logout()
        _ = try keychain.deleteIfPresent(.user(user, Self.linkItem, accessGroup: .shared))
    }
}

extension PushInbox {
    /// The push folder a server's `server.json` names (the embedded server's stand-in for a push
    /// service). - Throws: ``ClientError/badInput(_:)`` when the file cannot be read or names none.
    public static func directory(serverInfoFile url: URL) throws -> URL {
        let data: Data
        do { data = try Data(contentsOf: url) } catch { throw ClientError.badInput("Cannot read \(url.path).") }
        guard let info = try? JSONDecoder().decode(ServerInfo.self, from: data), let push = info.pushDirectory else {
            throw ClientError.badInput("\(url.path) names no push folder.")
        }
        return URL(fileURLWithPath: push)
    }
}
