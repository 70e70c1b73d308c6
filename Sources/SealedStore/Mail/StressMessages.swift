extension MailMessage {
    /// Message number `index` of the crash test's deterministic stream: what
    /// `rampart-dev store stress-write` writes until it is killed, and what the crash test
    /// rebuilds to compare every committed message with, so writer and checker cannot drift apart.
    ///
    /// Trust-model row **device storage (low)**: the stream lets the crash test show that a writer
    /// killed mid-transaction loses no committed message and leaves a database that opens.
    public static func stress(_ index: Int) -> MailMessage {
        MailMessage(
            id: "stress-\(index)", conversationID: "c\(index / 10)", time: Int64(1_700_000_000 + index), size: Int64(index),
            labelIDs: ["inbox"], subject: "Stress subject \(index)",
            sender: MailAddress(name: "Writer", address: "writer@example.org"),
            recipients: [MailAddress(address: "reader@example.org")],
            body: String(repeating: "stress body \(index) ", count: 40))
    }
}
