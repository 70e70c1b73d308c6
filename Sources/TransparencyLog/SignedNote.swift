import Crypto
import Foundation

/// A tree head in the C2SP `tlog-checkpoint` form: the log's origin line, the tree size in
/// decimal, the root hash in base64, then optional extension lines, each ending in a newline.
/// It is the text of a ``SignedNote``, so standard tools (Go's `golang.org/x/mod/sumdb/note`,
/// witnesses) read it.
///
/// Trust-model row **the user's private and public keys (critical when modified)**: the
/// checkpoint is what the log's key and the witnesses sign; a client keeps the last one it
/// verified and accepts a new one only with a consistency proof from it.
public struct Checkpoint: Sendable, Equatable {
    /// The log's identity, e.g. `rampart.test/keys` (no newline).
    public var origin: String
    /// Leaves in the tree.
    public var size: UInt64
    /// The tree's root.
    public var rootHash: LogHash
    /// Extension lines (without their newlines).
    public var extensions: [String]

    public init(origin: String, size: UInt64, rootHash: LogHash, extensions: [String] = []) {
        self.origin = origin
        self.size = size
        self.rootHash = rootHash
        self.extensions = extensions
    }

    /// The checkpoint's text (the note text that is signed).
    public var text: String {
        ([origin, String(size), rootHash.base64] + extensions).map { $0 + "\n" }.joined()
    }

    /// Parses a checkpoint's text.
    /// - Throws: ``TransparencyLogError/malformedCheckpoint(_:)``.
    public init(text: String) throws {
        guard text.hasSuffix("\n") else { throw TransparencyLogError.malformedCheckpoint("it does not end with a newline") }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count >= 3 else { throw TransparencyLogError.malformedCheckpoint("it has \(lines.count) lines, not at least 3") }
        guard !lines[0].isEmpty else { throw TransparencyLogError.malformedCheckpoint("the origin line is empty") }
        let digits = lines[1]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), digits == "0" || !digits.hasPrefix("0"),
              let size = UInt64(digits) else {
            throw TransparencyLogError.malformedCheckpoint("the size line is not a decimal number")
        }
        guard let decoded = Data(base64Encoded: lines[2]), decoded.count == 32, decoded.base64EncodedString() == lines[2] else {
            throw TransparencyLogError.malformedCheckpoint("the root line is not a base64 SHA-256 hash")
        }
        guard !lines[3...].contains(where: \.isEmpty) else { throw TransparencyLogError.malformedCheckpoint("an empty extension line") }
        self.init(origin: lines[0], size: size, rootHash: try LogHash(bytes: Array(decoded)), extensions: Array(lines[3...]))
    }
}

/// An Ed25519 key that signs notes (C2SP `signed-note`, signature type 0x01) or cosigns
/// checkpoints (C2SP `tlog-cosignature`, type 0x04), with the key name it signs as.
///
/// Trust-model row **secure hardware (high)** is where such a key belongs on a real server; here
/// it is a file of the server's or the witness's data folder (0600), like the server's TLS key.
public struct NoteSigner: Sendable {
    /// The key name (no white space, no `+`).
    public let name: String
    let key: Curve25519.Signing.PrivateKey

    /// A signer with `key`. - Throws: ``TransparencyLogError/badKey(_:)`` for an unusable name.
    public init(name: String, key: Curve25519.Signing.PrivateKey) throws {
        try NoteVerifier.checkName(name)
        self.name = name
        self.key = key
    }

    /// The verifier of ordinary signatures (type 0x01), to pin.
    public var verifier: NoteVerifier { NoteVerifier(name: name, type: .ed25519, publicKey: key.publicKey) }

    /// The verifier of cosignatures (type 0x04), to pin as a witness.
    public var cosignatureVerifier: NoteVerifier { NoteVerifier(name: name, type: .cosignatureV1, publicKey: key.publicKey) }

    /// Signs `text` (which must end in a newline) as a note: text, a blank line, one signature line.
    public func sign(_ text: String) throws -> SignedNote {
        guard text.hasSuffix("\n") else { throw TransparencyLogError.malformedNote("a note's text ends with a newline") }
        let signature = try key.signature(for: Data(text.utf8))
        return SignedNote(text: text, signatures: [.init(name: name, keyHash: verifier.keyHash, bytes: Array(signature))])
    }

    /// Cosigns a checkpoint at `time` (seconds since 1970): the C2SP `cosignature/v1` message is
    /// `cosignature/v1\ntime <time>\n` followed by the checkpoint's text; the signature line
    /// carries the time (8 bytes, big-endian) before the Ed25519 signature.
    public func cosign(_ checkpoint: Checkpoint, time: UInt64) throws -> SignedNote.Signature {
        let signature = try key.signature(for: Data(NoteVerifier.cosignedMessage(checkpoint.text, time: time).utf8))
        return .init(name: name, keyHash: cosignatureVerifier.keyHash, bytes: withUnsafeBytes(of: time.bigEndian, Array.init) + Array(signature))
    }
}

/// A public key that checks note signatures, in the form the note tools exchange:
/// `<name>+<key hash, 8 hex>+<base64(type ‖ public key)>`.
public struct NoteVerifier: Sendable, Equatable {
    /// The signature types this module knows.
    public enum KeyType: UInt8, Sendable {
        /// Ed25519 over the note text (`signed-note`).
        case ed25519 = 0x01
        /// Ed25519 over a `cosignature/v1` message (`tlog-cosignature`).
        case cosignatureV1 = 0x04
    }

    public let name: String
    public let type: KeyType
    public let publicKey: Curve25519.Signing.PublicKey

    public init(name: String, type: KeyType, publicKey: Curve25519.Signing.PublicKey) {
        self.name = name
        self.type = type
        self.publicKey = publicKey
    }

    /// Parses `<name>+<hash>+<base64>`, checking the hash against the key.
    /// - Throws: ``TransparencyLogError/badKey(_:)``.
    public init(keyString: String) throws {
        // The key part is base64, which may itself contain '+': split at the first two only.
        let parts = keyString.split(separator: "+", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw TransparencyLogError.badKey("a verifier key is name+hash+key") }
        let name = String(parts[0])
        try Self.checkName(name)
        guard let encoded = Data(base64Encoded: String(parts[2])), encoded.count == 33,
              let type = KeyType(rawValue: encoded[encoded.startIndex]),
              let key = try? Curve25519.Signing.PublicKey(rawRepresentation: encoded.dropFirst()) else {
            throw TransparencyLogError.badKey("the key part is not an Ed25519 key of a known type")
        }
        self.init(name: name, type: type, publicKey: key)
        guard parts[1].count == 8, UInt32(parts[1], radix: 16) == keyHash else {
            throw TransparencyLogError.badKey("the key hash does not match the key")
        }
    }

    public static func == (lhs: NoteVerifier, rhs: NoteVerifier) -> Bool {
        lhs.name == rhs.name && lhs.type == rhs.type && lhs.publicKey.rawRepresentation == rhs.publicKey.rawRepresentation
    }

    /// The verifier key string.
    public var keyString: String {
        "\(name)+\(String(format: "%08x", keyHash))+\(Data([type.rawValue] + publicKey.rawRepresentation).base64EncodedString())"
    }

    /// The first four bytes of SHA-256(name ‖ "\n" ‖ type ‖ public key), big-endian.
    public var keyHash: UInt32 {
        var hasher = SHA256()
        hasher.update(data: Array(name.utf8) + [0x0A, type.rawValue])
        hasher.update(data: publicKey.rawRepresentation)
        return Array(hasher.finalize()).prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Whether `signature` is this key's over `text` (for a cosignature key: over the
    /// `cosignature/v1` message of the checkpoint `text`); a cosignature's time is returned in
    /// `time`.
    public func verifies(_ signature: SignedNote.Signature, of text: String) -> (valid: Bool, time: UInt64?) {
        guard signature.name == name, signature.keyHash == keyHash else { return (false, nil) }
        switch type {
        case .ed25519:
            return (signature.bytes.count == 64 && publicKey.isValidSignature(Data(signature.bytes), for: Data(text.utf8)), nil)
        case .cosignatureV1:
            guard signature.bytes.count == 72 else { return (false, nil) }
            let time = signature.bytes.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let message = Self.cosignedMessage(text, time: time)
            return (publicKey.isValidSignature(Data(signature.bytes.dropFirst(8)), for: Data(message.utf8)), time)
        }
    }

    static func cosignedMessage(_ checkpointText: String, time: UInt64) -> String {
        "cosignature/v1\ntime \(time)\n" + checkpointText
    }

    static func checkName(_ name: String) throws {
        guard !name.isEmpty, !name.contains(where: { $0.isWhitespace || $0 == "+" }) else {
            throw TransparencyLogError.badKey("a key name is not empty and has no white space or '+'")
        }
    }
}

/// A note in the C2SP `signed-note` form: its text (ending in a newline), a blank line, then one
/// line per signature, `— <name> <base64(key hash ‖ signature)>`.
public struct SignedNote: Sendable, Equatable {
    /// One signature line.
    public struct Signature: Sendable, Equatable {
        public var name: String
        public var keyHash: UInt32
        public var bytes: [UInt8]

        public init(name: String, keyHash: UInt32, bytes: [UInt8]) {
            self.name = name
            self.keyHash = keyHash
            self.bytes = bytes
        }

        var line: String {
            let hash = [UInt8(keyHash >> 24), UInt8(keyHash >> 16 & 0xFF), UInt8(keyHash >> 8 & 0xFF), UInt8(keyHash & 0xFF)]
            return "\u{2014} \(name) \(Data(hash + bytes).base64EncodedString())\n"
        }
    }

    public var text: String
    public var signatures: [Signature]

    public init(text: String, signatures: [Signature]) {
        self.text = text
        self.signatures = signatures
    }

    /// The note as it is sent.
    public var serialized: String { text + "\n" + signatures.map(\.line).joined() }

    /// Parses a note (nothing is verified yet: see ``verified(by:)``).
    /// - Throws: ``TransparencyLogError/malformedNote(_:)``.
    public init(serialized: String) throws {
        guard !serialized.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\n" }) else {
            throw TransparencyLogError.malformedNote("a control character")
        }
        guard let split = serialized.range(of: "\n\n", options: .backwards) else {
            throw TransparencyLogError.malformedNote("no blank line before the signatures")
        }
        text = String(serialized[..<split.lowerBound]) + "\n"
        let block = serialized[split.upperBound...]
        guard block.hasSuffix("\n"), !block.isEmpty else { throw TransparencyLogError.malformedNote("no signature line") }
        signatures = try block.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard line.hasPrefix("\u{2014} ") else { throw TransparencyLogError.malformedNote("a signature line starts with '— '") }
            let fields = line.dropFirst(2).split(separator: " ", omittingEmptySubsequences: false)
            guard fields.count == 2, let raw = Data(base64Encoded: String(fields[1])), raw.count > 4 else {
                throw TransparencyLogError.malformedNote("a signature line is '— name base64'")
            }
            let bytes = Array(raw)
            return Signature(name: String(fields[0]), keyHash: bytes.prefix(4).reduce(0) { $0 << 8 | UInt32($1) },
                             bytes: Array(bytes.dropFirst(4)))
        }
    }

    /// The note's text when at least one of `verifiers` signed it; each verifier's valid
    /// signature counted once.
    /// - Throws: ``TransparencyLogError/unverifiedNote(_:)``.
    public func verified(by verifiers: [NoteVerifier]) throws -> (text: String, signers: [String]) {
        var signers: [String] = []
        for verifier in verifiers where signatures.contains(where: { verifier.verifies($0, of: text).valid }) {
            signers.append(verifier.name)
        }
        guard !signers.isEmpty else {
            throw TransparencyLogError.unverifiedNote("none of \(verifiers.map(\.name)) signed it, or the text was changed")
        }
        return (text, signers)
    }
}
