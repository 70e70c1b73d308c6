import Foundation

/// A strict check of the top-level packet framing of a binary OpenPGP message (RFC 4880 §4.2):
/// every packet header is well formed and the packets tile the input exactly — no truncated last
/// packet, no bytes after it.
///
/// RNP reads a packet whose declared length runs past the end of the input as far as the input
/// goes; the integrity check still protects the content, but a message whose framing was
/// modified is refused here as ``OpenPGPError/malformed(_:)`` before RNP sees it.
enum PacketFraming {
    /// Checks the framing and returns the top-level packet tags in order.
    @discardableResult
    static func check(_ data: Data) throws -> [UInt8] {
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> [UInt8] in
            var tags: [UInt8] = []
            var offset = 0
            var packets = 0
            func fail(_ why: String) -> OpenPGPError {
                .malformed("packet \(packets + 1) at byte \(offset): \(why)")
            }
            while offset < bytes.count {
                let tagByte = bytes[offset]
                guard tagByte & 0x80 != 0 else { throw fail("not a packet header") }
                var position = offset + 1
                tags.append(tagByte & 0x40 != 0 ? tagByte & 0x3F : (tagByte >> 2) & 0x0F)
                if tagByte & 0x40 != 0 {
                    // New format: one or more length parts; partial lengths continue the body.
                    while true {
                        guard position < bytes.count else { throw fail("truncated length") }
                        let first = Int(bytes[position])
                        var length: Int
                        var partial = false
                        if first < 192 {
                            length = first
                            position += 1
                        } else if first < 224 {
                            guard position + 1 < bytes.count else { throw fail("truncated length") }
                            length = ((first - 192) << 8) + Int(bytes[position + 1]) + 192
                            position += 2
                        } else if first == 255 {
                            guard position + 4 < bytes.count else { throw fail("truncated length") }
                            length = (Int(bytes[position + 1]) << 24) | (Int(bytes[position + 2]) << 16)
                                | (Int(bytes[position + 3]) << 8) | Int(bytes[position + 4])
                            position += 5
                        } else {
                            length = 1 << (first & 0x1F)
                            partial = true
                            position += 1
                        }
                        guard length <= bytes.count - position else { throw fail("the packet runs past the end of the data") }
                        position += length
                        if !partial { break }
                    }
                } else {
                    // Old format: the length type is in the low two bits.
                    let lengthType = tagByte & 0x03
                    var length: Int
                    switch lengthType {
                    case 0:
                        guard position < bytes.count else { throw fail("truncated length") }
                        length = Int(bytes[position]); position += 1
                    case 1:
                        guard position + 1 < bytes.count else { throw fail("truncated length") }
                        length = (Int(bytes[position]) << 8) | Int(bytes[position + 1]); position += 2
                    case 2:
                        guard position + 3 < bytes.count else { throw fail("truncated length") }
                        length = (Int(bytes[position]) << 24) | (Int(bytes[position + 1]) << 16)
                            | (Int(bytes[position + 2]) << 8) | Int(bytes[position + 3])
                        position += 4
                    default:
                        length = bytes.count - position   // indeterminate: to the end
                    }
                    guard length <= bytes.count - position else { throw fail("the packet runs past the end of the data") }
                    position += length
                }
                offset = position
                packets += 1
            }
            guard packets > 0 else { throw OpenPGPError.malformed("no OpenPGP packets") }
            return tags
        }
    }

    /// Checks that `tags` (top level) are one message of the expected kind (RFC 4880 §11.3):
    /// an encrypted message is session key packets then exactly one encrypted data packet; a
    /// signed message has exactly one literal or compressed data packet among one-pass
    /// signatures and signatures. Marker packets (tag 10) are ignored. Two messages back to back
    /// are refused rather than read one and drop the other.
    static func checkMessage(_ tags: [UInt8], encrypted: Bool) throws {
        let tags = tags.filter { $0 != 10 }
        if encrypted {
            let dataPackets = tags.filter { [9, 18, 20].contains($0) }.count
            guard dataPackets == 1, let last = tags.last, [9, 18, 20].contains(last),
                  tags.dropLast().allSatisfy({ $0 == 1 || $0 == 3 }) else {
                throw OpenPGPError.malformed("not one encrypted message (top-level packets: \(tags.map(String.init).joined(separator: ",")))")
            }
        } else {
            if tags.contains(where: { [9, 18, 20].contains($0) }) {
                throw OpenPGPError.malformed("the message is encrypted; decrypt it instead")
            }
            let dataPackets = tags.filter { $0 == 8 || $0 == 11 }.count
            guard dataPackets == 1, tags.allSatisfy({ [2, 4, 8, 11].contains($0) }) else {
                throw OpenPGPError.malformed("not one signed message (top-level packets: \(tags.map(String.init).joined(separator: ",")))")
            }
        }
    }
}

extension OpenPGP {
    /// The top-level packet tags of `data` (binary or armored), in order, after a strict check of
    /// the framing (every header well formed, the packets tile the input): what a holder who cannot
    /// decrypt can still check of a message's structure, e.g. `[1, 18]` for a message to one key.
    /// - Throws: ``OpenPGPError/malformed(_:)`` for bad armour or framing, or no packet at all.
    public static func packetTags(_ data: Data) throws -> [UInt8] {
        let tags = try PacketFraming.check(try dearmor(data))
        guard !tags.isEmpty else { throw OpenPGPError.malformed("no OpenPGP packet") }
        return tags
    }
}
