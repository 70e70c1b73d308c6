import Foundation
import RampartCore
@testable import FileVault
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A fresh folder under the temporary directory; call ``remove()`` in a `defer`.
struct TemporaryFolder {
    let url: URL
    init(_ label: String = "vault") {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-fv-\(label)-\(UUID().uuidString)")
    }
    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// An unlocked session of `user` with a fresh random MainKey.
func unlockedSession(_ user: UserID = "alice") -> MainKeySession {
    let session = MainKeySession(userID: user)
    session.unlock(with: MainKey.generate())
    return session
}

/// Every regular file under `folder` (recursively), with its mode.
func allFiles(under folder: URL) -> [(url: URL, mode: mode_t)] {
    var result: [(URL, mode_t)] = []
    guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
    for name in names {
        let url = folder.appendingPathComponent(name)
        var info = stat()
        guard lstat(url.path, &info) == 0 else { continue }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            result += allFiles(under: url)
        } else {
            result.append((url, info.st_mode))
        }
    }
    return result
}

/// Every folder under `folder` (recursively, itself included), with its mode.
func allFolders(under folder: URL) -> [(url: URL, mode: mode_t)] {
    var info = stat()
    guard lstat(folder.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return [] }
    var result: [(URL, mode_t)] = [(folder, info.st_mode)]
    for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] {
        result += allFolders(under: folder.appendingPathComponent(name))
    }
    return result
}

/// Files under `folder` whose bytes (or name) contain `marker`.
func filesContaining(_ marker: String, under folder: URL) -> [String] {
    let needle = Data(marker.utf8)
    return allFiles(under: folder).compactMap { file in
        if file.url.path.contains(marker) { return file.url.path }
        guard let data = FileManager.default.contents(atPath: file.url.path) else { return nil }
        return data.range(of: needle) != nil ? file.url.path : nil
    }
}

/// Cleartext files in the preview area (lease folders), the lock files aside.
func leaseFiles(_ vault: Vault) -> [String] {
    allFiles(under: vault.previews.root).map(\.url.path).filter { !$0.hasSuffix(".owner.lock") && !$0.hasSuffix("CACHEDIR.TAG") }
}

func writeFile(_ data: Data, in folder: URL, name: String = UUID().uuidString) throws -> URL {
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let url = folder.appendingPathComponent(name)
    try data.write(to: url)
    return url
}

/// Deterministic pseudo-random bytes (xorshift), distinct per seed.
func pseudoRandomData(count: Int, seed: UInt64) -> Data {
    var state = seed | 1
    var bytes = [UInt8](repeating: 0, count: count)
    for index in 0..<count {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17
        bytes[index] = UInt8(truncatingIfNeeded: state)
    }
    return Data(bytes)
}
