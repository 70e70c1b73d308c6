import Foundation
import MailboxCrypto
import OpenPGP
import RampartCore
import RampartTestSupport
import Testing

/// The recovery phrase (trust-model row **the user's private and public keys (critical)**, which
/// it opens): BIP-0039 words and
/// checksum, checked against Trezor's reference implementation (`mnemonic`, PyPI), and the
/// recovery copy of the key that only the phrase opens.
@Suite struct RecoveryPhraseTests {
    static func secret(_ text: String) -> SecretBytes { SecretBytes(copying: Array(text.utf8)) }
    static func text(_ phrase: RecoveryPhrase) throws -> String {
        try phrase.text().withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// BIP-0039's published vectors (128-bit entropy).
    @Test(arguments: [
        (UInt8(0x00), "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"),
        (UInt8(0x7F), "legal winner thank year wave sausage worth useful legal winner thank yellow"),
        (UInt8(0x80), "letter advice cage absurd amount doctor acoustic avoid letter advice cage above"),
        (UInt8(0xFF), "zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo zoo wrong"),
    ])
    func theStandardVectors(byte: UInt8, words: String) throws {
        let phrase = try RecoveryPhrase(entropy: SecretBytes(copying: [UInt8](repeating: byte, count: 16)))
        #expect(try Self.text(phrase) == words)
        #expect(try Self.text(RecoveryPhrase(phrase: Self.secret(words))) == words)
    }

    @Test func aPhraseReadsBackAsTypedInAnyCaseAndSpacing() throws {
        for _ in 0..<50 {
            let phrase = RecoveryPhrase.generate()
            let words = try Self.text(phrase)
            #expect(words.split(separator: " ").count == 12)
            let typed = "  " + words.uppercased().replacingOccurrences(of: " ", with: " \t\n ") + "\n"
            #expect(try Self.text(RecoveryPhrase(phrase: Self.secret(typed))) == words)
        }
    }

    @Test func badPhrasesAreRefusedWithTheReason() throws {
        let words = try Self.text(RecoveryPhrase.generate()).split(separator: " ").map(String.init)
        #expect(throws: RecoveryPhraseError.wordCount(11)) {
            try RecoveryPhrase(phrase: Self.secret(words.dropLast().joined(separator: " ")))
        }
        #expect(throws: RecoveryPhraseError.wordCount(13)) {
            try RecoveryPhrase(phrase: Self.secret((words + ["zoo"]).joined(separator: " ")))
        }
        #expect(throws: RecoveryPhraseError.wordCount(0)) { try RecoveryPhrase(phrase: Self.secret(" \n")) }
        var misspelled = words
        misspelled[4] = "zooo"
        #expect(throws: RecoveryPhraseError.unknownWord(position: 5)) {
            try RecoveryPhrase(phrase: Self.secret(misspelled.joined(separator: " ")))
        }
        // The all-zero phrase with its last word changed: in the list, but the checksum is wrong.
        #expect(throws: RecoveryPhraseError.checksumMismatch) {
            try RecoveryPhrase(phrase: Self.secret(String(repeating: "abandon ", count: 12)))
        }
    }

    /// Trezor's `mnemonic` agrees with us on every phrase: ours are valid for it and say the
    /// same words as its `to_mnemonic` of the same entropy; a phrase with one word changed is
    /// refused by both (or, when the change happens to keep the 4-bit checksum, accepted by both).
    @Test func trezorsReferenceImplementationAgrees() throws {
        let python = try #require(ProjectPython.executable, "no Python with `mnemonic` (scripts/setup.sh installs it into .venv)")
        var cases: [(phrase: String, entropy: String)] = []
        for n in 0..<40 {
            let entropy = (0..<16).map { _ in UInt8.random(in: 0...255) }
            let phrase = try Self.text(RecoveryPhrase(entropy: SecretBytes(copying: entropy)))
            var words = phrase.split(separator: " ").map(String.init)
            words[n % 12] = words[n % 12] == "abandon" ? "ability" : "abandon"
            cases.append((phrase, entropy.map { String(format: "%02x", $0) }.joined()))
            cases.append((words.joined(separator: " "), ""))
        }
        let script = """
        import json, sys
        from mnemonic import Mnemonic
        m = Mnemonic("english")
        for line in sys.stdin:
            phrase, entropy = json.loads(line)
            expected = m.to_mnemonic(bytes.fromhex(entropy)) if entropy else None
            print(json.dumps([m.check(phrase), expected]))
        """
        let input = cases.map { "[\"\($0.phrase)\", \"\($0.entropy)\"]" }.joined(separator: "\n") + "\n"
        let run = try CLITool(path: URL(fileURLWithPath: python)).run(["-c", script], stdin: input)
        try #require(run.status == 0, "\(run.stderr)")
        let answers = run.stdout.split(separator: "\n")
        try #require(answers.count == cases.count, "\(run.stdout)")
        var refusedByBoth = 0
        for (answer, item) in zip(answers, cases) {
            let decoded = try JSONSerialization.jsonObject(with: Data(answer.utf8)) as! [Any]
            let pythonValid = decoded[0] as! Bool
            let oursValid = (try? RecoveryPhrase(phrase: Self.secret(item.phrase))) != nil
            #expect(pythonValid == oursValid, "\(item.phrase)")
            if !item.entropy.isEmpty { #expect(decoded[1] as? String == item.phrase) }
            if !pythonValid && !oursValid { refusedByBoth += 1 }
        }
        #expect(refusedByBoth >= 25, "a changed word should fail the checksum about 15 times in 16")
    }

    /// The generated word list is the package's, word for word.
    @Test func theWordListIsBIP39s() throws {
        let python = try #require(ProjectPython.executable)
        let run = try CLITool(path: URL(fileURLWithPath: python))
            .run(["-c", "from mnemonic import Mnemonic; print(' '.join(Mnemonic('english').wordlist))"])
        try #require(run.status == 0, "\(run.stderr)")
        let theirs = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
        #expect(theirs.count == 2048)
        // Every one of their words reads as a word of ours at the same index: the phrase of
        // (index i in the first word, the rest zero) starts with their word i.
        for i in stride(from: 0, to: 2048, by: 97) {
            var bytes = [UInt8](repeating: 0, count: 16)
            bytes[0] = UInt8(i >> 3)
            bytes[1] = UInt8((i & 7) << 5)
            let first = try Self.text(RecoveryPhrase(entropy: SecretBytes(copying: bytes))).split(separator: " ")[0]
            #expect(first == theirs[i], "word \(i)")
        }
    }

    /// The recovery copy opens with its phrase only, and refuses a damaged or cheapened copy.
    @Test func theRecoveryCopyOpensWithThePhraseOnly() throws {
        let key = try PGPPrivateKey.generate(name: "Ann", address: "ann@rampart.test")
        let phrase = RecoveryPhrase.generate()
        let copy = try RecoveryKeyCopy.make(key: key, phrase: phrase, logN: RecoveryKeyCopy.minimumLogN)
        #expect(copy.lockedKey.contains("BEGIN PGP PRIVATE KEY BLOCK"))
        #expect(try copy.unlock(with: phrase).fingerprint == key.fingerprint)
        // The same phrase as the user types it again.
        let retyped = try RecoveryPhrase(phrase: phrase.text())
        #expect(try copy.unlock(with: retyped).fingerprint == key.fingerprint)
        #expect(throws: RecoveryPhraseError.wrongPhrase) { try copy.unlock(with: RecoveryPhrase.generate()) }
        var badSalt = copy
        badSalt.salt.removeLast()
        #expect(throws: RecoveryPhraseError.self) { try badSalt.unlock(with: phrase) }
        var cheap = copy
        cheap.logN = 10
        #expect(throws: RecoveryPhraseError.self) { try cheap.unlock(with: phrase) }
        #expect(throws: RecoveryPhraseError.self) { try RecoveryKeyCopy.make(key: key, phrase: phrase, logN: 12) }
        // The locked copy is valid OpenPGP that does not open without the passphrase.
        #expect(throws: (any Error).self) { try PGPPrivateKey.unlock(armored: copy.lockedKey, passphrase: Self.secret("guess")) }
    }
}
