import Foundation
import RampartTestSupport
import Testing

/// The file keychain's "bound to this device" rests on `/etc/machine-id`, which is not a
/// secret: the tool must say so where a user chooses the keychain and the protector.
@Suite("Device binding: the stated limit (CLI)")
struct DeviceBindingHelpTests {
    @Test func theHelpStatesTheMachineIDLimit() async throws {
        let help = try await CLITool.rampart.run(["protect", "--help"])
        #expect(help.status == 0)
        let text = help.stdout.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
        #expect(text.contains("/etc/machine-id, which is not a secret"), "\(help.stdout)")
        #expect(text.contains("only a PIN or the hardware protector keeps the MainKey from such a copy"), "\(help.stdout)")
        #expect(text.contains("whoever copies the home folder and that file has the key"), "\(help.stdout)")
    }
}
