import ArgumentParser
import RampartCLIKit
import Foundation
import HardwareKeys
import Keychain
import Keymaker
import RampartCore

/// `rampart bench …`: speed and memory measurements, each against a baseline measured in the
/// same run (never timed unit tests). Build with `-c release` for meaningful numbers.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure speed against a baseline in the same run (use a release build).",
        subcommands: BenchCommand.all
    )

    /// Every benchmark, one line per module.
    static let all: [any ParsableCommand.Type] = [
        BenchUnlock.self,
        HTML5Bench.self,
        BenchPinning.self,
        StoreBenchCommand.self,
        BenchSanitizeCommand.self,
        PushBenchmark.self,
        BenchVault.self,
        BenchMIME.self,
        BenchOpenPGP.self,
        SRPBench.self,
        BenchKeyLog.self,
        BridgeBench.self,
        ServerBench.self,
    ]
}

/// Milliseconds statistics over repeated runs.
struct Timing {
    var samples: [Double] = []

    mutating func measure(_ body: () throws -> Void) rethrows {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        samples.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
    }

    var median: Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    func percentile(_ p: Double) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }
}

func formatMillis(_ value: Double) -> String { String(format: "%.2f ms", value) }

/// `rampart bench unlock`: the PIN unlock path against its own KDF.
struct BenchUnlock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Time the scrypt KDF alone, the whole PIN unlock and the TPM unlocks (file keychain), in one run.",
        discussion: "The TPM variants (hardware, hardware + PIN) run when a TPM is found (RAMPART_TPM_TCTI, e.g. the swtpm of scripts/services/swtpm.sh, or /dev/tpmrm0).")

    @Option(help: "Number of unlocks to time.") var iterations = 9
    @Option(help: "Target KDF time in seconds for calibration.") var target = 0.25

    func run() async throws {
        try await reportingErrors {
            let home = FileManager.default.temporaryDirectory.appendingPathComponent("rampart-bench-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: home) }
            try PrivateFiles.ensurePrivateDirectory(home)
            let global = CompositionRoot.global(role: .bench, environment: RampartEnvironment(
                homeDirectory: home, settings: ["pin.kdf.seconds": String(target)]))
            let user = CompositionRoot.user("bench", in: global)
            let keymaker = user.keymaker
            try keymaker.createMainKey()
            let pin = SecretBytes(copying: Array("246810".utf8))
            try keymaker.activate(.pin, credential: .pin(pin))
            keymaker.lock()

            let stored = try global.keychain.read(Keymaker.envelopeItem("bench", .pin))
            let envelope = try stored.withUnsafeBytes { try WrappedKeyEnvelope.parse(Data($0)) }
            let parameters = try ScryptParameters.decode(envelope.parameters)

            var kdf = Timing()
            var unlock = Timing()
            for _ in 0..<iterations {
                try kdf.measure { _ = try parameters.deriveKey(pin: pin).wipe() }
                try unlock.measure { try keymaker.unlock(.pin(pin)) }
                keymaker.lock()
            }
            let overhead = unlock.median - kdf.median
            print("rampart bench unlock — PIN protector, \(global.keychain.backendName) keychain, \(iterations) runs")
            print("scrypt parameters:       N=2^\(parameters.logN) r=\(parameters.r) p=\(parameters.p) (calibrated to \(Int(target * 1000)) ms)")
            print("KDF alone (baseline):    median \(formatMillis(kdf.median)), max \(formatMillis(kdf.percentile(1)))")
            print("whole unlock:            median \(formatMillis(unlock.median)), max \(formatMillis(unlock.percentile(1)))")
            print("unlock / KDF ratio:      \(String(format: "%.3f", unlock.median / kdf.median))")
            print("overhead beyond the KDF: \(formatMillis(overhead)) (goal < 20 ms: \(overhead < 20 ? "met" : "NOT met"))")
            try benchHardware(global: global, pin: pin, pinUnlock: unlock)
        }
    }

    /// The same unlock through the TPM: *hardware* (no PIN) and *hardware + PIN* (the PIN as the
    /// sealed object's authorization), against the PIN-only unlock measured just before.
    private func benchHardware(global: GlobalContainer, pin: SecretBytes, pinUnlock: Timing) throws {
        let found = SecureHardware.found()
        guard SecureHardware.protectors().allSatisfy({ $0.availability().isAvailable }) else {
            print("TPM unlock:              not measured (\(found))")
            return
        }
        print("secure hardware:         \(found)")
        for (kind, credential) in [(ProtectorKind.hardware, UnlockCredential.none), (.hardwarePIN, .pin(pin))] {
            let user = CompositionRoot.user(try UserID(validating: "bench-\(kind.rawValue.lowercased())"), in: global)
            let keymaker = user.keymaker
            try keymaker.createMainKey()
            try keymaker.activate(kind, credential: credential)
            keymaker.lock()
            var timing = Timing()
            for _ in 0..<iterations {
                try timing.measure { try keymaker.unlock(credential) }
                keymaker.lock()
            }
            _ = keymaker.wipe(reason: .userRequest)
            let label = kind == .hardware ? "TPM (hardware) unlock:" : "TPM + PIN unlock:"
            print("\(label.padding(toLength: 25, withPad: " ", startingAt: 0))median \(formatMillis(timing.median)), max \(formatMillis(timing.percentile(1)))")
            print("  ratio to PIN-only:     \(String(format: "%.3f", timing.median / pinUnlock.median))")
        }
    }
}
