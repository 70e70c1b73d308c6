import Crypto
import Foundation

/// Keyed tokens for searching sealed messages without decrypting them.
///
/// Trust-model row: **database (messages) — critical to read**: the index holds
/// HMAC-SHA256 tokens (truncated to 16 bytes) of normalized words, prefixes and sender
/// addresses, under the per-user sub-key `store.blind-index[user]`. Without the MainKey a token
/// cannot be linked to a word, except by frequency analysis (see the leak table in the docs).
///
/// Token kinds (one domain byte each, so a word and a prefix never share a token):
/// - `w` every normalized word of subject, sender, recipients' names and body;
/// - `p` prefixes (2…``maximumPrefixLength`` characters) of subject and sender words;
/// - `a` the full sender address, lower-cased.
struct BlindIndex {
    static let tokenCount = 16
    static let maximumPrefixLength = 10
    static let maximumWordLength = 40
    static let maximumTokensPerMessage = 4_000

    enum Kind: UInt8 {
        case word = 0x77 // w
        case prefix = 0x70 // p
        case senderAddress = 0x61 // a
    }

    private let key: SymmetricKey

    init(key: SymmetricKey) { self.key = key }

    func token(_ kind: Kind, _ normalized: String) -> Data {
        var input = [kind.rawValue]
        input.append(contentsOf: normalized.utf8)
        let mac = HMAC<SHA256>.authenticationCode(for: input, using: key)
        return mac.withUnsafeBytes { Data($0.prefix(BlindIndex.tokenCount)) }
    }

    /// Every token of a message, deduplicated.
    func tokens(for message: MailMessage) -> Set<Data> {
        var tokens = Set<Data>()
        let headline = BlindIndex.words(in: message.subject) + BlindIndex.words(in: message.sender.name)
            + BlindIndex.words(in: message.sender.address)
        for word in headline {
            tokens.insert(token(.word, word))
            let characters = Array(word)
            if characters.count > 2 {
                for length in 2..<min(characters.count, BlindIndex.maximumPrefixLength + 1) {
                    tokens.insert(token(.prefix, String(characters[0..<length])))
                }
            }
        }
        for recipient in message.recipients {
            for word in BlindIndex.words(in: recipient.name) { tokens.insert(token(.word, word)) }
        }
        for word in BlindIndex.words(in: message.body) {
            if tokens.count >= BlindIndex.maximumTokensPerMessage { break }
            tokens.insert(token(.word, word))
        }
        let address = message.sender.address.lowercased()
        if !address.isEmpty { tokens.insert(token(.senderAddress, address)) }
        return tokens
    }

    /// Splits text into normalized words: letters and digits, lower-cased, diacritics removed,
    /// at least 2 and at most ``maximumWordLength`` characters.
    static func words(in text: String) -> [String] {
        var words: [String] = []
        var current = String.UnicodeScalarView()
        var isASCII = true
        func flush() {
            defer { current.removeAll(keepingCapacity: true); isASCII = true }
            guard current.count >= 2 else { return }
            var word = String(current)
            if !isASCII { word = normalize(word) } else { word = word.lowercased() }
            if word.count > maximumWordLength { word = String(word.prefix(maximumWordLength)) }
            words.append(word)
        }
        for scalar in text.unicodeScalars {
            if scalar.isASCII {
                let value = scalar.value
                if (value >= 0x30 && value <= 0x39) || (value >= 0x41 && value <= 0x5A) || (value >= 0x61 && value <= 0x7A) {
                    current.append(scalar)
                } else {
                    flush()
                }
            } else if scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
                current.append(scalar)
                isASCII = false
            } else {
                flush()
            }
        }
        flush()
        return words
    }

    /// Lower-cases and removes diacritics (`é` → `e`), the normalization of words and queries.
    static func normalize(_ word: String) -> String {
        word.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil).lowercased()
    }
}
