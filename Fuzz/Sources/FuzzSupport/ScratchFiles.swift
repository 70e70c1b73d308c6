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
        writeFile(bytes, to: url)
        return url
    }

    /// Writes `bytes` to `url` (created or truncated, mode 0600) with plain POSIX calls
    /// (Foundation's atomic writes cost far more than the code under test).
    public static func writeFile(_ bytes: [UInt8], to url: URL) {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { Fuzz.violation("scratch", "cannot create \(url.path): errno \(errno)") }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            guard n > 0 else { Fuzz.violation("scratch", "cannot write \(url.path): errno \(errno)") }
            offset += n
        }
    }
}
