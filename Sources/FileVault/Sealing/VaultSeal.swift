import Crypto
import Foundation
import RampartCore

/// Associated data for the vault's AEAD seals: a domain label followed by length-prefixed
/// parts, so that no two different lists of parts give the same bytes.
struct AssociatedData {
    private(set) var bytes = Data()

    init(_ label: String) { append(label) }

    mutating func append(_ text: String) { append(Data(text.utf8)) }

    mutating func append(_ data: Data) {
        var length = UInt32(data.count).bigEndian
        withUnsafeBytes(of: &length) { bytes.append(contentsOf: $0) }
        bytes.append(data)
    }

    mutating func append(_ number: UInt64) {
        var value = number.bigEndian
        append(withUnsafeBytes(of: &value) { Data($0) })
    }

    func appending(_ text: String) -> AssociatedData { var copy = self; copy.append(text); return copy }
    func appending(_ number: UInt64) -> AssociatedData { var copy = self; copy.append(number); return copy }
}

/// The MainKey sub-keys of the vault, each bound to its purpose and the user (and, for
/// attachments, to the attachment id).
enum VaultKeys {
    static func attachmentBlob(_ user: UserID, attachment: String) -> KeyPurpose {
        KeyPurpose("filevault.attachment.blob.v1", context: "\(user.rawValue)/\(attachment)")
    }
    static func attachmentIndex(_ user: UserID) -> KeyPurpose {
        KeyPurpose("filevault.attachment.index.v1", context: user.rawValue)
    }
    static func attachmentLookup(_ user: UserID) -> KeyPurpose {
        KeyPurpose("filevault.attachment.lookup.v1", context: user.rawValue)
    }
    static func driveContentKeyWrap(_ user: UserID) -> KeyPurpose {
        KeyPurpose("filevault.drive.contentkey.v1", context: user.rawValue)
    }
    static func driveManifest(_ user: UserID) -> KeyPurpose {
        KeyPurpose("filevault.drive.manifest.v1", context: user.rawValue)
    }
    static func driveNodeName(_ user: UserID) -> KeyPurpose {
        KeyPurpose("filevault.drive.nodename.v1", context: user.rawValue)
    }

    /// Runs `body` with the sub-key for `purpose`, and wipes the sub-key afterwards.
    /// Lock errors become ``FileVaultError/locked``.
    static func with<R>(_ provider: any MainKeyProvider, _ purpose: KeyPurpose,
                        _ body: (SymmetricKey) throws -> R) throws -> R {
        let derived: DerivedKey
        do {
            derived = try provider.currentMainKey().derivedKey(for: purpose)
        } catch {
            throw FileVaultError.wrap(error)
        }
        defer { derived.wipe() }
        do {
            return try derived.withSymmetricKey(body)
        } catch {
            throw FileVaultError.wrap(error)
        }
    }
}

/// One-shot AES-256-GCM seals (nonce ‖ ciphertext ‖ tag) for small values.
enum SmallSeal {
    static func seal(_ plaintext: some DataProtocol, key: SymmetricKey, ad: AssociatedData) throws -> Data {
        guard let combined = try AES.GCM.seal(plaintext, using: key, authenticating: ad.bytes).combined else {
            throw FileVaultError.io(path: "-", operation: "seal", errno: 0)
        }
        return combined
    }

    /// - Returns: the plaintext, or `nil` if authentication fails.
    static func open(_ combined: Data, key: SymmetricKey, ad: AssociatedData) -> Data? {
        guard let box = try? AES.GCM.SealedBox(combined: combined) else { return nil }
        return try? AES.GCM.open(box, using: key, authenticating: ad.bytes)
    }
}
