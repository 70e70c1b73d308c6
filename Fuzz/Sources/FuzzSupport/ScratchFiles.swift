import Foundation

/// A private folder for targets that read files back from disk (one per fuzzing process).
public enum ScratchFiles {
    public static let folder: URL = {
        let base = ProcessInfo.processInfo.environment["RAMPART_FUZZ_TMP"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory
        let url = base.appendingPathComponent("rampart-fuzz-\(getpid())", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        atexit { try? FileManager.default.removeItem(at: ScratchFiles.folder) }
        return url
    }()

    /// A fresh path (any earlier file of that name is removed).
    public static func path(_ name: String) -> URL {
        let url = folder.appendingPathComponent(name)
        unlink(url.path)
        return url
    }

    /// Writes `bytes` to a fresh file `name`.
    public static func write(_ bytes: [UInt8], _ name: String) -> URL {
        let url = path(name)
        _ = FileManager.default.createFile(atPath: url.path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
        return url
    }
}
