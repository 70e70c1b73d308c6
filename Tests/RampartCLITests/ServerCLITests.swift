import Foundation
import Testing

@Suite("rampart server (CLI)")
struct ServerCLITests {
    @Test func serverStartPublishesPortAndPinsAndStopsCleanlyOnSIGTERM() async throws {
        let home = try temporaryHome()
        defer { try? FileManager.default.removeItem(at: home) }
        let data = home.appendingPathComponent("server")

        // No server yet: `info` says so with the "not found" exit code.
        let none = try RampartBinary.run(["server", "info", "--data", data.path])
        #expect(none.status == 6, "\(none.stderr)")

        let process = Process()
        process.executableURL = RampartBinary.url
        process.arguments = ["server", "start", "--data", data.path, "--port", "0"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = Pipe()
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        let infoFile = data.appendingPathComponent("server.json")
        var waited = 0
        while !FileManager.default.fileExists(atPath: infoFile.path), waited < 600, process.isRunning {
            try await Task.sleep(for: .milliseconds(200))
            waited += 1
        }
        let info = try RampartBinary.run(["server", "info", "--data", data.path])
        #expect(info.status == 0, "\(info.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any]
        let port = try #require(json?["port"] as? Int)
        let pins = try #require(json?["pins"] as? [String])
        #expect(port > 0 && pins.count == 2)
        #expect((json?["pid"] as? Int).map(Int32.init) == process.processIdentifier)

        process.terminate()  // SIGTERM
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(printed.contains("127.0.0.1:\(port)"))
        #expect(printed.contains(pins[0]) && printed.contains(pins[1]))
        #expect(!FileManager.default.fileExists(atPath: infoFile.path), "server.json is removed at stop")
    }
}
