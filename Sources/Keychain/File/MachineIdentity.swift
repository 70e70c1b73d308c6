import Foundation

/// The identity of this machine, read from the systemd/D-Bus machine-id file.
///
/// Trust-model row: **device backups (low)** — "keychain items bound to this device". The
/// ``FileKeychain`` derives the key of this-device-only items from this identity, so a copy of
/// the keychain folder on another machine cannot decrypt them.
///
/// The machine-id is not a secret (it is world-readable on this machine); what it gives is a
/// value that is *different on another machine*. See <doc:FileKeychainFormat> for what this
/// does and does not stop.
public struct MachineIdentity: Sendable, Equatable {
    /// The files tried in order; the first readable, non-empty one wins.
    public let sources: [URL]

    /// The standard locations: `/etc/machine-id`, then `/var/lib/dbus/machine-id`.
    public static let system = MachineIdentity(sources: [
        URL(fileURLWithPath: "/etc/machine-id"),
        URL(fileURLWithPath: "/var/lib/dbus/machine-id"),
    ])

    /// Reads the identity from `sources` (tests point it at a file of their own to simulate
    /// "another machine").
    public init(sources: [URL]) {
        self.sources = sources
    }

    /// The longest identity file accepted (machine-id is 32 hex characters and a newline).
    static let maximumLength = 256

    /// The identity bytes (whitespace trimmed).
    /// - Throws: ``KeychainError/backendUnavailable(_:)`` when no source holds an identity:
    ///   this-device-only items cannot be stored or read without one.
    func read() throws -> [UInt8] {
        for source in sources {
            guard let handle = try? FileHandle(forReadingFrom: source) else { continue }
            defer { try? handle.close() }
            guard let data = try? handle.read(upToCount: Self.maximumLength + 1),
                  data.count <= Self.maximumLength else { continue }
            let trimmed = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if !trimmed.isEmpty { return Array(trimmed.utf8) }
        }
        let tried = sources.map(\.path).joined(separator: ", ")
        throw KeychainError.backendUnavailable(
            "no machine identity found (tried \(tried)); this-device-only items need one. Run `systemd-machine-id-setup` or `dbus-uuidgen --ensure`.")
    }
}
