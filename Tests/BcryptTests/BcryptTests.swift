import Bcrypt
import Foundation
import RampartTestSupport
import RampartCore
import Testing

/// Known answers from Python's `bcrypt` package (bcrypt<5, the one proton-client uses) with
/// Proton's salt encoding, computed once with
/// `.venv/bin/python scripts/srp/bcrypt_vectors.py` on the input lines shown in each vector;
/// `liveAgainstPython` recomputes fresh random vectors with the same script at test time.
struct BcryptKnownAnswers {
    struct Vector: Sendable {
        let passwordHex: String
        let saltHex: String
        let cost: Int
        let expected: String
    }

    static let vectors: [Vector] = [
        Vector(passwordHex: "70617373776f7264", saltHex: "000102030405060708090a0b0c0d0e0f", cost: 10,
               expected: "$2y$10$..CA.uOD/eaGAOmJB.yMBuHtICrZkZBO5AdQ7Nw5WEmWQZKVA0IkK"),
        Vector(passwordHex: "61", saltHex: "a1b2c3d4e5f60718293a4b5c6d7e8f90", cost: 10,
               expected: "$2y$10$mZJBzMV0/venMiraZV4Ni.md0pbpCE/n07iXajtptPhkVA8nkMT5m"),
        // UTF-8 "é⊢🔑" (multi-byte), an all-ones salt, the lowest cost.
        Vector(passwordHex: "c3a9e28aa2f09f9491", saltHex: "ffffffffffffffffffffffffffffffff", cost: 4,
               expected: "$2y$04$999999999999999999999uvHcAAaUKmIAv8WBJeEHuKFFBrmg2GdS"),
        // 72 bytes and 100 bytes: bcrypt uses only the first 72, so both give the same hash.
        Vector(passwordHex: String(repeating: "78", count: 72), saltHex: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", cost: 5,
               expected: "$2y$05$Bv2rNCrYYVgFjoUyu7Jf6.juTkCj1TnbxClrAMzi/QrE2BUAi7NPS"),
        Vector(passwordHex: String(repeating: "78", count: 100), saltHex: "0f1e2d3c4b5a69788796a5b4c3d2e1f0", cost: 5,
               expected: "$2y$05$Bv2rNCrYYVgFjoUyu7Jf6.juTkCj1TnbxClrAMzi/QrE2BUAi7NPS"),
    ]

    @Test("bcrypt matches Python's bcrypt on fixed vectors", arguments: vectors)
    func knownAnswer(_ vector: Vector) throws {
        let hash = try Bcrypt.hash(password: SecretBytes(copying: bytes(hex: vector.passwordHex)),
                                   salt: bytes(hex: vector.saltHex), cost: vector.cost)
        #expect(try string(hash) == vector.expected)
    }

    @Test("the mailbox key passphrase is the last 31 characters of bcrypt cost 10 (computeKeyPassword)")
    func mailboxKeyPassphrase() throws {
        // Python: bcrypt.hashpw(b"mailbox pass", b"$2y$10$" + bcrypt_b64_encode(bytes(range(16, 32)))[:22])[29:]
        let passphrase = try Bcrypt.mailboxKeyPassphrase(password: SecretBytes(copying: Array("mailbox pass".utf8)),
                                                         keySalt: Array(16..<32))
        #expect(try string(passphrase) == "0F6/q7DODdH/mqwfFb6reshjZAxSE1O")
        #expect(passphrase.count == 31)
    }

    @Test("bcrypt's base64 alphabet and bit packing")
    func base64() {
        #expect(Bcrypt.bcryptBase64([]) == "")
        #expect(Bcrypt.bcryptBase64([0]) == "..")
        #expect(Bcrypt.bcryptBase64([0xFF, 0xFF, 0xFF]) == "9999")
        #expect(Bcrypt.bcryptBase64(Array(0..<16)) == "..CA.uOD/eaGAOmJB.yMBu")
        #expect(Bcrypt.bcryptBase64(Array(repeating: 0, count: 16)).count == 22)
    }

    @Test("a salt that is not 16 bytes is a typed error", arguments: [0, 10, 15, 17, 32])
    func wrongSaltLength(_ count: Int) {
        #expect(throws: BcryptError.self) {
            _ = try Bcrypt.hash(password: SecretBytes(copying: Array("pw".utf8)), salt: Array(repeating: 1, count: count))
        }
        do {
            _ = try Bcrypt.mailboxKeyPassphrase(password: SecretBytes(copying: Array("pw".utf8)), keySalt: Array(repeating: 1, count: count))
            Issue.record("a \(count)-byte key salt was accepted")
        } catch let error as BcryptError {
            guard case .invalidSalt = error else { Issue.record("wrong error \(error)"); return }
            #expect(error.kind == .badInput)
            #expect(error.code == "bcrypt.invalidSalt")
        } catch {
            Issue.record("untyped error \(error)")
        }
    }

    @Test("a cost outside 4...31 is refused")
    func wrongCost() {
        for cost in [0, 3, 32] {
            #expect(throws: BcryptError.self) {
                _ = try Bcrypt.hash(password: SecretBytes(copying: Array("pw".utf8)), salt: Array(repeating: 1, count: 16), cost: cost)
            }
        }
    }

    @Test("a password with a NUL byte is refused rather than cut short by the C string")
    func nulByte() {
        #expect(throws: BcryptError.hashingFailed("the password contains a NUL byte, which bcrypt cannot take")) {
            _ = try Bcrypt.hash(password: SecretBytes(copying: [0x61, 0x00, 0x62]), salt: Array(repeating: 1, count: 16), cost: 4)
        }
    }

    @Test("fresh random vectors agree with Python's bcrypt at test time")
    func liveAgainstPython() throws {
        guard let python = Self.python else {
            #expect(ProcessInfo.processInfo.environment["CI"] == nil, "no Python venv under CI")
            return
        }
        var lines: [String] = []
        var cases: [([UInt8], [UInt8])] = []
        for length in [1, 8, 33, 71, 72, 73] {
            let password = (0..<length).map { _ in UInt8.random(in: 1...255) }
            let salt = (0..<16).map { _ in UInt8.random(in: 0...255) }
            cases.append((password, salt))
            lines.append("\(hex(password)) \(hex(salt)) 4")
        }
        let output = try Self.run(python, script: "scripts/srp/bcrypt_vectors.py", input: lines.joined(separator: "\n") + "\n")
        let expected = output.split(separator: "\n").map(String.init)
        #expect(expected.count == cases.count)
        for (index, (password, salt)) in cases.enumerated() where index < expected.count {
            let hash = try Bcrypt.hash(password: SecretBytes(copying: password), salt: salt, cost: 4)
            #expect(try string(hash) == expected[index], "password length \(password.count)")
        }
    }

    // MARK: helpers

    static let packageRoot = BuiltExecutable.packageRoot

    /// `$RAMPART_PYTHON`, else the project's `.venv` (scripts/deps/srp.pip), else none.
    static let python: String? = ProjectPython.executable

    static func run(_ python: String, script: String, input: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [packageRoot.appendingPathComponent(script).path]
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let out = stdout.fileHandleForReading.readDataToEndOfFile()
        let err = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PythonFailure(description: "\(script) failed: \(String(decoding: err, as: UTF8.self))")
        }
        return String(decoding: out, as: UTF8.self)
    }

    struct PythonFailure: Error, CustomStringConvertible { let description: String }
}

func bytes(hex: String) -> [UInt8] {
    var result: [UInt8] = []
    var iterator = hex.utf8.makeIterator()
    while let high = iterator.next(), let low = iterator.next() {
        result.append(UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)!)
    }
    return result
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

func string(_ secret: SecretBytes) throws -> String {
    try secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
}
