import FileVault
import Foundation
import RampartCore

/// Erases the cleartext files of a user's previews (`read --open` documents, attachment and
/// drive previews): every `CleartextLease` lives in the user's vault preview area, and what
/// older versions left under `<home>/client/<user>/leases` is swept the same way.
///
/// Trust-model row **cleartext files (critical)**: no cleartext outlives a lock. The sweep runs
/// - at `rampart lock` and when the agent locks a user (explicit lock, autolock, stop, logout
///   or wipe seen by the agent), with `includingLive`: even a preview still open in a viewer
///   loses its file;
/// - at the start of every account command, without `includingLive`: what a process killed by
///   `SIGKILL` left (its session lock is free) is removed before anything else runs.
public enum CleartextSweep {
    /// The preview folders of `user` under `environment`'s home.
    public static func previewRoots(environment: RampartEnvironment, user: UserID) -> [URL] {
        [Vault.previewsFolder(root: Vault.defaultRoot(environment: environment), user: user),
         ClientFiles(environment: environment).directory(for: user).appendingPathComponent("leases", isDirectory: true)]
    }

    /// Sweeps every preview folder of `user`. Returns how many leases (or crashed sessions)
    /// were removed.
    @discardableResult
    public static func sweep(environment: RampartEnvironment, user: UserID, includingLive: Bool) -> Int {
        previewRoots(environment: environment, user: user).reduce(0) { count, root in
            count + PreviewArea.sweep(root, includingLive: includingLive)
        }
    }
}
