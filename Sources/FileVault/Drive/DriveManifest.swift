import Crypto
import Foundation
import RampartCore

/// The identifier of a drive file in the block store (also its folder name).
public struct DriveFileID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// Validates an identifier (1–128 characters of `[A-Za-z0-9._-]`).
    /// - Throws: ``FileVaultError/invalidIdentifier(_:)``.
    public init(_ rawValue: String) throws {
        try VaultIdentifier.validate(rawValue)
        guard !rawValue.hasPrefix(".") else { throw FileVaultError.invalidIdentifier(rawValue) }
        self.rawValue = rawValue
    }

    /// A fresh random identifier.
    public static func random() -> DriveFileID {
        // A UUID string always validates.
        try! DriveFileID(UUID().uuidString.lowercased())
    }

    public var description: String { rawValue }
}

/// The authenticated manifest of a drive file (format version 1).
///
/// ```
/// file: "RVM1" | HMAC-SHA256 (32) | JSON body
/// MAC  = HMAC(MainKey sub-key "filevault.drive.manifest.v1"[user],
///             AD("rampart.filevault.drive.manifest.v1", user, file id) | JSON body)
/// ```
/// The body lists the SHA-256 of every sealed block (in order), the plaintext length and block
/// size, the per-file content key wrapped by a MainKey sub-key, the sealed node name and the
/// hash of the sealed thumbnail. Binding the file id into the MAC stops a manifest from being
/// moved to another file.
struct DriveManifest: Codable, Sendable {
    static let magic = Data("RVM1".utf8)
    var version: UInt8 = 1
    var fileID: String
    var blockSize: Int
    var plaintextLength: Int64
    var blockHashes: [Data]
    var wrappedContentKey: Data
    var sealedName: Data
    var thumbnailHash: Data?

    var blockCount: Int { blockHashes.count }

    static func macInput(user: UserID, fileID: DriveFileID, body: Data) -> Data {
        var ad = AssociatedData("rampart.filevault.drive.manifest.v1")
        ad.append(user.rawValue)
        ad.append(fileID.rawValue)
        return ad.bytes + body
    }

    func encoded(user: UserID, fileID: DriveFileID, key: SymmetricKey) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = try encoder.encode(self)
        let mac = HMAC<SHA256>.authenticationCode(for: Self.macInput(user: user, fileID: fileID, body: body), using: key)
        return Self.magic + Data(mac) + body
    }

    /// Verifies and decodes a stored manifest.
    /// - Throws: ``FileVaultError/manifestTampered(file:)``, ``FileVaultError/unsupportedVersion(_:)``.
    static func decode(_ data: Data, user: UserID, fileID: DriveFileID, key: SymmetricKey) throws -> DriveManifest {
        guard data.count > 36, data.prefix(4) == magic else { throw FileVaultError.manifestTampered(file: fileID.rawValue) }
        let mac = data.subdata(in: (data.startIndex + 4)..<(data.startIndex + 36))
        let body = data.subdata(in: (data.startIndex + 36)..<data.endIndex)
        guard HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: macInput(user: user, fileID: fileID, body: body), using: key) else {
            throw FileVaultError.manifestTampered(file: fileID.rawValue)
        }
        guard let manifest = try? JSONDecoder().decode(DriveManifest.self, from: body) else {
            throw FileVaultError.manifestTampered(file: fileID.rawValue)
        }
        guard manifest.version == 1 else { throw FileVaultError.unsupportedVersion(manifest.version) }
        guard manifest.fileID == fileID.rawValue, manifest.blockSize > 0, manifest.plaintextLength >= 0,
              manifest.blockHashes.count == DriveBlockFormat.blockCount(length: manifest.plaintextLength, blockSize: manifest.blockSize),
              manifest.blockHashes.allSatisfy({ $0.count == SHA256.byteCount })
        else { throw FileVaultError.manifestTampered(file: fileID.rawValue) }
        return manifest
    }
}
