import Foundation
import RampartServer
import RampartServerTestSupport
import RampartTestSupport
import Testing

/// The user's path through every protector, with a real TPM 2.0 (a private swtpm), through the agent and in this process.
///
/// Trust-model rows **secure hardware (high)** and **keychain (low)**: `protect` keeps only the
/// protection the user chose and says what it removed; the hardware key opens the account in
/// the agent as in a command (the agent is assembled by the same composition root); with
/// PIN + hardware no protector without the PIN is left, so a locked account does not open
/// without the PIN, and a wrong PIN counts.
@Suite("protectors, end to end with swtpm, through the agent and in-process", .serialized)
struct ProtectorPolicyEndToEndTests {
    static let pin = "135792"
    static let hardwarePIN = "864213"

    @Test func theChosenProtectorIsTheOnlyOneAndTheHardwareKeyWorksThroughTheAgent() async throws {
        let world = try EndToEndWorld()
        let server = try await world.startServer()
        defer { server.stopInBackground() }
        let tpm = try await SoftwareTPM.start()
        defer { BackgroundCleanup.start(named: "swtpm-remove") { tpm.stop(); tpm.remove() } }
        var env = world.environment
        env["RAMPART_TPM_TCTI"] = tpm.tcti
        func rampart(_ arguments: [String], stdin: String? = nil) async throws -> CLIResult {
            try await CLITool.rampart.run(arguments + ["--user", "demo"], stdin: stdin, environment: env)
        }
        world.folder.runsAtEnd(.rampart, ["agent", "stop", "--user", "demo", "--home", world.home.path])
        func protectors() async throws -> String {
            let status = try await rampart(["status"])
            return status.stdout.split(separator: "\n").first { $0.hasPrefix("protectors:") }.map(String.init) ?? status.stdout
        }

        let info = world.serverData.appendingPathComponent(EmbeddedServer.infoFileName).path
        #expect(try await world.login(DemoAccounts.demo, user: "demo", serverInfo: info).status == 0)

        // PIN, then none, then PIN: each step keeps only the choice and says what went.
        let pin = try await rampart(["protect", "--pin", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(pin.status == 0, "\(pin.stderr)")
        #expect(pin.stdout.contains("Removed protectors: none"), "\(pin.stdout)")
        await #expect(try protectors() == "protectors:  pin")
        let none = try await rampart(["protect", "--none", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(none.status == 0, "\(none.stderr)")
        #expect(none.stdout.contains("Removed protectors: pin"), "\(none.stdout)")
        await #expect(try protectors() == "protectors:  none")
        let pinAgain = try await rampart(["protect", "--pin", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(pinAgain.status == 0 && pinAgain.stdout.contains("Removed protectors: none"), "\(pinAgain.stdout)\(pinAgain.stderr)")
        await #expect(try protectors() == "protectors:  pin")

        // Hardware alone (the current PIN first): the PIN-only envelope goes.
        let hardware = try await rampart(["protect", "--hardware", "--pin-stdin"], stdin: "\(Self.pin)\n")
        #expect(hardware.status == 0, "\(hardware.stderr)")
        #expect(hardware.stdout.contains("Removed protectors: pin"), "\(hardware.stdout)")
        await #expect(try protectors() == "protectors:  hardware")

        // Through the agent: unlock with no secret, then sync, list and read there; lock.
        let unlock = try await rampart(["unlock"])
        #expect(unlock.status == 0, "\(unlock.stderr)")
        #expect(unlock.stdout.contains("in the agent"), "\(unlock.stdout)")
        let sync = try await rampart(["sync"])
        #expect(sync.status == 0, "\(sync.stderr)")
        let list = try await rampart(["list"])
        #expect(list.status == 0 && list.stdout.contains("Northwind"), "\(list.stderr)")
        let id = try #require(messageID(in: list.stdout, subject: "Northwind"), "\(list.stdout)")
        let read = try await rampart(["read", id])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(try await rampart(["lock"]).status == 0)
        #expect(try await rampart(["status"]).stdout.contains("state:       locked"))
        // In this process: the TPM opens the key for one command, no PIN asked.
        let inProcess = try await rampart(["list"])
        #expect(inProcess.status == 0 && inProcess.stdout.contains("Northwind"), "\(inProcess.stderr)")

        // Hardware, then PIN + hardware: only hardwarePIN is left.
        let both = try await rampart(["protect", "--pin", "--hardware", "--pin-stdin"], stdin: "\(Self.hardwarePIN)\n")
        #expect(both.status == 0, "\(both.stderr)")
        #expect(both.stdout.contains("Removed protectors: hardware"), "\(both.stdout)")
        await #expect(try protectors() == "protectors:  hardwarePIN")

        // Locked, it does not open without the PIN: not in this process, not in the agent.
        #expect(try await rampart(["list"]).status == 3)
        #expect(try await rampart(["sync"]).status == 3)
        let noPIN = try await rampart(["unlock"], stdin: "")
        #expect(noPIN.status != 0, "\(noPIN.stdout)")
        #expect(try await rampart(["status"]).stdout.contains("state:       locked"))

        // A wrong PIN counts, through the agent and in this process; the right one opens.
        let wrong = try await rampart(["unlock", "--pin-stdin"], stdin: "000000\n")
        #expect(wrong.status == 4, "\(wrong.stdout)\(wrong.stderr)")
        #expect(try await rampart(["status"]).stdout.contains("failed PINs: 1 of"))
        let wrongHere = try await rampart(["list", "--pin-stdin"], stdin: "000000\n")
        #expect(wrongHere.status == 4, "\(wrongHere.stdout)\(wrongHere.stderr)")
        #expect(try await rampart(["status"]).stdout.contains("failed PINs: 2 of"))
        let right = try await rampart(["unlock", "--pin-stdin"], stdin: "\(Self.hardwarePIN)\n")
        #expect(right.status == 0, "\(right.stderr)")
        #expect(try await rampart(["status"]).stdout.contains("failed PINs: 0 of"))
        let afterUnlock = try await rampart(["list"])
        #expect(afterUnlock.status == 0 && afterUnlock.stdout.contains("Northwind"), "\(afterUnlock.stderr)")
        #expect(try await rampart(["lock"]).status == 0)
        let rightHere = try await rampart(["list", "--pin-stdin"], stdin: "\(Self.hardwarePIN)\n")
        #expect(rightHere.status == 0 && rightHere.stdout.contains("Northwind"), "\(rightHere.stderr)")
    }
}
