import Foundation
import GRDB
import RampartCore
import Testing
@testable import SealedStore

@Suite struct BlindIndexSearchTests {
    func fixture() throws -> StoreFixture {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(messages: [
            sampleMessage(1, body: "Invoice for the Café order", subject: "Invoice March",
                          sender: MailAddress(name: "Acme Billing", address: "billing@acme.com"), time: 100),
            sampleMessage(2, body: "Lunch on Friday?", subject: "Lunch",
                          sender: MailAddress(name: "Dora", address: "dora@example.org"), time: 200),
            sampleMessage(3, body: "Second invoice, overdue", subject: "Reminder: invoices",
                          sender: MailAddress(name: "Acme Billing", address: "billing@acme.com"), time: 300),
        ])
        return fixture
    }

    @Test func wordQueriesFindMessagesNewestFirst() throws {
        let fixture = try fixture()
        #expect(try fixture.store.mail.search(MailSearchQuery(words: ["invoice"])) == ["msg-3", "msg-1"])
        #expect(try fixture.store.mail.search(MailSearchQuery(words: ["INVOICE", "overdue"])) == ["msg-3"])
        #expect(try fixture.store.mail.search(MailSearchQuery(words: ["cafe"])) == ["msg-1"])
        #expect(try fixture.store.mail.search(MailSearchQuery(words: ["missing"])).isEmpty)
        #expect(try fixture.store.mail.search(MailSearchQuery(words: ["?!", "a"])).isEmpty)
    }

    @Test func prefixSenderAndDateQueries() throws {
        let fixture = try fixture()
        #expect(try fixture.store.mail.search(MailSearchQuery(prefix: "invo")) == ["msg-3", "msg-1"])
        #expect(try fixture.store.mail.search(MailSearchQuery(prefix: "lun")) == ["msg-2"])
        #expect(try fixture.store.mail.search(MailSearchQuery(sender: "Billing@Acme.com")) == ["msg-3", "msg-1"])
        #expect(try fixture.store.mail.search(MailSearchQuery(sender: "billing@acme.com", before: 300)) == ["msg-1"])
        #expect(try fixture.store.mail.search(MailSearchQuery(after: 150, before: 250)) == ["msg-2"])
        #expect(try fixture.store.mail.search(MailSearchQuery(words: ["invoice"], limit: 1)) == ["msg-3"])
        #expect(throws: SealedStoreError.self) { try fixture.store.mail.search(MailSearchQuery(prefix: "a")) }
    }

    @Test func prefixesLongerThanTheIndexedLengthAreConfirmed() throws {
        let fixture = try StoreFixture()
        try fixture.store.mail.insert(messages: [
            sampleMessage(1, subject: "internationalization"), sampleMessage(2, subject: "internationalism"),
        ])
        #expect(try fixture.store.mail.search(MailSearchQuery(prefix: "internationaliz")) == ["msg-1"])
        #expect(try fixture.store.mail.search(MailSearchQuery(prefix: "internatio")).sorted() == ["msg-1", "msg-2"])
    }

    @Test func indexHoldsNoWordInClearAndDependsOnTheUserKey() throws {
        let fixture = try fixture()
        let tokens = try fixture.store.currentPool!.read { db in try Data.fetchAll(db, sql: "SELECT token FROM search_tokens") }
        #expect(!tokens.isEmpty)
        #expect(tokens.allSatisfy { $0.count == BlindIndex.tokenCount })
        #expect(!tokens.contains { $0.range(of: Data("invoice".utf8)) != nil })
        // The same message under another MainKey gives disjoint tokens.
        let other = try StoreFixture()
        try other.store.mail.insert(message: sampleMessage(1, body: "Invoice for the Café order", subject: "Invoice March",
                                                           sender: MailAddress(name: "Acme Billing", address: "billing@acme.com"), time: 100))
        let otherTokens = try other.store.currentPool!.read { db in try Data.fetchAll(db, sql: "SELECT token FROM search_tokens") }
        #expect(Set(tokens).isDisjoint(with: otherTokens))
    }

    @Test func frequentTermsUseTheTimeOrderedScanWithTheSameResults() throws {
        let fixture = try StoreFixture()
        let count = MailStore.frequentTermThreshold + 100
        var messages = (0..<count).map { sampleMessage($0, body: "common words here", time: Int64($0 * 10)) }
        messages[17].body = "common and rare"
        try fixture.store.mail.insert(messages: messages)
        let newest = try fixture.store.mail.search(MailSearchQuery(words: ["common"], limit: 5))
        #expect(newest == (count - 5..<count).reversed().map { "msg-\($0)" })
        let bounded = try fixture.store.mail.search(MailSearchQuery(words: ["common"], before: 100, limit: 50))
        #expect(bounded == (0..<10).reversed().map { "msg-\($0)" })
        #expect(try fixture.store.mail.search(MailSearchQuery(words: ["rare"])) == ["msg-17"])
    }

    @Test func normalizationFoldsCaseAndDiacritics() {
        #expect(BlindIndex.words(in: "Élan, CAFÉ-crème; a 42x") == ["elan", "cafe", "creme", "42x"])
    }
}
