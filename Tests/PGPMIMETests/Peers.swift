import Foundation
import OpenPGP
import RampartTestSupport

/// GnuPG in a private home of its own: the mail program on the other side.
final class GnuPG: @unchecked Sendable {
    let home: TemporaryHome
    let tool: CLITool

    /// A result with gpg's `[GNUPG:]` status lines (written to standard error).
    struct Run {
        var result: CLIResult
        var status: [String] {
            result.stderr.split(separator: "\n").filter { $0.hasPrefix("[GNUPG:] ") }.map { String($0.dropFirst(9)) }
        }
        /// The status line starting with `keyword`, split at blanks.
        func line(_ keyword: String) -> [String]? {
            status.first { $0.hasPrefix(keyword + " ") || $0 == keyword }.map { $0.split(separator: " ").map(String.init) }
        }
    }

    init() throws {
        home = try TemporaryHome("gpg", shortPath: true)
        home.stopsGnuPGAgentAtEnd()
        tool = CLITool(path: URL(fileURLWithPath: "/usr/bin/gpg"), environment: ["GNUPGHOME": home.path])
    }

    /// `gpg --batch …` with an empty passphrase allowed and status lines on standard error.
    @discardableResult
    func run(_ arguments: [String], input: Data? = nil) async throws -> Run {
        let result = try await tool.run(["--batch", "--no-tty", "--pinentry-mode", "loopback", "--passphrase", "",
                                   "--trust-model", "always", "--status-fd", "2"] + arguments,
                                  input: input, timeout: .seconds(60))
        return Run(result: result)
    }

    /// Generates an Ed25519 + Curve25519 key for `uid`; returns its fingerprint (40 hex).
    func generateKey(_ uid: String) async throws -> String {
        let run = try await run(["--quick-gen-key", uid, "future-default", "default", "never"])
        guard run.result.status == 0, let created = run.line("KEY_CREATED"), created.count >= 3 else {
            throw PeerFailure("gpg --quick-gen-key failed: \(run.result.stderr)")
        }
        return created[2]
    }

    /// The armoured public key of `fingerprint`.
    func exportPublic(_ fingerprint: String) async throws -> String {
        let run = try await run(["--armor", "--export", fingerprint])
        guard run.result.status == 0, !run.result.output.isEmpty else { throw PeerFailure("gpg --export failed: \(run.result.stderr)") }
        return run.result.stdout
    }

    /// Imports an armoured key.
    func importKey(_ armored: String) async throws {
        let run = try await run(["--import"], input: Data(armored.utf8))
        guard run.result.status == 0 else { throw PeerFailure("gpg --import failed: \(run.result.stderr)") }
    }

    /// Writes `data` into the home and returns its path.
    func file(_ name: String, _ data: [UInt8]) throws -> String {
        let url = home.child(name)
        try Data(data).write(to: url)
        return url.path
    }

    /// Stops the gpg-agent this home started, and removes the home (``TemporaryHome/remove()``).
    func close() { home.remove() }
}

struct PeerFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Python's `email` package (policy.default): the reference reader of mail structure.
enum PythonEmail {
    /// `$RAMPART_PYTHON` when executable, else the project's `.venv`, else `python3` on the PATH.
    static var python: URL { URL(fileURLWithPath: ProjectPython.executable ?? "/usr/bin/python3") }

    /// Reads a message file and prints what Python sees: content type, protocol and micalg
    /// parameters, the parts' types and transfer-decoded payloads (base64), defects, the text
    /// body and the attachments of the message (`get_body`, `iter_attachments`), and for
    /// multipart/signed the first part's bytes as they are on the wire (what a mail client
    /// hashes: from after the first boundary line to the CRLF before the next).
    static let script = #"""
    import sys, json, base64, hashlib, email, email.policy
    raw = open(sys.argv[1], 'rb').read()
    m = email.message_from_bytes(raw, policy=email.policy.default)
    def b64(b): return base64.b64encode(b or b'').decode()
    out = {"type": m.get_content_type(), "protocol": m.get_param("protocol"), "micalg": m.get_param("micalg"),
           "subject": str(m["subject"]) if m["subject"] is not None else None,
           "from": str(m["from"]) if m["from"] is not None else None,
           "defects": [type(d).__name__ for d in m.defects] + [type(d).__name__ for p in m.walk() for d in p.defects]}
    if m.is_multipart():
        out["parts"] = [p.get_content_type() for p in m.iter_parts()]
        out["payloads"] = [b64(p.get_payload(decode=True)) for p in m.iter_parts()]
    body = m.get_body(("plain",))
    out["text"] = body.get_content().replace("\r\n", "\n") if body is not None else None
    def attachments(p):
        for a in p.iter_attachments():
            if a.is_multipart(): yield from attachments(a)
            else: yield a
    out["attachments"] = [{"filename": a.get_filename(), "sha256": hashlib.sha256(a.get_payload(decode=True) or b"").hexdigest()}
                          for a in attachments(m)]
    if m.get_content_type() == "multipart/signed":
        b = m.get_boundary().encode()
        start = raw.index(b"--" + b + b"\r\n") + len(b) + 4
        end = raw.index(b"\r\n--" + b, start)
        out["signed"] = b64(raw[start:end])
    print(json.dumps(out))
    """#

    struct View: Decodable {
        var type: String
        var `protocol`: String?
        var micalg: String?
        var subject: String?
        var from: String?
        var defects: [String]
        var parts: [String]?
        var payloads: [String]?
        var text: String?
        var attachments: [Attachment]
        var signed: String?
        struct Attachment: Decodable { var filename: String?; var sha256: String }

        func payload(_ index: Int) -> [UInt8] { [UInt8](Data(base64Encoded: payloads?[index] ?? "") ?? Data()) }
        var signedBytes: [UInt8] { [UInt8](Data(base64Encoded: signed ?? "") ?? Data()) }
    }

    static func view(_ message: [UInt8], in folder: TemporaryHome) async throws -> View {
        let url = folder.child("python-\(UUID().uuidString).eml")
        try Data(message).write(to: url)
        let result = try await CLITool(path: python).run(["-c", script, url.path], input: nil, timeout: .seconds(60))
        guard result.status == 0 else { throw PeerFailure("python email failed: \(result.stderr)") }
        return try JSONDecoder().decode(View.self, from: result.output)
    }
}
