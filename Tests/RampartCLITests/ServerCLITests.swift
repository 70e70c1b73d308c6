import Foundation
import RampartServerTestSupport
import RampartTestSupport
import Testing

@Suite("rampart server (CLI)")
struct ServerCLITests {
    @Test func serverStartPublishesPortAndPinsAndStopsCleanlyOnSIGTERM() async throws {
        let home = try TemporaryHome("cli")
        let data = home.child("server")

        // No server yet: `info` says so with the "not found" exit code.
        let none = try await CLITool.rampart.run(["server", "info", "--data", data.path])
        #expect(none.status == 6, "\(none.stderr)")

        let server = try ServerProcess(data: data)
        let info = try await CLITool.rampart.run(["server", "info", "--data", data.path])
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

    @Test func theSignUpChoiceIsKeptInTheDataFolderUntilTheOperatorChangesIt() async throws {
        let home = try TemporaryHome("cli-signup")
        let data = home.child("server")
        func signupLine(_ arguments: [String]) throws -> String {
            let server = try ServerProcess(data: data, arguments: ["--no-demo"] + arguments)
            server.stop()
            return server.child.stdout.split(separator: "\n").first { $0.hasPrefix("Sign-up: ") }.map(String.init) ?? server.child.stderr
        }
        let invited = "Sign-up: by invitation (rampart server invite) in @rampart.test"
        let open = "Sign-up: open to anyone in @rampart.test"
        #expect(try await signupLine([]) == invited)                        // closed by default
        #expect(try await signupLine(["--open-signup"]) == open)
        #expect(try await signupLine([]) == open)                           // kept across a restart
        let file = data.appendingPathComponent("signup.json")
        #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try await signupLine(["--no-open-signup"]) == invited)
        #expect(try await signupLine([]) == invited)
        // A damaged setting stops the start with a sentence that names the file and the way out.
        try Data("{open".utf8).write(to: file)
        let refused = try await CLITool.rampart.run(["server", "start", "--data", data.path, "--port", "0", "--no-demo"])
        #expect(refused.status != 0 && refused.stderr.contains("signup.json") && refused.stderr.contains("--no-open-signup"), "\(refused.stderr)")
        #expect(try await signupLine(["--no-open-signup"]) == invited)
    }
}
