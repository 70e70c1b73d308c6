import Foundation

/// Which TPM to talk to: a TCTI configuration string of the TPM 2.0 Software Stack.
///
/// Trust-model row: **secure hardware (high)** — names the one place the hardware protector
/// trusts. Chosen from `RAMPART_TPM_TCTI` (e.g. `swtpm:host=127.0.0.1,port=2321` for a
/// software TPM, `device:/dev/tpmrm0` for the kernel resource manager), else the first device
/// node that exists: `/dev/tpmrm0`, then `/dev/tpm0`.
public struct TPMConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// The environment variable that selects the TCTI.
    public static let environmentVariable = "RAMPART_TPM_TCTI"
    /// Device nodes tried, in order, when the variable is unset.
    public static let deviceNodes = ["/dev/tpmrm0", "/dev/tpm0"]

    /// The TCTI configuration string, or nil when no TPM was found.
    public let tcti: String?
    /// Why `tcti` was chosen, or why none was found.
    public let origin: String

    /// An explicit TCTI, e.g. `swtpm:host=127.0.0.1,port=2321`.
    public init(tcti: String) {
        self.tcti = tcti
        self.origin = "configured"
    }

    private init(tcti: String?, origin: String) {
        self.tcti = tcti
        self.origin = origin
    }

    /// Reads `RAMPART_TPM_TCTI`, else looks for a TPM device node.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment,
                                       fileExists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) -> TPMConfiguration {
        if let value = environment[environmentVariable]?.trimmingCharacters(in: .whitespaces), !value.isEmpty {
            return TPMConfiguration(tcti: value, origin: "from \(environmentVariable)")
        }
        if let node = deviceNodes.first(where: fileExists) {
            return TPMConfiguration(tcti: "device:\(node)", origin: "device node \(node)")
        }
        return TPMConfiguration(tcti: nil, origin: "no \(deviceNodes.joined(separator: " or ")) and \(environmentVariable) unset")
    }

    public var description: String { tcti.map { "\($0) (\(origin))" } ?? origin }
}

/// TPM 2.0 response codes the hardware protector tells apart (TPM 2.0 Part 2, §6.6).
///
/// Trust-model row: **secure hardware (high)** — telling a counted wrong PIN (0x98e) from a
/// lockout (0x921) from a blob of another TPM is what lets the protector report each clearly.
public enum TPMResponseCode {
    /// The authorization HMAC check failed and the DA counter was incremented (format 1).
    public static let authFail: UInt32 = 0x08E
    /// Authorization failure without DA implications (format 1).
    public static let badAuth: UInt32 = 0x0A2
    /// Integrity check failed (format 1): e.g. a private blob from another TPM.
    public static let integrity: UInt32 = 0x09F
    /// The TPM is in DA lockout (warning 0x921).
    public static let lockout: UInt32 = 0x921
    /// Out of object / session memory (0x902, 0x903): transient objects were not flushed.
    public static let objectMemory: UInt32 = 0x902

    /// The TPM error without the TSS layer and, for format-1 codes, without the handle,
    /// session or parameter number: 0x98e (session 1) becomes 0x08e.
    public static func base(_ rc: UInt32) -> UInt32 {
        let tpm = rc & 0xFFFF
        if tpm & 0x80 != 0 { return tpm & 0xBF }
        return tpm
    }

    /// Whether `rc` came from the TPM itself (TSS layer 0), not from the software stack.
    public static func isFromTPM(_ rc: UInt32) -> Bool { rc >> 16 == 0 }

    public static func hex(_ rc: UInt32) -> String { "0x" + String(rc, radix: 16) }
}
