import Foundation
import RampartServerTestSupport
import RampartTestSupport
import Testing

@Suite("rampart server (CLI)")
struct ServerCLITests {
    @Test func serverStartPublishesPortAndPinsAndStopsCleanlyOnSIGTERM() throws {
        let home = try TemporaryHome("cli")
        let data = home.child("server")

        // No server yet: `info` says so with the "not found" exit code.
        let none = try CLITool.rampart.run(["server", "info", "--data", data.path])
        #expect(none.status == 6, "\(none.stderr)")

        let server = try ServerProcess(data: data)
        let info = try CLITool.rampart.run(["server", "info", "--data", data.path])
        #expect(info.status == 0, "\(info.stderr)")
        let json = try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any]
        let port = try #require(json?["port"] as? Int)
        let pins = try #require(json?["pins"] as? [String])
        #expect(port > 0 && pins.count == 2)
        #expect((json?["pid"] as? Int).map(Int32.init) == server.child.processIdentifier)

        server.stop()  // SIGTERM
        #expect(server.child.process.terminationReason == .exit && server.child.process.terminationStatus == 0,
                "\(server.child.stderr)")
        let printed = server.child.stdout
        #expect(printed.contains("127.0.0.1:\(port)"))
        #expect(printed.contains(pins[0]) && printed.contains(pins[1]))
        #expect(!FileManager.default.fileExists(atPath: server.infoFile.path), "server.json is removed at stop")
    }
}
