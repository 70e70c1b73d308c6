import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The user id of the process at the other end of a loopback TCP connection.
///
/// Trust-model row **local web access (other local users)**: every user of the machine can
/// connect to 127.0.0.1; a cookie for 127.0.0.1 is sent by the browser to every port of it, so a
/// server another user runs there could learn it. The web app therefore serves only connections
/// whose client socket belongs to its own uid: on Linux the kernel lists each TCP socket with its
/// owner in `/proc/net/tcp` (and `tcp6`); the client's entry is the one whose local address is
/// the connection's remote end and whose remote address is the server's end.
public enum LoopbackPeer {
    /// The uid owning the client socket `clientPort` → `serverPort` on loopback, or nil when the
    /// kernel does not say (not Linux, or the entry is gone).
    public static func uid(clientPort: Int, serverPort: Int) -> uid_t? {
        #if os(Linux)
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            // Read to the end: /proc files report a size of 0, so a sized read gets nothing.
            guard let handle = FileHandle(forReadingAtPath: table) else { continue }
            let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
            try? handle.close()
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 7, port(of: fields[1]) == clientPort, port(of: fields[2]) == serverPort,
                      isLoopback(fields[1]), isLoopback(fields[2]), let uid = UInt32(fields[7]) else { continue }
                return uid
            }
        }
        return nil
        #else
        return nil
        #endif
    }

    /// Whether the connection's client runs as this process's uid. Where the kernel does not say
    /// (not Linux), the answer is yes: the session cookie and CSRF token still apply.
    public static func isSameUser(clientPort: Int, serverPort: Int) -> Bool {
        #if os(Linux)
        return uid(clientPort: clientPort, serverPort: serverPort) == getuid()
        #else
        return true
        #endif
    }

    /// The port of a `/proc/net/tcp` address (`0100007F:1F90`).
    static func port(of address: Substring) -> Int? {
        guard let colon = address.lastIndex(of: ":") else { return nil }
        return Int(address[address.index(after: colon)...], radix: 16)
    }

    /// 127.0.0.0/8 (as `0100007F`, little-endian), `::1`, or `::ffff:127.x.x.x`.
    static func isLoopback(_ address: Substring) -> Bool {
        guard let colon = address.lastIndex(of: ":") else { return false }
        let host = address[..<colon]
        if host.count == 8 { return host.hasSuffix("7F") }
        if host == "00000000000000000000000001000000" { return true }
        return host.count == 32 && host.hasPrefix("0000000000000000FFFF0000") && host.hasSuffix("7F")
    }
}
