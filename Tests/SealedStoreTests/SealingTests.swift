import Crypto
import Foundation
import RampartCore
import Testing
@testable import SealedStore

@Suite struct SealingTests {
    let key = SymmetricKey(size: .bits256)
    var sealer: ColumnSealer { ColumnSealer(key: key, user: "alice", keyVersion: KeyVersion(fingerprint: "0011223344556677"), schemaVersion: 1) }
    let here = SealedLocation(table: "messages", column: "body", primaryKey: "m1")

    @Test func sealedValueOpensOnlyAtItsLocation() throws {
        let sealed = try Sealed<String>.seal("secret body", at: here, with: sealer)
        #expect(try sealed.open(at: here, with: sealer) == "secret body")
        for other in [SealedLocation(table: "messages", column: "body", primaryKey: "m2"),
                      SealedLocation(table: "messages", column: "subject", primaryKey: "m1"),
                      SealedLocation(table: "contacts", column: "body", primaryKey: "m1")] {
            #expect(throws: SealedStoreError.self) { try sealed.open(at: other, with: sealer) }
        }
    }

    @Test func otherUserOrSchemaOrKeyVersionCannotOpen() throws {
        let sealed = try Sealed<String>.seal("x", at: here, with: sealer)
        let bob = ColumnSealer(key: key, user: "bob", keyVersion: sealer.keyVersion, schemaVersion: 1)
        let v2 = ColumnSealer(key: key, user: "alice", keyVersion: sealer.keyVersion, schemaVersion: 2)
        let otherKey = ColumnSealer(key: SymmetricKey(size: .bits256), user: "alice", keyVersion: sealer.keyVersion, schemaVersion: 1)
        for wrong in [bob, v2, otherKey] {
            expectTampered { try sealed.open(at: here, with: wrong) }
        }
    }

    @Test func compositeKeysDoNotCollide() throws {
        let a = SealedLocation(table: "blocks", column: "hash", primaryKey: ["a:b", "1"])
        let b = SealedLocation(table: "blocks", column: "hash", primaryKey: ["a", "b:1"])
        let sealed = try Sealed<Data>.seal(Data([1, 2, 3]), at: a, with: sealer)
        expectTampered { try sealed.open(at: b, with: sealer) }
    }

    @Test func everyFlippedBitAndEveryTruncationIsRejected() throws {
        let sealed = try Sealed<String>.seal("short", at: here, with: sealer)
        for index in sealed.envelope.indices {
            var bytes = sealed.envelope
            bytes[index] ^= 0x01
            expectTampered { try Sealed<String>(envelope: bytes).open(at: here, with: sealer) }
        }
        for length in 0..<sealed.envelope.count {
            expectTampered { try Sealed<String>(envelope: sealed.envelope.prefix(length)).open(at: here, with: sealer) }
        }
    }

    @Test func nonceIsFreshForEverySeal() throws {
        let one = try Sealed<String>.seal("same", at: here, with: sealer)
        let two = try Sealed<String>.seal("same", at: here, with: sealer)
        #expect(one.envelope != two.envelope)
        #expect(one.keyVersion == sealer.keyVersion)
    }

    @Test func stringListsRoundTripAndRejectMalformedBytes() throws {
        let list = ["", "a", "ünïcødé", String(repeating: "x", count: 1000)]
        #expect(try [String](sealedBytes: Data(list.sealedBytes)) == list)
        #expect(throws: (any Error).self) { try [String](sealedBytes: Data([0, 0, 0, 9])) }
        #expect(throws: (any Error).self) { try [String](sealedBytes: Data([0xff, 0xff, 0xff, 0xff])) }
        #expect(throws: (any Error).self) { try String(sealedBytes: Data([0xff, 0xfe])) }
    }
}
