import Foundation

// Sync: the event log the client follows to keep its local copy up to date.

/// One change in the user's account, as the event log reports it.
///
/// Trust-model row **database (critical)**: events carry ids only; the changed objects are
/// fetched (sealed) separately.
public struct APIEvent: Codable, Sendable, Equatable {
    /// What kind of object changed.
    public enum Kind: String, Codable, Sendable {
        /// A message (new, label or read state changed, deleted).
        case message
        /// A label.
        case label
        /// A drive node.
        case drive
    }
    /// What happened to it.
    public enum Action: String, Codable, Sendable {
        /// The object was created.
        case create
        /// The object changed.
        case update
        /// The object was deleted.
        case delete
    }
    /// The event's position in the log (increasing).
    public var id: Int64
    /// What kind of object changed.
    public var kind: Kind
    /// What happened to it.
    public var action: Action
    /// The id of the object that changed.
    public var objectId: String
    /// An event.
    public init(id: Int64, kind: Kind, action: Action, objectId: String) { self.id = id; self.kind = kind; self.action = action; self.objectId = objectId }
}

/// `GET /v1/events?since=N`: the events after `N`, oldest first, at most 500 per page.
///
/// Trust-model row **database (critical)**: modified data can mislead the user until the next
/// sync; the client applies events in order and resumes from ``cursor``.
public struct EventsResponse: Codable, Sendable {
    /// The id of the last event returned (pass it as `since` next time).
    public var cursor: Int64
    /// Whether more events follow (ask again at once).
    public var more: Bool
    /// The events, oldest first.
    public var events: [APIEvent]
    /// A page of events.
    public init(cursor: Int64, more: Bool, events: [APIEvent]) { self.cursor = cursor; self.more = more; self.events = events }
}
