import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
import RampartServerTestSupport
import RampartTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Random markers through an account's whole life — sign-up (two passwords, a recovery phrase),
/// mail, recovery with the phrase (new passwords), deletion — against `rampart server start` in a
/// child process; then none of the passwords, the mailbox passwords, the phrase, the mail's text or
/// the cleartext export of the user key or of the address key, or the address key's token, is in
/// the server's database file, its WAL, or the server process's memory (every readable mapping of /proc/<pid>/mem, read as root).
@Suite("Secrets never reach the server: database, WAL, process memory", .serialized)
struct SecretScanEndToEndTests {
    @Test func noSecretOfTheAccountsLifeReachesTheServer() async throws {
        let (world, server, info) = try await EndToEndWorld.withServer(["--no-demo", "--open-signup"])
        defer { world.close(server) }
        let marker = { (what: String) in "\(what)-\(UUID().uuidString)" }
        let login1 = marker("login1"), mailbox1 = marker("mailbox1"), login2 = marker("login2"), mailbox2 = marker("mailbox2")
        let text = marker("mailtext")
        let phraseFile = world.folder.child("phrase")
        #expect(try await world.rampart(["signup", "--user", "zed", "--server-info", info, "--username", "zed", "--two-password", "--password-stdin",
                                   "--mailbox-password-stdin", "--recovery-phrase-file", phraseFile.path], stdin: "\(login1)\n\(mailbox1)\n").status == 0)
        let phrase = try String(contentsOf: phraseFile, encoding: .utf8).trimmingCharacters(in: .newlines)
        #expect(try await world.rampart(["send", "--user", "zed", "--to", "zed@rampart.test", "--subject", "s"], stdin: "<p>\(text)</p>").status == 0)
        #expect(try await world.rampart(["sync", "--user", "zed"]).status == 0)
        let recovered = try await world.rampart(["account", "recover", "--user", "zed2", "--server-info", info, "--username", "zed", "--phrase-stdin",
                                           "--password-stdin", "--two-password", "--mailbox-password-stdin"],
                                          stdin: "\(phrase)\n\(login2)\n\(mailbox2)\n")
        #expect(recovered.status == 0, "\(recovered.stderr)")
        // The key's cleartext export, from the copy the phrase opens (read before the deletion).
        let copy = try await Self.sqlite(server, "SELECT hex(lockedKey), hex(salt), logN FROM recoveryCopies;").split(separator: "|")
        try #require(copy.count == 3)
        let key = try RecoveryKeyCopy(lockedKey: String(decoding: Self.bytes(hex: String(copy[0])), as: UTF8.self),
                                      salt: [UInt8](Self.bytes(hex: String(copy[1]))), logN: UInt8(copy[2].trimmingCharacters(in: .whitespacesAndNewlines))!)
            .unlock(with: try RecoveryPhrase(phrase: SecretBytes(copying: Array(phrase.utf8))))
        let export = try key.unprotectedExport()
        let binaryKey = try export.withUnsafeBytes { Data($0) }
        // The address key's token and cleartext export: the user key opens the token, the token the key.
        let row = try await Self.sqlite(server, "SELECT address, hex(publicKey), hex(privateKey), hex(token), hex(signature) FROM addressKeys;")
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").map(String.init)
        try #require(row.count == 5)
        func utf8(_ hex: String) -> String { String(decoding: Self.bytes(hex: hex), as: UTF8.self) }
        let record = AddressKey(address: row[0], publicKey: try PGPPublicKey(binary: Self.bytes(hex: row[1])).armored(),
                                privateKey: utf8(row[2]), token: utf8(row[3]), signature: utf8(row[4]))
        let addressKey = try AddressKeys.unlock(record, userKey: key)
        let addressExport = try addressKey.unprotectedExport()
        let binaryAddressKey = try addressExport.withUnsafeBytes { Data($0) }
        let token = try OpenPGP.decrypt(Data(record.token.utf8), with: [key], verifyingWith: []).data
        #expect(token.count == 64)
        #expect(try await world.rampart(["sync", "--user", "zed2"]).status == 0)
        #expect(try await world.rampart(["account", "delete", "--user", "zed2", "--yes", "--password-stdin"], stdin: "\(login2)\n").status == 0)

        var secrets: [(String, Data)] = [login1, mailbox1, login2, mailbox2, phrase, text].map { ($0, Data($0.utf8)) }
        secrets.append(("the key's cleartext export", binaryKey))
        secrets.append(("the address key's cleartext export", binaryAddressKey))
        secrets.append(("the address key's token", token))
        let database = server.dataDirectory.appendingPathComponent("backend.sqlite")
        for file in [database, URL(fileURLWithPath: database.path + "-wal")] where FileManager.default.fileExists(atPath: file.path) {
            let bytes = try Data(contentsOf: file)
            for (name, secret) in secrets { #expect(bytes.range(of: secret) == nil, "\(name) is in \(file.lastPathComponent)") }
        }
        let memory = try Self.readableMemory(of: server.child.processIdentifier)
        #expect(memory.totalBytes > 1 << 20, "only \(memory.totalBytes) bytes of the server's memory were read")
        for (name, secret) in secrets { #expect(Self.contains(memory, secret) == false, "\(name) is in the server process's memory") }
        // The scan finds what is there: the server's own modulus text is in its memory.
        #expect(Self.contains(memory, Data("Rampart SRP modulus".utf8)))
    }

    // MARK: Helpers

    /// Every readable private or file mapping of `pid`, concatenated (as root; unreadable ones skipped).
    static func readableMemory(of pid: pid_t) throws -> [Data] {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        let fd = open("/proc/\(pid)/mem", O_RDONLY)
        guard fd >= 0 else { throw POSIXError(.EACCES) }
        defer { close(fd) }
        var regions: [Data] = []
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("r"), !line.hasSuffix("[vvar]"), !line.hasSuffix("[vsyscall]") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard bounds.count == 2, bounds[1] > bounds[0], bounds[1] - bounds[0] <= 1 << 30 else { continue }
            var buffer = Data(count: Int(bounds[1] - bounds[0]))
            let read = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(bounds[0])) }
            if read > 0 { regions.append(buffer.prefix(read)) }
        }
        return regions
    }

    static func contains(_ regions: [Data], _ needle: Data) -> Bool {
        regions.contains { region in
            region.withUnsafeBytes { hay in
                needle.withUnsafeBytes { n in
                    guard let base = hay.baseAddress, let first = n.first, hay.count >= n.count else { return false }
                    var offset = 0
                    while offset <= hay.count - n.count, let hit = memchr(base + offset, Int32(first), hay.count - n.count - offset + 1) {
                        let at = base.distance(to: UnsafeRawPointer(hit))
                        if memcmp(base + at, n.baseAddress!, n.count) == 0 { return true }
                        offset = at + 1
                    }
                    return false
                }
            }
        }
    }

    static func sqlite(_ server: ServerProcess, _ sql: String) async throws -> String {
        let result = try await CLITool(path: URL(fileURLWithPath: "/usr/bin/sqlite3"))
            .run(["-readonly", server.dataDirectory.appendingPathComponent("backend.sqlite").path, sql])
        try #require(result.status == 0, "sqlite3: \(result.stderr)")
        return result.stdout
    }

    static func bytes(hex: String) -> Data {
        var data = Data()
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
            if let byte = UInt8(hex[index..<next], radix: 16) { data.append(byte) }
            index = next
        }
        return data
    }
}

extension Array where Element == Data {
    /// The total size of the regions.
    var totalBytes: Int { reduce(0) { $0 + $1.count } }
}
