import Foundation
import OpenPGP
import RampartCore
import RampartTestSupport
import Testing

/// Hostile and broken OpenPGP input, much of it made by the peers: every case ends in a typed
/// ``OpenPGPError`` whose kind is *tampered* (exit 7) or *bad input* (exit 2), within a time
/// limit, and never hands out data. Trust-model row **inbox (low)**: whatever arrives is read
/// without a crash, a hang or unbounded memory, and nothing of a changed message is shown.
@Suite("OpenPGP bad input: garbage, truncation, wrong key, flipped bits, compression bombs")
struct BadInputTests {
    /// How long one refusal may take before the test calls it a hang (generous: the machine is shared).
    static let timeLimit: Duration = .seconds(60)

    /// Runs `body` on a thread of its own and awaits it at most ``timeLimit`` (holding no
    /// cooperative thread); records an issue for a hang, for a returned value (data where there
    /// must be none) or for an error that is not a typed OpenPGPError of kind tampered / bad
    /// input. Returns the error.
    @discardableResult
    static func expectRefused<T: Sendable>(_ what: String, sourceLocation: SourceLocation = #_sourceLocation,
                                           _ body: @escaping @Sendable () throws -> T) async -> OpenPGPError? {
        guard let outcome = await onThreadOfItsOwn(named: "bad-input", timeLimit: timeLimit, body) else {
            Issue.record("\(what): no answer within \(timeLimit) (a hang)", sourceLocation: sourceLocation)
            return nil
        }
        switch outcome {
        case .success(let value):
            Issue.record("\(what): accepted and returned \(value), expected a refusal", sourceLocation: sourceLocation)
            return nil
        case .failure(let error as OpenPGPError):
            #expect([RampartErrorKind.tampered, .badInput].contains(error.kind),
                    "\(what): \(error) is of kind \(error.kind), expected tampered (exit 7) or bad input (exit 2)",
                    sourceLocation: sourceLocation)
            #expect(!error.description.isEmpty, sourceLocation: sourceLocation)
            return error
        case .failure(let error):
            Issue.record("\(what): \(type(of: error)) \(error) is not an OpenPGPError", sourceLocation: sourceLocation)
            return nil
        }
    }

    static let garbage: [(String, String)] = [
        ("empty armour", "-----BEGIN PGP MESSAGE-----\n\n-----END PGP MESSAGE-----\n"),
        ("bad base64", "-----BEGIN PGP MESSAGE-----\n\n!!!! not base64 at all ####\n=abcd\n-----END PGP MESSAGE-----\n"),
        ("bad checksum", "-----BEGIN PGP MESSAGE-----\n\nhQEMA6fNQ2ZpMG7BAQf/ZZZZ\n=AAAA\n-----END PGP MESSAGE-----\n"),
        ("no end line", "-----BEGIN PGP MESSAGE-----\n\nwV4DAAAAAAAAAAASAQdA\n"),
        ("wrong block type", "-----BEGIN PGP SIGNATURE-----\n\nwnUEARYKACcFAmsGxiwJkMv4hrfT3QNaFiEE\n-----END PGP SIGNATURE-----\n"),
        ("plain text", "Hello, this is not OpenPGP at all.\n"),
        ("random bytes", String(decoding: (0..<300).map { UInt8(($0 * 73 + 41) % 256) }, as: UTF8.self)),
    ]

    @Test("armour garbage and non-OpenPGP bytes are refused by decrypt, verify and key import")
    func armourGarbage() async throws {
        let rampart = try PGPPrivateKey.generate(name: "Rampart User", address: "user@rampart.example")
        let verifier = rampart.publicKey
        for (name, text) in Self.garbage {
            let data = Data(text.utf8)
            await Self.expectRefused("decrypt(\(name))") { try OpenPGP.decrypt(data, with: [rampart], verifyingWith: [verifier]).data }
            await Self.expectRefused("verifySigned(\(name))") { try OpenPGP.verifySigned(data, against: [verifier]).data }
            await Self.expectRefused("PGPPublicKey(armored: \(name))") { try PGPPublicKey(armored: text).fingerprint }
            await Self.expectRefused("PGPPublicKey(binary: \(name))") { try PGPPublicKey(binary: data).fingerprint }
        }
        await Self.expectRefused("PGPPublicKey(binary: empty)") { try PGPPublicKey(binary: Data()).fingerprint }
        let garbageKey = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEZZZZ!!!!\n-----END PGP PUBLIC KEY BLOCK-----\n"
        let error = await Self.expectRefused("PGPPublicKey(armored: broken key block)") { try PGPPublicKey(armored: garbageKey).fingerprint }
        if let error, case .malformed = error {} else if let error { Issue.record("expected .malformed, got \(error)") }
        await Self.expectRefused("verifyCleartext(garbage)") {
            try OpenPGP.verifyCleartext("-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\ntext\n-----BEGIN PGP SIGNATURE-----\n\n!!!\n-----END PGP SIGNATURE-----\n",
                                        against: [verifier]).text
        }
    }

    @Test("a peer's message cut short anywhere is refused, never partly released", arguments: PeerKind.allCases)
    func truncatedPackets(kind: PeerKind) async throws {
        let peer = try await kind.make()
        let rampart = try PGPPrivateKey.generate(name: "Rampart User", address: "user@rampart.example")
        let peerKey = try await peer.publicKeyInRampart()
        let armored = try await peer.encryptAndSign(Data(repeating: 0x5A, count: 20_000) + PeerInteropTests.body, to: rampart.publicKey)
        let binary = try Self.dearmor(armored)
        // Sanity: the whole message opens, so each refusal below is the truncation's doing.
        #expect(try OpenPGP.decrypt(binary, with: [rampart], verifyingWith: [peerKey]).signature == .verified(peerKey.fingerprint))
        for cut in Set([1, 5, 20, 60, binary.count / 4, binary.count / 2, binary.count - 40, binary.count - 2, binary.count - 1]).sorted()
        where cut > 0 && cut < binary.count {
            let truncated = binary.prefix(cut)
            await Self.expectRefused("\(peer.name) message truncated to \(cut) of \(binary.count) bytes") {
                try OpenPGP.decrypt(Data(truncated), with: [rampart], verifyingWith: [peerKey]).data
            }
        }
        // The armoured form cut mid-line.
        let text = String(decoding: armored, as: UTF8.self)
        await Self.expectRefused("\(peer.name) armoured message cut in half") {
            try OpenPGP.decrypt(Data(text.prefix(text.count / 2).utf8), with: [rampart], verifyingWith: [peerKey]).data
        }
    }

    @Test("a peer's message to another key is refused as not for us", arguments: PeerKind.allCases)
    func wrongKey(kind: PeerKind) async throws {
        let peer = try await kind.make()
        let intended = try PGPPrivateKey.generate(name: "Intended", address: "intended@rampart.example")
        let other = try PGPPrivateKey.generate(name: "Other", address: "other@rampart.example")
        let peerKey = try await peer.publicKeyInRampart()
        let message = try await peer.encryptAndSign(PeerInteropTests.body, to: intended.publicKey)
        let error = await Self.expectRefused("\(peer.name) message decrypted with the wrong key") {
            try OpenPGP.decrypt(message, with: [other], verifyingWith: [peerKey]).data
        }
        #expect(error == .noDecryptionKey)
        // And with no key at all.
        #expect(await Self.expectRefused("decrypt with no keys") { try OpenPGP.decrypt(message, with: [], verifyingWith: [peerKey]).data }
            == .noDecryptionKey)
    }

    @Test("a peer's message with a flipped bit anywhere is refused, never released", arguments: PeerKind.allCases)
    func flippedBits(kind: PeerKind) async throws {
        let peer = try await kind.make()
        let rampart = try PGPPrivateKey.generate(name: "Rampart User", address: "user@rampart.example")
        let peerKey = try await peer.publicKeyInRampart()
        let binary = try await Self.dearmor(try peer.encryptAndSign(PeerInteropTests.body, to: rampart.publicKey))
        #expect(try OpenPGP.decrypt(binary, with: [rampart], verifyingWith: [peerKey]).data == PeerInteropTests.body)
        // Positions across the whole message: packet headers, the session key packet, the
        // encrypted body (literal data, signature, MDC) and its last bytes.
        var positions = Set([0, 1, 2, 3, 10, 30, 60, 100, binary.count - 1, binary.count - 2, binary.count - 10, binary.count - 22])
        for step in stride(from: 0, to: binary.count, by: max(1, binary.count / 24)) { positions.insert(step) }
        for position in positions.sorted() where position >= 0 && position < binary.count {
            for mask: UInt8 in [0x01, 0x80] {
                var edited = binary
                edited[position] ^= mask
                let changed = edited
                await Self.expectRefused("\(peer.name) message with bit \(mask) flipped at byte \(position) of \(binary.count)") {
                    try OpenPGP.decrypt(changed, with: [rampart], verifyingWith: [peerKey]).data
                }
            }
        }
    }

    @Test("Rampart's own message with a flipped bit in its encrypted body is an integrity failure")
    func flippedBitInRampartMessageIsIntegrityFailure() async throws {
        let rampart = try PGPPrivateKey.generate(name: "Rampart User", address: "user@rampart.example")
        let message = try OpenPGP.encrypt(PeerInteropTests.body, to: [rampart.publicKey], signedBy: rampart)
        for offset in [40, 200, 2000] {
            var edited = message
            edited[edited.count - offset] ^= 0x10
            let changed = edited
            let error = await Self.expectRefused("flipped bit \(offset) bytes from the end") {
                try OpenPGP.decrypt(changed, with: [rampart], verifyingWith: [rampart.publicKey]).data
            }
            #expect(error == .integrityCheckFailed)
        }
    }

    /// Zeros compress about 1000:1: 64 MiB become a message of some 64 KiB.
    static let bombSize = 64 << 20

    @Test("a gpg-made compression bomb (-z 9, 64 MiB of zeros) is stopped at the output limit",
          arguments: ["zip", "zlib", "bzip2"])
    func compressionBomb(algorithm: String) async throws {
        let gpg = try await GnuPGPeer(name: "Bomb Maker", address: "bomb@interop.example")
        let rampart = try PGPPrivateKey.generate(name: "Rampart User", address: "user@rampart.example")
        let peerKey = try await PGPPublicKey(armored: try gpg.exportPublicKey())
        let bomb = try await gpg.encryptCompressed(Data(count: Self.bombSize), to: rampart.publicKey, algorithm: algorithm)
        #expect(bomb.count < Self.bombSize / 50, "gpg's \(algorithm) bomb is \(bomb.count) bytes")
        let limits = PGPLimits(maxOutputBytes: 1 << 20)
        let error = await Self.expectRefused("\(algorithm) bomb of \(bomb.count) bytes with a 1 MiB limit") {
            try OpenPGP.decrypt(bomb, with: [rampart], verifyingWith: [peerKey], limits: limits).data
        }
        if let error, case .limitExceeded = error {} else { Issue.record("expected .limitExceeded, got \(String(describing: error))") }

        let signed = try await gpg.signCompressed(Data(count: Self.bombSize), algorithm: algorithm)
        let signedError = await Self.expectRefused("signed-only \(algorithm) bomb with a 1 MiB limit") {
            try OpenPGP.verifySigned(signed, against: [peerKey], limits: limits).data
        }
        if let signedError, case .limitExceeded = signedError {} else {
            Issue.record("expected .limitExceeded, got \(String(describing: signedError))")
        }
    }

    @Test("control: a compressed gpg message below the limit decrypts, so the bomb's refusal is the limit's doing")
    func compressedMessageUnderTheLimitDecrypts() async throws {
        let gpg = try await GnuPGPeer(name: "Bomb Maker", address: "bomb@interop.example")
        let rampart = try PGPPrivateKey.generate(name: "Rampart User", address: "user@rampart.example")
        let peerKey = try await PGPPublicKey(armored: try gpg.exportPublicKey())
        let plain = Data(count: 4 << 20)
        let message = try await gpg.encryptCompressed(plain, to: rampart.publicKey, algorithm: "zlib")
        let decrypted = try OpenPGP.decrypt(message, with: [rampart], verifyingWith: [peerKey], limits: PGPLimits(maxOutputBytes: 8 << 20))
        #expect(decrypted.data == plain)
        #expect(decrypted.signature == .verified(peerKey.fingerprint))
        let error = await Self.expectRefused("the same 4 MiB with a 1 MiB limit") {
            try OpenPGP.decrypt(message, with: [rampart], verifyingWith: [peerKey], limits: PGPLimits(maxOutputBytes: 1 << 20)).data
        }
        if let error, case .limitExceeded = error {} else { Issue.record("expected .limitExceeded, got \(String(describing: error))") }
    }

    /// The binary packets of an armoured message (RFC 4880 6.2: header lines, a blank line,
    /// base64, an optional "=CRC" line), decoded here independently of the module under test.
    static func dearmor(_ armored: Data) throws -> Data {
        let text = String(decoding: armored, as: UTF8.self)
        guard text.hasPrefix("-----BEGIN PGP") else { return armored }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let blank = lines.firstIndex(of: ""), let end = lines.firstIndex(where: { $0.hasPrefix("-----END PGP") }) else {
            throw PeerError.unexpectedOutput(peer: "armour", detail: "no blank line or END line")
        }
        let body = lines[(blank + 1)..<end].filter { !$0.hasPrefix("=") }.joined()
        guard let data = Data(base64Encoded: body) else {
            throw PeerError.unexpectedOutput(peer: "armour", detail: "bad base64")
        }
        return data
    }
}
