import Crypto
import Foundation

/// Keyed tokens for searching sealed messages without decrypting them.
///
/// Trust-model row: **database (messages) — critical to read**: the index holds
/// HMAC-SHA256 tokens (truncated to 12 bytes) of normalized words, prefixes and sender
/// addresses, under the per-user sub-key `store.blind-index[user]`. Without the MainKey a token
/// cannot be linked to a word, except by frequency analysis (see the leak table in the docs).
///
/// Token kinds (one domain byte each, so a word and a prefix never share a token):
/// - `w` every normalized word of subject, sender, recipients' names and body;
/// - `p` prefixes (2…``maximumPrefixLength`` characters) of subject and sender words;
/// - `a` the full sender address, lower-cased.
final class BlindIndex {
    typealias Kind = SearchTerm.Kind
    static let tokenCount = 12
    static let maximumPrefixLength = 10
    static let maximumWordLength = 40
    static let maximumTokensPerMessage = 4_000

    /// The keyed HMAC state after absorbing the key: copied for each token, so the key's
    /// inner and outer pads are computed once per operation rather than once per token.
    private let keyed: HMAC<SHA256>

    /// Tokens already computed in this operation (a batch of messages repeats common words).
    /// Lives only as long as the operation's keys; holds no more than the batch being written.
    private var memo: [SearchTerm: Data] = [:]
    private static let memoLimit = 200_000

    init(key: SymmetricKey) { keyed = HMAC<SHA256>(key: key) }

    func token(_ kind: Kind, _ normalized: String) -> Data {
        var input: [UInt8] = [kind.rawValue]
        input.append(contentsOf: normalized.utf8)
        var mac = keyed
        mac.update(data: input)
        return mac.finalize().withUnsafeBytes { Data($0.prefix(BlindIndex.tokenCount)) }
    }

    /// Every token of a message, deduplicated: the keyed hash of each of its ``SearchTerms``.
    func tokens(for message: MailMessage) -> [Data] {
        SearchTerms.terms(for: message).map(token)
    }

    func token(_ term: SearchTerm) -> Data {
        if let known = memo[term] { return known }
        let computed = token(term.kind, term.text)
        if memo.count >= Self.memoLimit { memo.removeAll(keepingCapacity: true) }
        memo[term] = computed
        return computed
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

/// One searchable term of a message, before keyed hashing.
public struct SearchTerm: Sendable, Hashable {
    /// What the term is (one domain byte in the token, so a word and a prefix never collide).
    public enum Kind: UInt8, Sendable, Hashable {
        case word = 0x77 // w
        case prefix = 0x70 // p
        case senderAddress = 0x61 // a
    }

    public let kind: Kind
    public let text: String
}

/// The terms the blind index stores for a message (each one is then hashed with the user's
/// index key). Public so a benchmark can build the same index in clear as a baseline.
///
/// Trust-model row: **database (messages) — critical to read**: the set of terms is what the
/// index can leak in frequency, never in content.
public enum SearchTerms {
    public static func terms(for message: MailMessage) -> Set<SearchTerm> {
        var terms = Set<SearchTerm>()
        let headline = words(in: message.subject) + words(in: message.sender.name) + words(in: message.sender.address)
        for word in headline {
            terms.insert(SearchTerm(kind: .word, text: word))
            let characters = Array(word)
            if characters.count > 2 {
                for length in 2..<min(characters.count, BlindIndex.maximumPrefixLength + 1) {
                    terms.insert(SearchTerm(kind: .prefix, text: String(characters[0..<length])))
                }
            }
        }
        for recipient in message.recipients {
            for word in words(in: recipient.name) { terms.insert(SearchTerm(kind: .word, text: word)) }
        }
        for word in words(in: message.body) {
            if terms.count >= BlindIndex.maximumTokensPerMessage { break }
            terms.insert(SearchTerm(kind: .word, text: word))
        }
        let address = message.sender.address.lowercased()
        if !address.isEmpty { terms.insert(SearchTerm(kind: .senderAddress, text: address)) }
        return terms
    }

    /// Normalized words of a text (see the blind index: letters and digits, lower-cased,
    /// diacritics removed, 2–40 characters).
    public static func words(in text: String) -> [String] { BlindIndex.words(in: text) }
}
