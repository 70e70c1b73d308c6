import Foundation
import MIME

/// The little of RFC 4880 that PGP/MIME needs outside the OpenPGP library: ASCII armour (§6)
/// with CRLF line ends, and reading the first bytes of a packet to learn its tag and, for a
/// signature, its hash algorithm (for `micalg`, RFC 3156 §5).
enum Armor {
    static let crlf: [UInt8] = [0x0D, 0x0A]

    /// The CRC-24 of RFC 4880 §6.1.
    static func crc24(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xB704CE
        for byte in data {
            crc ^= UInt32(byte) << 16
            for _ in 0..<8 {
                crc <<= 1
                if crc & 0x1000000 != 0 { crc ^= 0x1864CFB }
            }
        }
        return crc & 0xFFFFFF
    }

    /// Armours binary OpenPGP data as `-----BEGIN PGP <kind>-----` with CRLF line ends, 64
    /// characters a line, and the CRC-24 checksum line.
    static func armor(_ binary: [UInt8], kind: String) -> [UInt8] {
        var out = Array("-----BEGIN PGP \(kind)-----".utf8) + crlf + crlf
        out += TransferEncoding.encodeBase64(binary, lineBreak: crlf, lineLength: 64) + crlf
        let crc = crc24(binary)
        let crcBytes = [UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
        out += [UInt8(ascii: "=")] + TransferEncoding.encodeBase64(crcBytes, lineLength: 0) + crlf
        out += Array("-----END PGP \(kind)-----".utf8) + crlf
        return out
    }

    /// The binary content of the first armour block in `text` (`-----BEGIN PGP <anything>-----`
    /// through the matching END line), its checksum checked when present.
    /// - Throws: ``PGPMIMEError/malformed(_:)`` for a missing END line, bad base64 or a wrong
    ///   checksum.
    static func dearmor(_ text: [UInt8]) throws -> (kind: String, binary: [UInt8]) {
        let lines = splitLines(text)
        guard let begin = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN PGP ") && $0.hasSuffix("-----") }) else {
            throw PGPMIMEError.malformed("no \"-----BEGIN PGP\" armour line")
        }
        let kind = String(lines[begin].dropFirst("-----BEGIN PGP ".count).dropLast(5))
        guard let end = lines[(begin + 1)...].firstIndex(of: "-----END PGP \(kind)-----") else {
            throw PGPMIMEError.malformed("the armour block \"BEGIN PGP \(kind)\" has no END line")
        }
        // Armour headers (`Version: …`, `Comment: …`) run to the first blank line.
        var i = begin + 1
        while i < end && !lines[i].isEmpty && lines[i].contains(":") { i += 1 }
        if i < end && lines[i].isEmpty { i += 1 }
        var base64: [UInt8] = []
        var checksum: [UInt8]?
        for line in lines[i..<end] {
            if line.hasPrefix("=") && line.count == 5 { checksum = Array(line.dropFirst().utf8); continue }
            base64 += Array(line.utf8)
        }
        let decoded = TransferEncoding.decodeBase64(base64[...])
        guard decoded.problem == nil, !decoded.bytes.isEmpty else {
            throw PGPMIMEError.malformed("the armour block \"BEGIN PGP \(kind)\" is not valid base64")
        }
        if let checksum {
            let c = TransferEncoding.decodeBase64(checksum[...]).bytes
            guard c.count == 3, UInt32(c[0]) << 16 | UInt32(c[1]) << 8 | UInt32(c[2]) == crc24(decoded.bytes) else {
                throw PGPMIMEError.malformed("the armour checksum of \"BEGIN PGP \(kind)\" does not match its content")
            }
        }
        return (kind, decoded.bytes)
    }

    /// Lines of `text` without their line ends (CRLF, LF or CR), trailing blanks removed.
    static func splitLines(_ text: [UInt8]) -> [String] {
        var lines: [String] = []
        var start = 0, i = 0
        while i < text.count {
            let c = text[i]
            if c == 0x0A || c == 0x0D {
                lines.append(String(decoding: text[start..<i], as: UTF8.self))
                if c == 0x0D && i + 1 < text.count && text[i + 1] == 0x0A { i += 1 }
                start = i + 1
            }
            i += 1
        }
        if start < text.count { lines.append(String(decoding: text[start...], as: UTF8.self)) }
        return lines.map { line in
            var s = Substring(line)
            while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
            return String(s)
        }
    }

    /// The tag of the first OpenPGP packet and where its body starts (RFC 4880 §4.2, old and
    /// new formats), or `nil` when `binary` does not start with a whole packet header (a header
    /// cut short is not one: `bodyOffset` is never past the end of `binary`).
    static func firstPacket(_ binary: [UInt8]) -> (tag: Int, bodyOffset: Int)? {
        guard let first = binary.first, first & 0x80 != 0 else { return nil }
        let packet: (tag: Int, bodyOffset: Int)
        if first & 0x40 != 0 {
            guard binary.count >= 2 else { return nil }
            let l = binary[1]
            switch l {
            case 0..<192: packet = (Int(first & 0x3F), 2)
            case 192..<224: packet = (Int(first & 0x3F), 3)
            case 255: packet = (Int(first & 0x3F), 6)
            default: packet = (Int(first & 0x3F), 2)  // partial body length
            }
        } else {
            let lengthBytes = [1, 2, 4, 0][Int(first & 0x03)]
            packet = (Int(first >> 2 & 0x0F), 1 + lengthBytes)
        }
        return packet.bodyOffset <= binary.count ? packet : nil
    }

    /// The `micalg` name (RFC 3156 §5, RFC 4880 §9.4) of the hash algorithm of a binary v4 (or
    /// v3) signature packet, or `nil` when it is not one.
    static func micalg(ofSignature binary: [UInt8]) -> String? {
        guard let packet = firstPacket(binary), packet.tag == 2 else { return nil }
        let body = binary[packet.bodyOffset...]
        guard let version = body.first else { return nil }
        let hashOffset: Int
        switch version {
        case 4, 5: hashOffset = 3      // version, type, public-key algorithm, hash algorithm
        case 3: hashOffset = 16        // version, 5, type, time(4), key id(8), pk algo, hash algo
        default: return nil
        }
        guard body.count > hashOffset else { return nil }
        switch body[body.startIndex + hashOffset] {
        case 1: return "pgp-md5"
        case 2: return "pgp-sha1"
        case 3: return "pgp-ripemd160"
        case 8: return "pgp-sha256"
        case 9: return "pgp-sha384"
        case 10: return "pgp-sha512"
        case 11: return "pgp-sha224"
        default: return nil
        }
    }
}
