import Foundation

/// An isync (`mbsync`) configuration that mirrors every mailbox of an IMAP server on 127.0.0.1
/// into a Maildir: what the IMAP server's and the bridge's mbsync tests write.
public struct MbsyncConfiguration: Sendable {
    /// The server's port, username and password.
    public var port: Int, user: String, password: String
    /// `nil`: plain text with AUTH PLAIN; a PEM file: STARTTLS, trusting that certificate.
    public var certificate: String?
    /// The Maildir folder (INBOX is `<maildir>/INBOX`).
    public var maildir: URL

    public init(port: Int, user: String, password: String, certificate: String? = nil, maildir: URL) {
        self.port = port; self.user = user; self.password = password; self.certificate = certificate; self.maildir = maildir
    }

    /// The configuration file's text: one channel over every mailbox, Maildir folders created,
    /// flags synced both ways, nothing expunged.
    public var text: String {
        let transport = certificate.map { "SSLType STARTTLS\nCertificateFile \($0)\nAuthMechs LOGIN" } ?? "SSLType None\nAuthMechs PLAIN"
        return """
            IMAPAccount bridge
            Host 127.0.0.1
            Port \(port)
            User \(user)
            Pass \(password)
            \(transport)
            Timeout 60

            IMAPStore remote
            Account bridge

            MaildirStore local
            Path \(maildir.path)/
            Inbox \(maildir.path)/INBOX
            SubFolders Verbatim

            Channel all
            Far :remote:
            Near :local:
            Patterns *
            Create Near
            Sync All
            Expunge None
            SyncState *

            """
    }

    /// Writes ``text`` to `file`.
    public func write(to file: URL) throws { try text.write(to: file, atomically: true, encoding: .utf8) }
}
