import Crypto
import Foundation
import PinnedTransport
import Testing
import X509

@Suite("Pinning policy: bad input is refused when the policy is built")
struct PinningPolicyTests {
    let pinA = TestPKI.unusedPin().base64
    let pinB = TestPKI.unusedPin().base64

    @Test func policyWithOnePinIsRefusedForWantOfABackup() throws {
        #expect(throws: PinningPolicyError.tooFewPins(domain: "rampart.test", count: 1)) {
            try DomainPinningPolicy(domain: "rampart.test", pins: [pinA])
        }
        #expect(throws: PinningPolicyError.tooFewPins(domain: "rampart.test", count: 0)) {
            try DomainPinningPolicy(domain: "rampart.test", pins: [])
        }
    }

    @Test func theSamePinTwiceCountsOnce() throws {
        #expect(throws: PinningPolicyError.tooFewPins(domain: "rampart.test", count: 1)) {
            try DomainPinningPolicy(domain: "rampart.test", pins: [pinA, pinA])
        }
    }

    @Test func malformedPinsAreRefusedWithTheReason() throws {
        let notBase64 = "this is not base64!"
        #expect(throws: PinningPolicyError.malformedPin(
            domain: "rampart.test", pin: notBase64,
            reason: "it is not base64 (a pin is the base64 of a SHA-256 digest, 44 characters ending in '=')")) {
            try DomainPinningPolicy(domain: "rampart.test", pins: [pinA, notBase64])
        }
        let sha1Sized = Data(repeating: 7, count: 20).base64EncodedString()
        #expect(throws: PinningPolicyError.malformedPin(
            domain: "rampart.test", pin: sha1Sized, reason: "it decodes to 20 bytes, a SHA-256 pin has 32")) {
            try DomainPinningPolicy(domain: "rampart.test", pins: [pinA, sha1Sized])
        }
        #expect(throws: PinningPolicyError.malformedPin(domain: "rampart.test", pin: "", reason: "the pin is empty")) {
            try DomainPinningPolicy(domain: "rampart.test", pins: [pinA, ""])
        }
        #expect(throws: PinningPolicyError.self) { try SPKIPin(base64: "abc") }
    }

    @Test func emptyDomainIsRefused() throws {
        #expect(throws: PinningPolicyError.emptyDomain) { try DomainPinningPolicy(domain: "", pins: [pinA, pinB]) }
        #expect(throws: PinningPolicyError.emptyDomain) { try DomainPinningPolicy(domain: "  .", pins: [pinA, pinB]) }
    }

    @Test func unusableDomainsAreRefusedWithTheReason() throws {
        #expect(throws: PinningPolicyError.invalidDomain(
            "*.rampart.test", reason: "wildcards are not accepted; pin the parent domain with includeSubdomains instead")) {
            try DomainPinningPolicy(domain: "*.rampart.test", pins: [pinA, pinB])
        }
        #expect(throws: PinningPolicyError.invalidDomain("a..test", reason: "it has an empty label (two dots in a row)")) {
            try DomainPinningPolicy(domain: "a..test", pins: [pinA, pinB])
        }
        #expect(throws: PinningPolicyError.invalidDomain(
            "ram part.test",
            reason: "the label \"ram part\" has characters other than a-z, 0-9 and '-' (write IDNs in punycode)")) {
            try DomainPinningPolicy(domain: "ram part.test", pins: [pinA, pinB])
        }
    }

    @Test func everyRefusalSaysWhatToFix() throws {
        do {
            _ = try DomainPinningPolicy(domain: "rampart.test", pins: [pinA])
            Issue.record("a one-pin policy was built")
        } catch let error as PinningPolicyError {
            #expect(error.code == "pinningPolicy.tooFewPins")
            #expect(error.description.contains("at least two are required"))
            #expect(error.description.contains("backup"))
        }
    }

    @Test func twoPoliciesForOneDomainAreRefused() throws {
        let first = try DomainPinningPolicy(domain: "rampart.test", pins: [pinA, pinB])
        let second = try DomainPinningPolicy(domain: "RAMPART.test.", pins: [pinA, pinB])
        #expect(throws: PinningPolicyError.duplicateDomain("rampart.test")) { try PinningPolicy([first, second]) }
    }

    @Test func lookupPrefersExactDomainThenParentsThatIncludeSubdomains() throws {
        let parent = try DomainPinningPolicy(domain: "rampart.test", pins: [pinA, pinB], includeSubdomains: true)
        let exact = try DomainPinningPolicy(domain: "mail.rampart.test", pins: [pinA, pinB])
        let narrow = try DomainPinningPolicy(domain: "narrow.test", pins: [pinA, pinB], includeSubdomains: false)
        let policy = try PinningPolicy([parent, exact, narrow])
        #expect(policy.policy(for: "rampart.test") == parent)
        #expect(policy.policy(for: "API.rampart.test") == parent)
        #expect(policy.policy(for: "mail.rampart.test") == exact)
        #expect(policy.policy(for: "x.mail.rampart.test") == parent)
        #expect(policy.policy(for: "narrow.test") == narrow)
        #expect(policy.policy(for: "api.narrow.test") == nil)
        #expect(policy.policy(for: "evilrampart.test") == nil)
    }

    @Test func policyJSONRoundTripsAndBadJSONIsRefused() throws {
        let expiry = Date(timeIntervalSince1970: 1_900_000_000)
        let policy = try PinningPolicy([
            DomainPinningPolicy(domain: "rampart.test", pins: [pinA, pinB], includeSubdomains: true,
                                enforcement: .reportOnly, expiration: expiry),
        ])
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let decoded = try decoder.decode(PinningPolicy.self, from: encoder.encode(policy))
        #expect(decoded == policy)
        let onePin = Data(#"[{"domain":"rampart.test","pins":["\#(pinA)"]}]"#.utf8)
        #expect(throws: PinningPolicyError.tooFewPins(domain: "rampart.test", count: 1)) {
            try decoder.decode(PinningPolicy.self, from: onePin)
        }
    }
}
