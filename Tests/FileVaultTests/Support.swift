import Foundation
import RampartCore
@testable import FileVault

/// A fresh vault folder under the temporary directory, removed by ``remove()``.
struct TemporaryFolder {
    let url: URL
    init(_ label: String = "vault") {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-fv-\(label)-\(UUID().uuidString)")
    }
    func remove() { try? FileManager.default.removeItem(at: url) }
}
