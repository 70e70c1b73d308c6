import Crypto
import Foundation
import RampartCore

/// The on-disk form of one ``FileKeychain`` item (format version 1).
///
/// ```
/// offset      size  field
/// 0           4     magic "RKCI"
/// 4           1     format version (1)
/// 5           1     accessibility (KeychainAccessibility code, 0...4)
/// 6           1     key kind: 1 = folder key (portable item), 2 = device key (this-device-only)
/// 7           1     reserved, 0
/// 8           16    folder check: HKDF(folder salt, "check") — tells a foreign folder salt
/// 24          16    device check: HKDF(machine-id, folder salt, "check"); zeros for kind 1
/// 40          2     address length L (big endian)
/// 42          L     address: group (u8 length + bytes), service (u16 + bytes), account (u16 + bytes)
/// 42+L        12    AES-GCM nonce (random)
/// 54+L        n     ciphertext of the value
/// 54+L+n      16    AES-GCM tag
/// ```
/// The whole header (bytes `0..<42+L`) is the associated data, so changing any byte of it, or
/// of the ciphertext, or truncating the file, fails authentication. The address is readable
/// without a key (so items can be listed and wiped even when they cannot be decrypted), but
/// it cannot be changed without detection.
struct KeychainItemFile {
    static let magic: [UInt8] = Array("RKCI".utf8)
    static let version: UInt8 = 1
    static let checkLength = 16
    static let nonceLength = 12
    static let tagLength = 16
    /// The largest value a file item may hold.
    static let maximumValueSize = KeychainLimits.maximumValueSize
    /// The largest file read back (header limits plus the maximum value).
    static let maximumFileSize = maximumValueSize + 4 * 1024 + 256 + 64

    enum KeyKind: UInt8 {
        case folder = 1
        case device = 2
    }

    var accessibility: KeychainAccessibility
    var keyKind: KeyKind
    var folderCheck: [UInt8]
    var deviceCheck: [UInt8]
    var id: KeychainItemID
    /// Header bytes (the associated data).
    var header: [UInt8]
    var nonce: [UInt8]
    var sealed: [UInt8]

    // MARK: Address encoding

    /// The canonical bytes of an address (also hashed for the file name).
    static func addressBytes(_ id: KeychainItemID) -> [UInt8] {
        var out: [UInt8] = []
        let group = Array(id.accessGroup.name.utf8)
        let service = Array(id.service.utf8)
        let account = Array(id.account.utf8)
        out.append(UInt8(group.count))
        out += group
        appendUInt16(&out, service.count)
        out += service
        appendUInt16(&out, account.count)
        out += account
        return out
    }

    /// The file name of an item: SHA-256 of its canonical address, hex, `.item`.
    static func fileName(for id: KeychainItemID) -> String {
        let digest = SHA256.hash(data: addressBytes(id))
        return digest.map { String(format: "%02x", $0) }.joined() + ".item"
    }

    static func validate(_ id: KeychainItemID) throws {
        // Group names are validated by KeychainAccessGroup; service and account are free text.
        guard id.service.utf8.count <= Int(UInt16.max), id.account.utf8.count <= Int(UInt16.max),
              id.service.utf8.count + id.account.utf8.count <= 4096 else {
            throw KeychainError.storageFailure(path: id.description, reason: "service and account must be at most 4096 bytes together")
        }
    }

    // MARK: Encoding

    static func accessibilityCode(_ value: KeychainAccessibility) -> UInt8 {
        UInt8(KeychainAccessibility.allCases.firstIndex(of: value)!)
    }

    static func makeHeader(id: KeychainItemID, accessibility: KeychainAccessibility, keyKind: KeyKind,
                           folderCheck: [UInt8], deviceCheck: [UInt8]) -> [UInt8] {
        var header = magic
        header.append(version)
        header.append(accessibilityCode(accessibility))
        header.append(keyKind.rawValue)
        header.append(0)
        header += folderCheck
        header += deviceCheck
        let address = addressBytes(id)
        appendUInt16(&header, address.count)
        header += address
        return header
    }

    /// Seals `value` for `id` under `key`, returning the whole file.
    static func seal(_ value: SecretBytes, id: KeychainItemID, accessibility: KeychainAccessibility,
                     keyKind: KeyKind, folderCheck: [UInt8], deviceCheck: [UInt8], key: SymmetricKey) throws -> [UInt8] {
        let header = makeHeader(id: id, accessibility: accessibility, keyKind: keyKind,
                                folderCheck: folderCheck, deviceCheck: deviceCheck)
        let box = try value.withUnsafeBytes { plaintext in
            try AES.GCM.seal(plaintext, using: key, nonce: AES.GCM.Nonce(), authenticating: header)
        }
        var file = header
        file += box.nonce
        file += box.ciphertext
        file += box.tag
        return file
    }

    // MARK: Decoding

    /// Parses a file read from disk. Does not decrypt.
    /// - Throws: ``KeychainError/corruptItem(_:reason:)`` naming `expected` (or the parsed
    ///   address when listing) if the bytes are not a version-1 item.
    static func parse(_ bytes: [UInt8], expected: KeychainItemID?) throws -> KeychainItemFile {
        func corrupt(_ reason: String) -> KeychainError {
            .corruptItem(expected ?? KeychainItemID(service: "?", account: "?"), reason: reason)
        }
        let fixed = 42
        guard bytes.count >= fixed + nonceLength + tagLength else { throw corrupt("the file is truncated (\(bytes.count) bytes)") }
        guard Array(bytes[0..<4]) == magic else { throw corrupt("not a Rampart keychain item (bad magic)") }
        guard bytes[4] == version else { throw corrupt("unknown format version \(bytes[4])") }
        guard Int(bytes[5]) < KeychainAccessibility.allCases.count else { throw corrupt("unknown accessibility code \(bytes[5])") }
        let accessibility = KeychainAccessibility.allCases[Int(bytes[5])]
        guard let kind = KeyKind(rawValue: bytes[6]), bytes[7] == 0 else { throw corrupt("unknown key kind \(bytes[6])") }
        guard kind == (accessibility.isThisDeviceOnly ? .device : .folder) else {
            throw corrupt("key kind does not match the accessibility")
        }
        let folderCheck = Array(bytes[8..<24])
        let deviceCheck = Array(bytes[24..<40])
        let addressLength = Int(bytes[40]) << 8 | Int(bytes[41])
        let headerEnd = fixed + addressLength
        guard bytes.count >= headerEnd + nonceLength + tagLength else { throw corrupt("the file is truncated (\(bytes.count) bytes)") }
        guard let id = decodeAddress(Array(bytes[fixed..<headerEnd])) else { throw corrupt("the stored address is malformed") }
        if let expected, expected != id {
            throw corrupt("the file holds the item \(id), not this one (a renamed or swapped file)")
        }
        return KeychainItemFile(
            accessibility: accessibility, keyKind: kind, folderCheck: folderCheck, deviceCheck: deviceCheck,
            id: id, header: Array(bytes[0..<headerEnd]),
            nonce: Array(bytes[headerEnd..<(headerEnd + nonceLength)]),
            sealed: Array(bytes[(headerEnd + nonceLength)...]))
    }

    /// Opens the value. - Throws: ``KeychainError/corruptItem(_:reason:)`` when authentication fails.
    func open(using key: SymmetricKey) throws -> SecretBytes {
        let ciphertext = sealed.dropLast(Self.tagLength)
        let tag = sealed.suffix(Self.tagLength)
        do {
            let box = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
            var plaintext = try AES.GCM.open(box, using: key, authenticating: header)
            defer { plaintext.withUnsafeMutableBytes { SecretBytes.zeroize($0) } }
            return SecretBytes(copying: plaintext)
        } catch {
            throw KeychainError.corruptItem(id, reason: "authentication failed (the file was truncated or modified)")
        }
    }

    private static func decodeAddress(_ bytes: [UInt8]) -> KeychainItemID? {
        var index = 0
        func take(_ count: Int) -> [UInt8]? {
            guard count >= 0, index + count <= bytes.count else { return nil }
            defer { index += count }
            return Array(bytes[index..<(index + count)])
        }
        func length16() -> Int? {
            guard let two = take(2) else { return nil }
            return Int(two[0]) << 8 | Int(two[1])
        }
        guard let groupLength = take(1).map({ Int($0[0]) }), let groupBytes = take(groupLength),
              let serviceLength = length16(), let serviceBytes = take(serviceLength),
              let accountLength = length16(), let accountBytes = take(accountLength),
              index == bytes.count,
              let group = String(validating: groupBytes, as: UTF8.self),
              let service = String(validating: serviceBytes, as: UTF8.self),
              let account = String(validating: accountBytes, as: UTF8.self),
              UserID.isValid(group), group.utf8.count <= 64 else { return nil }
        return KeychainItemID(service: service, account: account, accessGroup: KeychainAccessGroup(group))
    }

    private static func appendUInt16(_ out: inout [UInt8], _ value: Int) {
        out.append(UInt8((value >> 8) & 0xFF))
        out.append(UInt8(value & 0xFF))
    }
}
