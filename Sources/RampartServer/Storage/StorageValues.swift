import Foundation

/// A value as it crosses the storage seam: the four types both engines store, and NULL.
public enum StorageValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// A Swift type that is stored as a ``StorageValue``.
public protocol StorageValueConvertible: Sendable {
    /// The stored form.
    var storageValue: StorageValue { get }
    /// The value read back, or nil for NULL or a value of another type.
    init?(storageValue: StorageValue)
}

extension String: StorageValueConvertible {
    public var storageValue: StorageValue { .text(self) }
    public init?(storageValue: StorageValue) {
        guard case .text(let text) = storageValue else { return nil }
        self = text
    }
}

extension Int64: StorageValueConvertible {
    public var storageValue: StorageValue { .integer(self) }
    public init?(storageValue: StorageValue) {
        switch storageValue {
        case .integer(let value): self = value
        case .real(let value) where value.rounded() == value && abs(value) < 9.2e18: self = Int64(value)
        default: return nil
        }
    }
}

extension Int: StorageValueConvertible {
    public var storageValue: StorageValue { .integer(Int64(self)) }
    public init?(storageValue: StorageValue) {
        guard let value = Int64(storageValue: storageValue) else { return nil }
        self = Int(value)
    }
}

extension Double: StorageValueConvertible {
    public var storageValue: StorageValue { .real(self) }
    public init?(storageValue: StorageValue) {
        switch storageValue {
        case .real(let value): self = value
        case .integer(let value): self = Double(value)
        default: return nil
        }
    }
}

extension Bool: StorageValueConvertible {
    public var storageValue: StorageValue { .integer(self ? 1 : 0) }
    public init?(storageValue: StorageValue) {
        guard let value = Int64(storageValue: storageValue) else { return nil }
        self = value != 0
    }
}

extension Data: StorageValueConvertible {
    public var storageValue: StorageValue { .blob(self) }
    public init?(storageValue: StorageValue) {
        switch storageValue {
        case .blob(let data): self = data
        case .text(let text): self = Data(text.utf8)
        default: return nil
        }
    }
}

/// The values bound to a statement's `?` placeholders, in order; written as an array literal
/// (`[userID, 1, data, optionalText]`).
public struct StorageArguments: Sendable, ExpressibleByArrayLiteral {
    /// The values, in placeholder order.
    public var values: [StorageValue]

    public init(arrayLiteral elements: (any StorageValueConvertible)?...) {
        values = elements.map { $0?.storageValue ?? .null }
    }

    /// Arguments of `values`.
    public init(values: [StorageValue]) { self.values = values }

    public static func + (lhs: StorageArguments, rhs: StorageArguments) -> StorageArguments {
        StorageArguments(values: lhs.values + rhs.values)
    }

    public static func += (lhs: inout StorageArguments, rhs: StorageArguments) { lhs.values += rhs.values }
}

/// One row of a query's answer; columns are looked up by name, ignoring case (PostgreSQL folds
/// unquoted names to lower case).
public struct StorageRow: Sendable {
    /// The column names, as the engine reported them.
    public let columns: [String]
    /// The values, one per column.
    public let values: [StorageValue]

    /// A row of `columns` holding `values`.
    public init(columns: [String], values: [StorageValue]) {
        self.columns = columns
        self.values = values
    }

    /// The value of `column`, or NULL when the row has no such column.
    public func value(_ column: String) -> StorageValue {
        if let index = columns.firstIndex(of: column) { return values[index] }
        let folded = column.lowercased()
        guard let index = columns.firstIndex(where: { $0.lowercased() == folded }) else { return .null }
        return values[index]
    }

    /// The value of `column` as `V`. A NULL or a value of another type is a programming error
    /// (the schema says what each column holds), as in GRDB.
    public subscript<V: StorageValueConvertible>(_ column: String) -> V {
        let value = value(column)
        guard let converted = V(storageValue: value) else {
            preconditionFailure("the column \(column) holds no \(V.self)")
        }
        return converted
    }

    /// The value of `column` as `V`, nil for NULL.
    public subscript<V: StorageValueConvertible>(_ column: String) -> V? {
        V(storageValue: value(column))
    }

    /// A column as `Data` (empty if NULL).
    public func data(_ column: String) -> Data { Data(storageValue: value(column)) ?? Data() }
}

extension StorageRow {
    /// The first row of a query, if any.
    /// - Throws: ``StorageError``.
    public static func fetchOne(_ db: any StorageConnection, sql: String, arguments: StorageArguments = []) throws -> StorageRow? {
        try db.fetchAll(sql: sql, arguments: arguments).first
    }

    /// Every row of a query.
    /// - Throws: ``StorageError``.
    public static func fetchAll(_ db: any StorageConnection, sql: String, arguments: StorageArguments = []) throws -> [StorageRow] {
        try db.fetchAll(sql: sql, arguments: arguments)
    }
}

extension StorageValueConvertible {
    /// The first column of the first row, nil when there is no row or it is NULL.
    /// - Throws: ``StorageError``.
    public static func fetchOne(_ db: any StorageConnection, sql: String, arguments: StorageArguments = []) throws -> Self? {
        guard let row = try db.fetchAll(sql: sql, arguments: arguments).first, let value = row.values.first else { return nil }
        return Self(storageValue: value)
    }

    /// The first column of every row (NULLs left out).
    /// - Throws: ``StorageError``.
    public static func fetchAll(_ db: any StorageConnection, sql: String, arguments: StorageArguments = []) throws -> [Self] {
        try db.fetchAll(sql: sql, arguments: arguments).compactMap { row in row.values.first.flatMap { Self(storageValue: $0) } }
    }
}
