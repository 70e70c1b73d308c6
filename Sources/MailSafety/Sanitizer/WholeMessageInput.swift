import HTML5

extension MailSanitizer {
    /// ``sanitize(bytes:)`` for a message read whole into an array (a command's standard
    /// input): the bytes are checked to be UTF-8 once, by the parser's validator (ASCII 32 and 8
    /// bytes at a time), and the first pass parses them as they are (no `String` of the message
    /// is made; the parser's input is the array itself when it holds no CR).
    /// (`String(validating:as:)`, what ``sanitize(bytes:)`` uses, checks the bytes scalar by
    /// scalar and copies them: 3 % of `rampart-dev sanitize` on 25 MB of real mail.) Bytes that
    /// are not UTF-8 give the same error, with the offset of the first bad byte, as
    /// ``sanitize(bytes:)``.
    ///
    /// Trust-model row: inbox (incoming mail) — the same output and errors as
    /// ``sanitize(bytes:)``, for less work on the command-line path.
    /// - Throws: ``MailSafetyError`` (``MailSafetyError/invalidEncoding(byteOffset:)``, too large,
    ///   bad wrapper id).
    ///
    /// The bytes are taken over: they become the first parse's input, released when that parse
    /// is done (a caller that hands over its only copy makes no other copy of the message).
    public func sanitize(utf8 bytes: consuming [UInt8]) throws(MailSafetyError) -> SanitizedMessage {
        try sanitize(utf8: consume bytes, freeingTree: true)
    }

    /// ``sanitize(utf8:)`` for a command that writes the output and exits (`rampart-dev
    /// sanitize`): with `freeingTree: false` the last pass's cleaned tree is not freed when this
    /// returns but stays allocated until the process ends. Freeing a large message's tree row by
    /// row is work the kernel does at once when the process ends (3 % of that command on 25 MB
    /// of mail). Not for apps, which must free every tree: hence an SPI
    /// (`@_spi(CommandLine) import MailSafety`), not part of the library's API.
    @_spi(CommandLine)
    public func sanitize(utf8 bytes: consuming [UInt8], freeingTree: Bool) throws(MailSafetyError) -> SanitizedMessage {
        guard bytes.count <= options.limits.maxInputBytes else {
            throw .tooLarge(bytes: bytes.count, limit: options.limits.maxInputBytes)
        }
        // Not UTF-8: the scalar-by-scalar path finds the offset for the error.
        guard EncodingSniffer.isValidUTF8(bytes) else { return try sanitize(bytes: bytes) }
        guard Self.isValidWrapperID(options.wrapperID) else { throw .invalidWrapperID(options.wrapperID) }
        // Checked just above: the first pass parses the bytes themselves (no `String` of them).
        var input: [UInt8]? = consume bytes
        return passes(freeingTree: freeingTree) { gate in
            ArenaPass(cleaningValidUTF8: input.take() ?? [], gate: gate, options: options)
        }
    }
}
