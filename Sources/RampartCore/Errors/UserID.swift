/// The identifier of a logged-in user (the backend's user id). Not secret, but also not the
/// username: the username is sealed (trust model: "username — critical: ties the account to a
/// person").
public struct UserID: Hashable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    /// - Precondition: `rawValue` is 1...128 characters of `[A-Za-z0-9._-]` (it is used in file
    ///   and keychain names). Use ``init(validating:)`` for untrusted input.
    public init(_ rawValue: String) {
        precondition(UserID.isValid(rawValue), "invalid user id")
        self.rawValue = rawValue
    }

    public init(stringLiteral value: String) { self.init(value) }

    /// Validates untrusted input. - Throws: ``InvalidUserID``.
    public init(validating rawValue: String) throws {
        guard UserID.isValid(rawValue) else { throw InvalidUserID(value: rawValue) }
        self.rawValue = rawValue
    }

    public static func isValid(_ value: String) -> Bool {
        guard (1...128).contains(value.utf8.count), value != ".", value != ".." else { return false }
        return value.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(String.self)
        try self.init(validating: value)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// A user id that is empty, too long, or has characters outside `[A-Za-z0-9._-]`.
public struct InvalidUserID: Error, CustomStringConvertible {
    public let value: String
    public var description: String {
        "Invalid user id (\(value.count) characters): use 1–128 characters of letters, digits, '.', '_' or '-'."
    }
}
