import CRNP
import Foundation
import RampartCore

/// The result of checking the signatures on a message.
public enum PGPSignatureStatus: Sendable, Equatable, Codable {
    /// A good signature by one of the keys we were given (the signer's *primary* fingerprint).
    case verified(PGPFingerprint)
    /// No signature at all.
    case none
    /// A signature that does not verify (modified data or signature, expired signature, or a key
    /// that was expired or revoked when it signed). The fingerprint is the signer's, if known.
    case bad(PGPFingerprint?)
    /// Signed by a key we were not given (its key id, from the signature).
    case unknownKey(PGPKeyID)
}

/// A decrypted (or signed-only) message.
public struct PGPDecrypted: Sendable {
    /// The literal data. Released only after the whole message was processed and its integrity
    /// check passed.
    public var data: Data
    /// The signature check's result.
    public var signature: PGPSignatureStatus
    /// The literal data packet's file name, if it has one.
    public var fileName: String?

    /// A decrypted message's parts (for callers that build one, e.g. from PGP/MIME).
    public init(data: Data, signature: PGPSignatureStatus, fileName: String?) {
        self.data = data
        self.signature = signature
        self.fileName = fileName
    }
}

/// Limits on what reading a message may produce.
///
/// Trust-model row: **inbox (low)** — a small hostile message must not make the client allocate
/// without bound (a compressed "bomb"): output past ``maxOutputBytes`` fails the operation with
/// ``OpenPGPError/limitExceeded(_:)`` and nothing is released.
public struct PGPLimits: Sendable {
    /// The most bytes of literal data a message may produce.
    public var maxOutputBytes: Int

    /// A limit of `maxOutputBytes` (at least 1).
    public init(maxOutputBytes: Int) {
        self.maxOutputBytes = max(1, maxOutputBytes)
    }

    /// 256 MiB.
    public static let `default` = PGPLimits(maxOutputBytes: 256 << 20)
}

/// OpenPGP messages and signatures (RFC 4880), through RNP.
///
/// Every operation creates its own in-memory RNP context, imports only the keys it is given,
/// and destroys the context at the end: no keyring file is ever read or written.
///
/// What is written: SEIPD v1 (tag 18, with MDC) with AES-256, no AEAD packets (so gpg 2.2 reads it),
/// no compression, one-pass signatures with SHA-256. What is read: anything RNP reads that has
/// integrity protection — SEIPD v1 (from gpg 2.2, Sequoia, GopenPGP), AEAD (OCB/EAX), compressed
/// (ZIP, ZLIB, BZip2) data, RSA/DSA/ElGamal/ECDSA/EdDSA/ECDH keys. Refused: messages without
/// integrity protection (plain SED, tag 9), output past ``PGPLimits``.
///
/// Trust-model rows: **inbox (low)** (incoming mail is decrypted and its signature checked
/// against the sender's pinned key; a modified or truncated message is refused whole) and
/// **outbox (moderate)** (outgoing mail is encrypted to every recipient and signed inside the
/// encryption).
public enum OpenPGP {
    /// Encrypts `data` to every recipient's encryption key: SEIPD v1 (MDC), AES-256, no AEAD, no
    /// compression; signed inside the encryption by `signer` (one-pass signature, SHA-256) if given.
    /// - Parameters:
    ///   - armor: `true` writes `-----BEGIN PGP MESSAGE-----`.
    ///   - fileName: the literal data packet's file name.
    ///   - data: the cleartext.
    ///   - recipients: the keys to encrypt to (each needs a valid encryption key).
    ///   - signer: the key that signs inside the encryption; nil for an unsigned message.
    /// - Throws: ``OpenPGPError/unsupported(_:)`` with no recipients or a recipient that cannot
    ///   encrypt (no valid encryption key, expired, revoked).
    public static func encrypt(_ data: Data, to recipients: [PGPPublicKey], signedBy signer: PGPPrivateKey?,
                               armor: Bool = false, fileName: String? = nil) throws -> Data {
        guard !recipients.isEmpty else { throw OpenPGPError.unsupported("a message needs at least one recipient") }
        return try RNPContext.run { context in
            for recipient in recipients {
                try context.importKeys(recipient.binary, secret: false)
            }
            let signingKey = try signer.map { try $0.load(into: context) }
            if let signer, signingKey?.defaultKey(for: "sign") == nil {
                throw OpenPGPError.unsupported("the key \(signer.fingerprint) has no valid signing key")
            }
            let recipientKeys = try recipients.map { recipient -> RNPKey in
                let key = try context.locate(fingerprint: recipient.fingerprint.hex)
                guard key.defaultKey(for: "encrypt") != nil else {
                    throw OpenPGPError.unsupported("the key \(recipient.fingerprint) has no valid encryption key")
                }
                return key
            }
            let output = try RNPOutput(limit: 0)
            return try withExtendedLifetime((output, recipientKeys, signingKey)) {
                try RNPInput.withMemory(data) { input in
                    var created: OpaquePointer?
                    try rnpCheck(rnp_op_encrypt_create(&created, context.ffi, input, output.handle), "starting encryption")
                    guard let op = created else { throw OpenPGPError.library("RNP returned no operation") }
                    defer { rnp_op_encrypt_destroy(op) }
                    for key in recipientKeys {
                        try rnpCheck(rnp_op_encrypt_add_recipient(op, key.handle), "adding a recipient")
                    }
                    if let signingKey {
                        try rnpCheck(rnp_op_encrypt_add_signature(op, signingKey.handle, nil), "adding the signature")
                        try rnpCheck(rnp_op_encrypt_set_hash(op, "SHA256"), "choosing the hash")
                        try rnpCheck(rnp_op_encrypt_set_creation_time(op, UInt32(truncatingIfNeeded: RNPClock.stamp())),
                                     "setting the signature time")
                    }
                    try rnpCheck(rnp_op_encrypt_set_cipher(op, "AES256"), "choosing the cipher")
                    try rnpCheck(rnp_op_encrypt_set_aead(op, "None"), "turning AEAD off")
                    try rnpCheck(rnp_op_encrypt_set_compression(op, "Uncompressed", 0), "turning compression off")
                    try rnpCheck(rnp_op_encrypt_set_armor(op, armor), "choosing armour")
                    if let fileName {
                        try rnpCheck(rnp_op_encrypt_set_file_name(op, fileName), "setting the file name")
                    }
                    try rnpCheck(rnp_op_encrypt_execute(op), "encrypting")
                    return output.data()
                }
            }
        }
    }

    /// Decrypts `message` (binary or armored) with any of `keys` and checks its signatures against
    /// `verifiers`.
    ///
    /// Nothing is released unless the whole message was processed and its integrity check (MDC or
    /// AEAD) passed: the output goes to a bounded RNP memory buffer that is zeroized on failure.
    /// A message without integrity protection is refused. A signature by a key that is not in
    /// `verifiers` (even one of `keys`) is ``PGPSignatureStatus/unknownKey(_:)``.
    /// - Throws: ``OpenPGPError/noDecryptionKey``, ``OpenPGPError/integrityCheckFailed``,
    ///   ``OpenPGPError/malformed(_:)`` (also for a message that is not encrypted),
    ///   ``OpenPGPError/limitExceeded(_:)``.
    public static func decrypt(_ message: Data, with keys: [PGPPrivateKey], verifyingWith verifiers: [PGPPublicKey],
                               limits: PGPLimits = .default) throws -> PGPDecrypted {
        try RNPContext.run { context in
            for verifier in verifiers {
                try context.importKeys(verifier.binary, secret: false)
            }
            for key in keys {
                _ = try key.load(into: context)
            }
            return try verify(message, in: context, encrypted: true, verifiers: verifiers, limits: limits)
        }
    }

    /// Signs `data` without encrypting it: a one-pass signed message (SHA-256, no compression),
    /// binary or armored (`-----BEGIN PGP MESSAGE-----`).
    public static func sign(_ data: Data, with key: PGPPrivateKey, armor: Bool = false) throws -> Data {
        try signOperation(data, with: key, kind: .embedded, armor: armor)
    }

    /// A detached signature over `data` (binary, or armored `-----BEGIN PGP SIGNATURE-----`), for
    /// multipart/signed and drive metadata.
    /// - Parameters:
    ///   - textMode: a canonical-text signature (type 0x01), for MIME parts: line ends are
    ///     hashed as CRLF whatever `data` uses (RFC 4880 §5.2.1).
    ///   - data: the signed bytes.
    ///   - key: the signing key.
    ///   - armor: `true` writes `-----BEGIN PGP SIGNATURE-----`.
    ///
    ///   The signature is over `data` with every line end turned into CRLF. RNP makes type 0x01
    ///   signatures only in the cleartext framework, which also drops white space at line ends, so
    ///   text whose lines carry no trailing white space (every RFC 3156 MIME part) gets a type
    ///   0x01 signature made that way; other text gets a binary (0x00) signature over the
    ///   CRLF-canonical bytes. Both verify for a PGP/MIME reader, which hashes the part's CRLF form.
    public static func detachedSignature(for data: Data, with key: PGPPrivateKey, armor: Bool = false,
                                         textMode: Bool = false) throws -> Data {
        guard textMode else { return try signOperation(data, with: key, kind: .detached, armor: armor) }
        let canonical = canonicalText(data)
        if hasTrailingWhitespace(canonical) {
            return try signOperation(canonical, with: key, kind: .detached, armor: armor)
        }
        let cleartext = try signOperation(canonical, with: key, kind: .cleartext, armor: true)
        let marker = Data("-----BEGIN PGP SIGNATURE-----".utf8)
        guard let start = cleartext.range(of: marker)?.lowerBound else {
            throw OpenPGPError.library("RNP wrote no signature block")
        }
        let signature = try dearmor(cleartext[start...])
        return armor ? try self.armor(signature, as: .signature) : signature
    }

    /// Whether a line of CRLF text ends in a space or a tab.
    static func hasTrailingWhitespace(_ canonical: Data) -> Bool {
        var previous: UInt8 = 0
        for byte in canonical {
            if byte == 0x0D, previous == 0x20 || previous == 0x09 { return true }
            previous = byte
        }
        return previous == 0x20 || previous == 0x09
    }

    /// Verifies a detached signature (binary or armored) over `data` against `verifiers`. For a
    /// text-mode (0x01) signature RNP hashes `data` with CRLF line ends, so the LF and the CRLF
    /// form of a text both verify.
    /// - Returns: ``PGPSignatureStatus/verified(_:)`` only for a good signature by one of
    ///   `verifiers`; `.bad` for modified data or signature; `.unknownKey` for another signer.
    /// - Throws: ``OpenPGPError/malformed(_:)`` if `signature` is not an OpenPGP signature.
    public static func verifyDetached(_ data: Data, signature: Data, against verifiers: [PGPPublicKey]) throws
        -> PGPSignatureStatus {
        try RNPContext.run { context in
            for verifier in verifiers {
                try context.importKeys(verifier.binary, secret: false)
            }
            return try RNPInput.withMemory(data) { dataInput in
                try RNPInput.withMemory(signature) { signatureInput in
                    var created: OpaquePointer?
                    try rnpCheck(rnp_op_verify_detached_create(&created, context.ffi, dataInput, signatureInput),
                                 "starting verification")
                    guard let op = created else { throw OpenPGPError.library("RNP returned no operation") }
                    defer { rnp_op_verify_destroy(op) }
                    let result = rnp_op_verify_execute(op)
                    let statuses = signatureStatuses(op, verifiers: verifiers)
                    if statuses.isEmpty {
                        throw OpenPGPError.malformed("no OpenPGP signature found (\(RNPResult.message(result)))")
                    }
                    if result != RNPResult.success, !isSignatureResult(result) {
                        throw OpenPGPError.malformed(RNPResult.message(result))
                    }
                    return combine(statuses)
                }
            }
        }
    }

    /// Signs `text` in the cleartext signature framework (`-----BEGIN PGP SIGNED MESSAGE-----`,
    /// SHA-256), e.g. for the SRP modulus.
    public static func cleartextSign(_ text: String, with key: PGPPrivateKey) throws -> String {
        String(decoding: try signOperation(Data(text.utf8), with: key, kind: .cleartext, armor: true), as: UTF8.self)
    }

    /// Verifies a cleartext-signed message against `verifiers`.
    /// - Returns: the signed text (dash-unescaped, as RNP outputs it: only the text between the
    ///   header and the signature, never text around the block) and the signature status.
    /// - Throws: ``OpenPGPError/malformed(_:)`` unless `message` is a cleartext-signed message.
    public static func verifyCleartext(_ message: String, against verifiers: [PGPPublicKey]) throws
        -> (text: String, signature: PGPSignatureStatus) {
        let trimmed = message.drop { $0.isWhitespace || $0.isNewline }
        guard trimmed.hasPrefix("-----BEGIN PGP SIGNED MESSAGE-----") else {
            throw OpenPGPError.malformed("not a cleartext-signed message (no BEGIN PGP SIGNED MESSAGE line)")
        }
        let result = try RNPContext.run { context in
            for verifier in verifiers {
                try context.importKeys(verifier.binary, secret: false)
            }
            return try verify(Data(message.utf8), in: context, encrypted: false, verifiers: verifiers,
                              limits: PGPLimits(maxOutputBytes: max(message.utf8.count, 1)), cleartext: true)
        }
        if result.signature == .none { throw OpenPGPError.malformed("the cleartext-signed message has no signature") }
        return (String(decoding: result.data, as: UTF8.self), result.signature)
    }

    /// Verifies a signed-only (not encrypted) message against `verifiers` and returns its literal
    /// data and signature status. An encrypted message is refused (use ``decrypt(_:with:verifyingWith:limits:)``).
    /// - Throws: ``OpenPGPError/malformed(_:)``, ``OpenPGPError/limitExceeded(_:)``.
    public static func verifySigned(_ message: Data, against verifiers: [PGPPublicKey],
                                    limits: PGPLimits = .default) throws -> PGPDecrypted {
        try RNPContext.run { context in
            for verifier in verifiers {
                try context.importKeys(verifier.binary, secret: false)
            }
            return try verify(message, in: context, encrypted: false, verifiers: verifiers, limits: limits)
        }
    }

    /// Whether `data` is ASCII-armoured OpenPGP (starts, after white space, with `-----BEGIN PGP`).
    public static func isArmored(_ data: Data) -> Bool {
        let marker = Array("-----BEGIN PGP".utf8)
        guard let start = data.firstIndex(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return false }
        return data[start...].starts(with: marker)
    }

    /// Removes ASCII armour (any PGP armour type) and returns the binary packets; binary input is
    /// returned as it is.
    /// - Throws: ``OpenPGPError/malformed(_:)`` for broken armour (bad base64, bad checksum).
    public static func dearmor(_ data: Data) throws -> Data {
        guard isArmored(data) else { return data }
        let output = try RNPOutput(limit: max(data.count, 1))
        try RNPInput.withMemory(data) { input in
            let result = rnp_dearmor(input, output.handle)
            guard result == RNPResult.success else { throw OpenPGPError.malformed("bad armour (\(RNPResult.message(result)))") }
        }
        return output.data()
    }

    /// Adds ASCII armour of `kind` to binary packets.
    public static func armor(_ data: Data, as kind: PGPArmorKind) throws -> Data {
        let output = try RNPOutput(limit: 0)
        try RNPInput.withMemory(data) { input in
            try rnpCheck(rnp_enarmor(input, output.handle, kind.rawValue), "adding armour")
        }
        return output.data()
    }

    // MARK: - Internals

    enum SignKind { case embedded, detached, cleartext }

    static func signOperation(_ data: Data, with key: PGPPrivateKey, kind: SignKind, armor: Bool) throws -> Data {
        try RNPContext.run { context in
            let signingKey = try key.load(into: context)
            guard signingKey.defaultKey(for: "sign") != nil else {
                throw OpenPGPError.unsupported("the key \(key.fingerprint) has no valid signing key")
            }
            let output = try RNPOutput(limit: 0)
            let input = data
            return try withExtendedLifetime((signingKey, output)) {
                try RNPInput.withMemory(input) { input in
                    var created: OpaquePointer?
                    switch kind {
                    case .embedded:
                        try rnpCheck(rnp_op_sign_create(&created, context.ffi, input, output.handle), "starting to sign")
                    case .detached:
                        try rnpCheck(rnp_op_sign_detached_create(&created, context.ffi, input, output.handle), "starting to sign")
                    case .cleartext:
                        try rnpCheck(rnp_op_sign_cleartext_create(&created, context.ffi, input, output.handle), "starting to sign")
                    }
                    guard let op = created else { throw OpenPGPError.library("RNP returned no operation") }
                    defer { rnp_op_sign_destroy(op) }
                    try rnpCheck(rnp_op_sign_add_signature(op, signingKey.handle, nil), "adding the signature")
                    try rnpCheck(rnp_op_sign_set_hash(op, "SHA256"), "choosing the hash")
                    try rnpCheck(rnp_op_sign_set_creation_time(op, UInt32(truncatingIfNeeded: RNPClock.stamp())),
                                 "setting the signature time")
                    if kind == .embedded {
                        try rnpCheck(rnp_op_sign_set_compression(op, "Uncompressed", 0), "turning compression off")
                    }
                    try rnpCheck(rnp_op_sign_set_armor(op, armor || kind == .cleartext), "choosing armour")
                    try rnpCheck(rnp_op_sign_execute(op), "signing")
                    return output.data()
                }
            }
        }
    }

    /// Line ends as CRLF (a lone LF or a lone CR becomes CRLF).
    static func canonicalText(_ data: Data) -> Data {
        var out = Data()
        out.reserveCapacity(data.count + data.count / 32)
        var previous: UInt8 = 0
        for byte in data {
            if byte == 0x0A, previous != 0x0D { out.append(0x0D) }
            if previous == 0x0D, byte != 0x0A { out.append(0x0A) }
            out.append(byte)
            previous = byte
        }
        if previous == 0x0D { out.append(0x0A) }
        return out
    }

    /// Runs an RNP verify operation over `message`; releases the output only on full success.
    /// - Parameter cleartext: `message` is a cleartext-signed message (no armour to remove, no
    ///   packet framing to check first).
    static func verify(_ message: Data, in context: RNPContext, encrypted: Bool, verifiers: [PGPPublicKey],
                       limits: PGPLimits, cleartext: Bool = false) throws -> PGPDecrypted {
        guard !message.isEmpty else { throw OpenPGPError.malformed("empty message") }
        var message = message
        if !cleartext {
            message = try dearmor(message)
            try PacketFraming.checkMessage(PacketFraming.check(message), encrypted: encrypted)
        }
        let output = try RNPOutput(limit: limits.maxOutputBytes)
        return try withExtendedLifetime(output) {
            try RNPInput.withMemory(message) { input in
                var created: OpaquePointer?
                try rnpCheck(rnp_op_verify_create(&created, context.ffi, input, output.handle), "starting to read the message")
                guard let op = created else { throw OpenPGPError.library("RNP returned no operation") }
                defer { rnp_op_verify_destroy(op) }
                if encrypted {
                    try rnpCheck(rnp_op_verify_set_flags(op, UInt32(RNP_VERIFY_IGNORE_SIGS_ON_DECRYPT)), "setting flags")
                }
                let result = rnp_op_verify_execute(op)
                let protection = protectionInfo(op)
                if result != RNPResult.success {
                    let signatureOnly = !encrypted && isSignatureResult(result) && protection.mode == "none"
                    if !signatureOnly {
                        output.clear()
                        throw mapReadFailure(result, op: op, output: output, encrypted: encrypted, protection: protection)
                    }
                }
                if encrypted {
                    guard protection.mode != "none" else {
                        output.clear()
                        throw OpenPGPError.malformed("the message is not encrypted")
                    }
                    guard protection.valid, protection.mode != "cfb" else {
                        output.clear()
                        throw OpenPGPError.integrityCheckFailed
                    }
                } else if protection.mode != "none" {
                    output.clear()
                    throw OpenPGPError.malformed("the message is encrypted; decrypt it instead")
                }
                let statuses = signatureStatuses(op, verifiers: verifiers)
                var fileName: UnsafeMutablePointer<CChar>?
                var mtime: UInt32 = 0
                let name = rnp_op_verify_get_file_info(op, &fileName, &mtime) == RNPResult.success ? rnpTakeString(fileName) : nil
                return PGPDecrypted(data: output.takeData(), signature: combine(statuses),
                                    fileName: name.flatMap { $0.isEmpty ? nil : $0 })
            }
        }
    }

    static func protectionInfo(_ op: OpaquePointer) -> (mode: String, valid: Bool) {
        var mode: UnsafeMutablePointer<CChar>?
        var valid = false
        guard rnp_op_verify_get_protection_info(op, &mode, nil, &valid) == RNPResult.success else { return ("none", false) }
        return (rnpTakeString(mode) ?? "none", valid)
    }

    /// Whether a failed verify reports only on the signatures (the data itself was read whole).
    static func isSignatureResult(_ result: rnp_result_t) -> Bool {
        [RNPResult.signatureInvalid, RNPResult.keyNotFound, RNPResult.signatureExpired,
         RNPResult.noSignaturesFound, RNPResult.verificationFailed].contains(result)
    }

    static func mapReadFailure(_ result: rnp_result_t, op: OpaquePointer, output: RNPOutput, encrypted: Bool,
                               protection: (mode: String, valid: Bool)) -> OpenPGPError {
        let message = RNPResult.message(result)
        if result == RNPResult.outOfMemory || result == RNPResult.write || result == RNPResult.shortBuffer {
            return .limitExceeded("the message produces more than \(output.limit) bytes")
        }
        if encrypted {
            if result == RNPResult.noSuitableKey || result == RNPResult.keyNotFound || result == RNPResult.decryptFailed {
                return .noDecryptionKey
            }
            if result == RNPResult.badPassword {
                // Our keys are always loaded unprotected, so RNP asked for a message password
                // (a password-encrypted message): there is no key here for it.
                return .noDecryptionKey
            }
            if protection.mode == "none" {
                return .malformed(message)
            }
            if result == RNPResult.badState || result == RNPResult.macInvalid {
                return .integrityCheckFailed
            }
            if protection.mode != "none" {
                // The session key was recovered and decryption started: any later failure (a
                // modified packet inside, a truncated stream) is a failed integrity check.
                return .integrityCheckFailed
            }
        }
        return .malformed(message)
    }

    /// The status of each signature RNP saw.
    static func signatureStatuses(_ op: OpaquePointer, verifiers: [PGPPublicKey]) -> [PGPSignatureStatus] {
        var count = 0
        guard rnp_op_verify_get_signature_count(op, &count) == RNPResult.success else { return [] }
        let accepted = Set(verifiers.map(\.fingerprint))
        return (0..<count).map { index -> PGPSignatureStatus in
            var signature: OpaquePointer?
            guard rnp_op_verify_get_signature_at(op, index, &signature) == RNPResult.success, let signature else {
                return .bad(nil)
            }
            let status = rnp_op_verify_signature_get_status(signature)
            var keyHandle: OpaquePointer?
            let signer: PGPFingerprint?
            if rnp_op_verify_signature_get_key(signature, &keyHandle) == RNPResult.success, let keyHandle {
                signer = RNPKey(keyHandle).primaryFingerprint.flatMap(PGPFingerprint.init(hex:))
            } else {
                signer = nil
            }
            guard let signer, accepted.contains(signer) else {
                if let keyID = issuerKeyID(signature) { return .unknownKey(keyID) }
                return .bad(nil)
            }
            return status == RNPResult.success ? .verified(signer) : .bad(signer)
        }
    }

    /// The signature's issuer key id (from the issuer subpacket, else the issuer fingerprint).
    static func issuerKeyID(_ signature: OpaquePointer) -> PGPKeyID? {
        var handle: OpaquePointer?
        guard rnp_op_verify_signature_get_handle(signature, &handle) == RNPResult.success, let handle else { return nil }
        defer { rnp_signature_handle_destroy(handle) }
        var keyID: UnsafeMutablePointer<CChar>?
        if rnp_signature_get_keyid(handle, &keyID) == RNPResult.success, let text = rnpTakeString(keyID),
           let value = PGPKeyID(hex: text) {
            return value
        }
        var fingerprint: UnsafeMutablePointer<CChar>?
        if rnp_signature_get_key_fprint(handle, &fingerprint) == RNPResult.success, let text = rnpTakeString(fingerprint),
           let value = PGPFingerprint(hex: text) {
            return value.keyID
        }
        return nil
    }

    /// One status for several signatures: any bad one wins, then a verified one, then an unknown key.
    static func combine(_ statuses: [PGPSignatureStatus]) -> PGPSignatureStatus {
        if let bad = statuses.first(where: { if case .bad = $0 { true } else { false } }) { return bad }
        if let good = statuses.first(where: { if case .verified = $0 { true } else { false } }) { return good }
        return statuses.first ?? .none
    }
}

/// The ASCII armour types (the word after `-----BEGIN PGP`).
public enum PGPArmorKind: String, Sendable {
    /// `-----BEGIN PGP MESSAGE-----`
    case message = "message"
    /// `-----BEGIN PGP PUBLIC KEY BLOCK-----`
    case publicKey = "public key"
    /// `-----BEGIN PGP PRIVATE KEY BLOCK-----`
    case secretKey = "secret key"
    /// `-----BEGIN PGP SIGNATURE-----`
    case signature = "signature"
}
