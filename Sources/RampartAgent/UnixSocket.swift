import CRampartShims
import Foundation
import RampartCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Plain POSIX stream sockets in the Unix domain: what the agent and its clients speak over.
enum UnixSocket {
    #if canImport(Glibc)
    static let streamType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    static let streamType = SOCK_STREAM
    static let sendFlags: Int32 = 0
    #endif

    static func address(_ path: String) throws -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            throw AgentError.socketPathTooLong(path: path, length: bytes.count, limit: capacity - 1)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        return address
    }

    /// Two connected sockets (`[0]` and `[1]`), as a peer and its counterpart in one process.
    static func makePair() throws -> [Int32] {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, streamType, 0, &fds) == 0 else {
            throw AgentError.socketFailure(operation: "socketpair", errno: errno)
        }
        return fds
    }

    static func makeSocket() throws -> Int32 {
        let fd = socket(AF_UNIX, streamType, 0)
        guard fd >= 0 else { throw AgentError.socketFailure(operation: "socket", errno: errno) }
        #if canImport(Darwin)
        var on: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
        return fd
    }

    /// Connects to `path`. - Throws: ``AgentError/notRunning(socketPath:)`` when nobody listens.
    static func connect(path: String) throws -> Int32 {
        var address = try address(path)
        let fd = try makeSocket()
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc_connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            let code = errno
            close(fd)
            switch code {
            case ENOENT, ECONNREFUSED, ENOTDIR: throw AgentError.notRunning(socketPath: path)
            default: throw AgentError.socketFailure(operation: "connect", errno: code)
            }
        }
        return fd
    }

    /// Binds and listens on `path` (which must not exist), with the socket file 0600.
    static func listen(path: String, backlog: Int32 = 16) throws -> Int32 {
        var address = try address(path)
        let fd = try makeSocket()
        // The socket file is created with the umask applied: make it 0600 from the start.
        let previousMask = umask(0o177)
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        let bindErrno = errno
        umask(previousMask)
        guard result == 0 else {
            close(fd)
            throw AgentError.socketFailure(operation: "bind", errno: bindErrno)
        }
        guard Glibc_listen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            throw AgentError.socketFailure(operation: "listen", errno: code)
        }
        return fd
    }

    /// Sets send and receive timeouts, so a stalled peer cannot hold a thread forever.
    static func setTimeouts(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        let size = socklen_t(MemoryLayout<timeval>.size)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, size)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, size)
    }

    /// The uid of the process at the other end (SO_PEERCRED / getpeereid), or nil.
    static func peerUID(_ fd: Int32) -> Int64? {
        let uid = rampart_peer_uid(fd)
        return uid < 0 ? nil : Int64(uid)
    }

    static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < buffer.count {
            let sent = send(fd, buffer.baseAddress! + offset, buffer.count - offset, sendFlags)
            if sent < 0 {
                if errno == EINTR { continue }
                throw AgentError.socketFailure(operation: "send", errno: errno)
            }
            offset += sent
        }
    }

    /// Fills `buffer` completely. Returns false on end of stream before the first byte.
    static func readExactly(_ fd: Int32, _ buffer: UnsafeMutableRawBufferPointer) throws -> Bool {
        var offset = 0
        while offset < buffer.count {
            let got = recv(fd, buffer.baseAddress! + offset, buffer.count - offset, 0)
            if got < 0 {
                if errno == EINTR { continue }
                throw AgentError.socketFailure(operation: "recv", errno: errno)
            }
            if got == 0 {
                if offset == 0 { return false }
                throw AgentError.protocolViolation("the connection closed in the middle of a message")
            }
            offset += got
        }
        return true
    }
}

// `connect` and `listen` are shadowed by the static methods above.
private func Glibc_connect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}

private func Glibc_listen(_ fd: Int32, _ backlog: Int32) -> Int32 {
    listen(fd, backlog)
}
