/// The paths of the Rampart backend API, version 1. Both the embedded server and the client use
/// these constants, so they cannot drift apart.
public enum APIRoute {
    public static let login = "/v1/auth/login"
    public static let refresh = "/v1/auth/refresh"
    public static let logout = "/v1/auth/logout"
    public static let events = "/v1/events"
    public static let labels = "/v1/labels"
    public static let messages = "/v1/messages"
    public static func message(_ id: String) -> String { "/v1/messages/\(id)" }
    public static func markRead(_ id: String) -> String { "/v1/messages/\(id)/read" }
    public static func attachment(_ id: String) -> String { "/v1/attachments/\(id)" }
    public static let send = "/v1/mail/send"
    public static let pushSubscriptions = "/v1/push/subscriptions"
    public static let driveBlocks = "/v1/drive/blocks"
    public static func driveBlock(_ id: String) -> String { "/v1/drive/blocks/\(id)" }
    public static let driveNodes = "/v1/drive/nodes"
    public static func driveNode(_ id: String) -> String { "/v1/drive/nodes/\(id)" }
}
