extension MboxEntry {
    /// Splits one entry's bytes, exactly as they stood in an mbox file (its `From ` line, the
    /// quoted message, the separator line), into an entry: the inverse of
    /// ``MboxEntry/originalBytes``. Used to give back the RFC 5322 message of an entry that was
    /// kept whole (export of an imported mbox message as .eml).
    public init(originalBytes: [UInt8], index: Int = 0, format: MboxFormat = .mboxrd) {
        self = MboxReader.makeEntry(index: index, offset: 0, original: originalBytes, format: format)
    }
}
