import Crypto
import Foundation
import Keychain
@_spi(TestVectors) @testable import PushCrypto
import RampartCore
import RampartTestSupport
import Testing

/// RFC 8291 Appendix A, with line breaks removed.
enum RFC8291Vector {
    static let plaintext = "When I grow up, I want to be a watermelon"
    static let senderPrivateKey = "yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"
    static let senderPublicKey = "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"
    static let receiverPrivateKey = "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"
    static let receiverPublicKey = "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
    static let salt = "DGv6ra1nlYgDCS1FRnbzlw"
    static let authSecret = "BTBZMqHH6r4Tts7J_aSIgg"
    static let body = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    static func bytes(_ text: String) -> [UInt8] { Base64URL.decode(text)! }
}

extension Array where Element == UInt8 {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
    init?(hex: String) {
        let chars = Array(hex.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let byte = UInt8(String(decoding: chars[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            out.append(byte)
            index += 2
        }
        self = out
    }
}

func secret(_ text: String) -> SecretBytes { SecretBytes(copying: Array(text.utf8)) }

func string(_ secret: SecretBytes) throws -> String { try secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

/// A user's push setup over an in-memory keychain and a manual clock.
struct PushFixture {
    let keychain = InMemoryKeychain()
    let clock = ManualClock()
    let user: UserID
    let keyring: PushKeyring

    init(user: UserID = "user-1", policy: PushKeyring.RetentionPolicy = .default) {
        self.user = user
        self.keyring = PushKeyring(keychain: keychain, clock: clock, userID: user, policy: policy)
    }

    func receiver(_ session: PushSessionID, capacity: Int = 512) -> PushReceiver {
        PushReceiver(keyring: keyring, sessionID: session, ledgerCapacity: capacity)
    }

    func notification(_ subject: String = "Lunch?") -> PushNotification {
        PushNotification(sender: "Alice Example", subject: subject, messageId: "msg-\(subject.count)", userId: user)
    }
}

func session(_ name: String) -> PushSessionID { try! PushSessionID(name) }

/// Expects `body` to throw exactly `expected`.
func expectPushError(_ expected: PushCryptoError, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    do {
        try body()
        Issue.record("expected \(expected), but nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as PushCryptoError {
        #expect(error == expected, sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(expected), got \(error)", sourceLocation: sourceLocation)
    }
}

/// The Python peers (`http-ece`, `pywebpush`) in `$RAMPART_PYTHON` or `<package root>/.venv`.
enum PythonPeer {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let executable: String? = {
        if let path = ProcessInfo.processInfo.environment["RAMPART_PYTHON"], !path.isEmpty { return path }
        let venv = packageRoot.appendingPathComponent(".venv/bin/python3").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : nil
    }()

    /// Whether interop tests run: with a Python, or always under CI (where a missing venv fails).
    static let interopEnabled: Bool = {
        if executable != nil { return true }
        if ProcessInfo.processInfo.environment["CI"] != nil { return true }
        print("PushCryptoTests: no Python venv (set RAMPART_PYTHON or create .venv from scripts/deps/push.pip); skipping interop tests")
        return false
    }()

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let script = #"""
import base64, sys
from cryptography.hazmat.primitives.asymmetric import ec
import http_ece

def b64(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))

cmd = sys.argv[1]
data = sys.stdin.buffer.read()
if cmd == "pywebpush-encrypt":
    from pywebpush import WebPusher
    sub = {"endpoint": "https://push.invalid/rampart", "keys": {"p256dh": sys.argv[2], "auth": sys.argv[3]}}
    body = WebPusher(sub).encode(data, "aes128gcm")["body"]
elif cmd == "ece-encrypt":
    key = ec.generate_private_key(ec.SECP256R1())
    body = http_ece.encrypt(data, private_key=key, dh=b64(sys.argv[2]), auth_secret=b64(sys.argv[3]),
                            version="aes128gcm", rs=int(sys.argv[4]))
elif cmd == "ece-encrypt-fixed":
    key = ec.derive_private_key(int.from_bytes(b64(sys.argv[4]), "big"), ec.SECP256R1())
    body = http_ece.encrypt(data, salt=b64(sys.argv[5]), private_key=key, dh=b64(sys.argv[2]),
                            auth_secret=b64(sys.argv[3]), version="aes128gcm", rs=int(sys.argv[6]))
elif cmd == "ece-decrypt":
    key = ec.derive_private_key(int.from_bytes(b64(sys.argv[2]), "big"), ec.SECP256R1())
    body = http_ece.decrypt(data, private_key=key, auth_secret=b64(sys.argv[3]), version="aes128gcm")
else:
    raise SystemExit("unknown command " + cmd)
sys.stdout.write(body.hex())
"""#

    /// Runs one command of ``script`` and returns the bytes it printed (hex-decoded).
    static func run(_ arguments: [String], input: [UInt8]) async throws -> [UInt8] {
        guard let executable else {
            throw Failure(description: "no Python: set RAMPART_PYTHON or create .venv with scripts/deps/push.pip (required under CI)")
        }
        let result = try await CLITool(path: URL(fileURLWithPath: executable)).run(["-c", script] + arguments, input: Data(input))
        guard result.status == 0 else {
            throw Failure(description: "python \(arguments.first ?? "") failed: \(result.stderr)")
        }
        guard let bytes = [UInt8](hex: result.stdout) else {
            throw Failure(description: "python printed no hex")
        }
        return bytes
    }
}
