import Foundation
import NIOSSL
import PostgresNIO
import RampartServer

/// A `postgresql://` URL as libpq writes it: `postgresql://user:password@host:port/database`, or a
/// Unix socket folder in `?host=/folder` (the socket is `/folder/.s.PGSQL.<port>`), and
/// `?sslmode=disable|prefer|require`.
///
/// Trust-model row **server database (critical)**: the password is a secret of the operator's.
/// ``redacted`` is the only form that is logged or put in an error; the password itself goes to
/// the PostgreSQL connection and nowhere else.
public struct PostgresURL: Sendable, CustomStringConvertible {
    /// Where the server listens.
    public enum Address: Sendable, Equatable {
        case tcp(host: String, port: Int)
        case unixSocket(path: String)
    }

    /// TLS to the database: none, when offered, or required (and its certificate checked).
    public enum TLSMode: String, Sendable {
        case disable, prefer, require
    }

    public let address: Address
    public let user: String
    let password: String?
    public let database: String
    public let tls: TLSMode

    /// Parses `text`.
    /// - Throws: ``PostgresStorageError/invalidURL(_:)`` naming what is wrong, never the password.
    public init(_ text: String) throws {
        // Parsed by hand: Foundation's URLComponents drops the user of a URL with an empty host
        // (`postgresql://user:pw@/db?host=/socket/folder`), which libpq accepts.
        guard let schemeEnd = text.range(of: "://"), ["postgresql", "postgres"].contains(text[..<schemeEnd.lowerBound]) else {
            throw PostgresStorageError.invalidURL("it must start with postgresql://")
        }
        var rest = String(text[schemeEnd.upperBound...])
        var queryText = ""
        if let mark = rest.firstIndex(of: "?") {
            queryText = String(rest[rest.index(after: mark)...])
            rest = String(rest[..<mark])
        }
        var path = ""
        if let slash = rest.firstIndex(of: "/") {
            path = String(rest[rest.index(after: slash)...])
            rest = String(rest[..<slash])
        }
        var userInfo: String?
        if let at = rest.lastIndex(of: "@") {
            userInfo = String(rest[..<at])
            rest = String(rest[rest.index(after: at)...])
        }
        var hostText = rest
        var portText: String?
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            hostText = String(rest[..<colon])
            portText = String(rest[rest.index(after: colon)...])
        }
        let query = Dictionary(queryText.split(separator: "&").map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }, uniquingKeysWith: { $1 })
        guard let port = Int(portText ?? query["port"] ?? "5432"), (1...65_535).contains(port) else {
            throw PostgresStorageError.invalidURL("the port is not a number from 1 to 65535")
        }
        if let socketFolder = query["host"], socketFolder.hasPrefix("/") {
            address = .unixSocket(path: socketFolder + "/.s.PGSQL.\(port)")
        } else {
            let host = (hostText.isEmpty ? (query["host"] ?? "") : hostText).trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
            guard !host.isEmpty else {
                throw PostgresStorageError.invalidURL("it names no host (postgresql://user@host/database, or ?host=/socket/folder)")
            }
            address = .tcp(host: host, port: port)
        }
        var userText = query["user"]
        var passwordText = query["password"]
        if let userInfo {
            if let colon = userInfo.firstIndex(of: ":") {
                userText = String(userInfo[..<colon])
                passwordText = String(userInfo[userInfo.index(after: colon)...]).removingPercentEncoding
            } else {
                userText = userInfo
            }
        }
        guard let user = userText?.removingPercentEncoding, !user.isEmpty else {
            throw PostgresStorageError.invalidURL("it names no user (postgresql://user@host/database)")
        }
        self.user = user
        password = passwordText
        database = path.removingPercentEncoding ?? path
        guard !database.isEmpty else { throw PostgresStorageError.invalidURL("it names no database (postgresql://user@host/database)") }
        let loopback: Bool
        switch address {
        case .unixSocket: loopback = true
        case .tcp(let host, _): loopback = ["localhost", "127.0.0.1", "::1"].contains(host)
        }
        // require checks the certificate and the host name (NIOSSL's default), as libpq's verify-full.
        let asked = query["sslmode"].map { ["verify-full", "verify-ca"].contains($0) ? "require" : $0 }
        guard let mode = TLSMode(rawValue: asked ?? (loopback ? "disable" : "prefer")) else {
            throw PostgresStorageError.invalidURL("sslmode must be disable, prefer, require or verify-full")
        }
        tls = mode
    }

    /// The same server and credentials, database `name`.
    public func with(database name: String) -> PostgresURL {
        PostgresURL(address: address, user: user, password: password, database: name, tls: tls)
    }

    private init(address: Address, user: String, password: String?, database: String, tls: TLSMode) {
        self.address = address; self.user = user; self.password = password; self.database = database; self.tls = tls
    }

    /// The URL with the password replaced by `***`: what logs and errors show.
    public var redacted: String {
        let credentials = user + (password == nil ? "" : ":***")
        switch address {
        case .tcp(let host, let port): return "postgresql://\(credentials)@\(host):\(port)/\(database)"
        case .unixSocket(let path): return "postgresql://\(credentials)@/\(database)?host=\((path as NSString).deletingLastPathComponent)"
        }
    }

    public var description: String { redacted }

    /// The connection settings for postgres-nio.
    func configuration() throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        switch address {
        case .unixSocket(let path):
            configuration = .init(unixSocketPath: path, username: user, password: password, database: database)
        case .tcp(let host, let port):
            let tlsSetting: PostgresConnection.Configuration.TLS
            switch tls {
            case .disable: tlsSetting = .disable
            case .prefer: tlsSetting = .prefer(try NIOSSLContext(configuration: .makeClientConfiguration()))
            case .require: tlsSetting = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            configuration = .init(host: host, port: port, username: user, password: password, database: database, tls: tlsSetting)
        }
        configuration.options.connectTimeout = .seconds(5)
        return configuration
    }
}

/// Why the PostgreSQL engine cannot be used.
public enum PostgresStorageError: Error, CustomStringConvertible {
    /// The `--database` URL is not one this engine reads.
    case invalidURL(String)

    public var description: String {
        switch self {
        case .invalidURL(let why): "The database URL is not usable: \(why)."
        }
    }
}
