/// What the server advertises in CAPABILITY: exactly `IMAP4rev1` and the extensions implemented.
public enum IMAPCapabilities {
    /// The extensions this library implements, in the order CAPABILITY lists them.
    public static let extensions = [
        "LITERAL+",      // RFC 7888
        "SASL-IR",       // RFC 4959
        "ID",            // RFC 2971
        "ENABLE",        // RFC 5161
        "IDLE",          // RFC 2177
        "NAMESPACE",     // RFC 2342
        "UIDPLUS",       // RFC 4315
        "MOVE",          // RFC 6851
        "UNSELECT",      // RFC 3691
        "CHILDREN",      // RFC 3348
        "SPECIAL-USE",   // RFC 6154
        "CONDSTORE",     // RFC 7162 §3.1
        "QRESYNC",       // RFC 7162 §3.2
    ]

    /// The capability list for a connection: STARTTLS while it can still be started,
    /// LOGINDISABLED (and no AUTH=) while a password may not be sent in the clear.
    static func list(tlsAvailable: Bool, loginAllowed: Bool, authenticated: Bool) -> [String] {
        var caps = ["IMAP4rev1"] + extensions
        if tlsAvailable && !authenticated { caps.append("STARTTLS") }
        if !authenticated { caps.append(loginAllowed ? "AUTH=PLAIN" : "LOGINDISABLED") }
        return caps
    }
}
