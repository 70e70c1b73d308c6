@_spi(Fuzzing) import PGPMIME
import Testing

/// Regressions found by the `pgpmime` fuzz target (docs/fuzzing.md, findings table).
@Suite struct ArmorFuzzRegressionTests {
    /// The fuzzer's input (mode 3: armour the rest, kind "SIGNATURE"): `03 01` then the binary
    /// `8A 60 75 1A`, an old-format signature packet header (tag 2) announcing a 4-byte length in
    /// a 4-byte buffer. `Armor.firstPacket` gave a body offset of 5, and `Armor.micalg` sliced
    /// `binary[5...]` of 4 bytes: a trap ("Range requires lowerBound <= upperBound").
    static let fuzzerInput: [UInt8] = [0x03, 0x01, 0x8A, 0x60, 0x75, 0x1A]

    @Test func aPacketHeaderCutShortIsNoPacket() {
        let binary = Array(Self.fuzzerInput.dropFirst(2))
        #expect(ArmorFuzzing.firstPacket(binary) == nil)
        #expect(ArmorFuzzing.micalg(ofSignature: binary) == nil)
        // Every header form, cut one byte short, is refused; whole, it is read.
        for header in [[0x88, 0x05], [0x89, 0x00, 0x05], [0x8A, 0x00, 0x00, 0x00, 0x05], [0xC2, 0xC0, 0x01], [0xC2, 0xFF, 0, 0, 0, 5]] as [[UInt8]] {
            #expect(ArmorFuzzing.firstPacket(Array(header.dropLast())) == nil, "\(header.dropLast())")
            #expect(ArmorFuzzing.firstPacket(header)?.tag == 2 && ArmorFuzzing.firstPacket(header)?.bodyOffset == header.count, "\(header)")
            #expect(ArmorFuzzing.micalg(ofSignature: header) == nil)
        }
        // A whole v4 signature header still names its hash.
        #expect(ArmorFuzzing.micalg(ofSignature: [0x88, 0x05, 0x04, 0x00, 0x16, 0x08, 0x00]) == "pgp-sha256")
    }

    @Test func theFuzzerInputArmoursAndReadsBack() throws {
        let binary = Array(Self.fuzzerInput.dropFirst(2))
        let back = try ArmorFuzzing.dearmor(ArmorFuzzing.armor(binary, kind: "SIGNATURE"))
        #expect(back.kind == "SIGNATURE" && back.binary == binary)
    }
}
