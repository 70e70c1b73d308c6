/// PGP/MIME's own ASCII-armour reader and writer and its packet-header reading, exposed for the
/// fuzz target in `Fuzz/` (SPI `Fuzzing`, not part of the public API).
///
/// Trust-model row **inbox (low)**: armour in an incoming message is hostile input; a damaged
/// block must be refused with a typed ``PGPMIMEError``, never crash the reader.
@_spi(Fuzzing)
public enum ArmorFuzzing {
    /// ``Armor/dearmor(_:)``: the kind and binary content of the first armour block.
    public static func dearmor(_ text: [UInt8]) throws -> (kind: String, binary: [UInt8]) { try Armor.dearmor(text) }

    /// ``Armor/armor(_:kind:)``.
    public static func armor(_ binary: [UInt8], kind: String) -> [UInt8] { Armor.armor(binary, kind: kind) }

    /// ``Armor/firstPacket(_:)``.
    public static func firstPacket(_ binary: [UInt8]) -> (tag: Int, bodyOffset: Int)? { Armor.firstPacket(binary) }

    /// ``Armor/micalg(ofSignature:)``.
    public static func micalg(ofSignature binary: [UInt8]) -> String? { Armor.micalg(ofSignature: binary) }

    /// ``Armor/splitLines(_:)``.
    public static func splitLines(_ text: [UInt8]) -> [String] { Armor.splitLines(text) }
}
