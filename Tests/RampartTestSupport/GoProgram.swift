import Foundation

/// A Go program of the project's `scripts/` folder (a `main.go` and its `go.mod`) built as a
/// reference peer: in GOPATH mode, against the Go sources Debian installs in `/usr/share/gocode`
/// (GopenPGP, `golang.org/x/mod`…), so nothing is downloaded. Each program is built once per test
/// process, in a temporary GOPATH removed when the process exits.
public enum GoProgram {
    /// Debian's Go sources (the second GOPATH entry).
    public static let gocode = "/usr/share/gocode"

    /// The built program of `scripts/<folder>`, or why it could not be built: Go missing, a
    /// source package missing (`requires`: a folder under `gocode/src` and its Debian package),
    /// or `go build` failing.
    public static func executable(folder: String, requires: (path: String, package: String)) throws -> URL {
        try lock.withLock {
            if let built = builds[folder] { return try built.get() }
            let result = Result { try build(folder: folder, requires: requires) }
            builds[folder] = result
            return try result.get()
        }
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var builds: [String: Result<URL, any Error>] = [:]
    nonisolated(unsafe) private static var folders: [String] = []

    private static func build(folder: String, requires: (path: String, package: String)) throws -> URL {
        let name = URL(fileURLWithPath: folder).lastPathComponent
        guard FileManager.default.fileExists(atPath: "\(gocode)/src/\(requires.path)") else {
            throw TestSupportError.goProgramUnavailable("\(gocode)/src/\(requires.path) is missing (Debian package \(requires.package))")
        }
        let searched = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin", "/usr/lib/go/bin"]
        guard let go = searched.map({ URL(fileURLWithPath: $0).appendingPathComponent("go") })
            .first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw TestSupportError.goProgramUnavailable("go is not installed (Debian package golang-go)")
        }
        let gopath = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-\(name)-\(UUID().uuidString.prefix(8))")
        if folders.isEmpty {
            atexit { for folder in GoProgram.folders { try? FileManager.default.removeItem(atPath: folder) } }
        }
        folders.append(gopath.path)
        let package = gopath.appendingPathComponent("src/rampart.invalid/\(name)")
        try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
        let source = BuiltExecutable.packageRoot.appendingPathComponent("scripts").appendingPathComponent(folder)
        for file in ["main.go", "go.mod"] {
            try FileManager.default.copyItem(at: source.appendingPathComponent(file), to: package.appendingPathComponent(file))
        }
        let binary = gopath.appendingPathComponent(name)
        var environment = ["GO111MODULE": "off", "GOPATH": "\(gopath.path):\(gocode)", "GOFLAGS": "", "GOPROXY": "off", "CGO_ENABLED": "0"]
        let inherited = ProcessInfo.processInfo.environment
        if inherited["GOCACHE"] == nil, inherited["XDG_CACHE_HOME"] == nil, inherited["HOME"] == nil {
            environment["GOCACHE"] = gopath.appendingPathComponent("cache").path
        }
        let result = try CLITool(path: go, environment: environment)
            .run(["build", "-o", binary.path, "rampart.invalid/\(name)"], timeout: .seconds(600))
        guard result.status == 0 else {
            throw TestSupportError.goProgramUnavailable("`go build` of scripts/\(folder) failed: \(result.stderr)")
        }
        return binary
    }
}
