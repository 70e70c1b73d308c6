import Foundation
import RampartCore

/// What several server processes started on one data folder share, and the one lock that keeps
/// them from racing while they create it.
///
/// Trust-model row **transport (network), low trust — a person in the middle**: every process
/// must serve the same TLS key and sign the SRP modulus with the same modulus key, or a client
/// that pinned one process would refuse (or be told to re-pin for) another. The keys are made at
/// the first start; two processes starting together on a fresh folder would each make their own
/// and the last rename would win, leaving the first serving a key nobody pinned. So each start
/// takes an exclusive `flock` on `<data>/start.lock` from before it reads or creates the TLS
/// identity, the modulus key, the key log's key and the demo accounts until they exist, and the
/// next process finds and loads them. The kernel releases the lock when a process dies, so a
/// `kill -9` mid-start never blocks the next one.
enum SharedDataFolder {
    /// The lock file's name in the data folder.
    static let lockFileName = "start.lock"

    /// Waits (up to `timeout`) for the data folder's start lock and returns it held.
    /// - Throws: ``ServerError/startFailed(_:)`` when the lock file cannot be used or another
    ///   process holds it for longer than `timeout`.
    static func holdStartLock(_ data: URL, timeout: TimeInterval = 120) throws -> HeldFileLock {
        let lock = ExclusiveFileLock(url: data.appendingPathComponent(lockFileName))
        let deadline = Date().addingTimeInterval(timeout)
        do {
            while true {
                if let held = try lock.tryHolding() { return held }
                guard Date() < deadline else { break }
                usleep(20_000)
            }
        } catch {
            throw ServerError.startFailed("the start lock \(lock.url.path) cannot be used (\(error))")
        }
        throw ServerError.startFailed("another server process has held \(lock.url.path) for \(Int(timeout)) s while starting; "
            + "if it is stuck, stop it and start again")
    }
}
