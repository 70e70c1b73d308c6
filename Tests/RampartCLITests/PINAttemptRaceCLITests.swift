import Foundation
import RampartTestSupport
import Testing

/// The failed-PIN counter under attack by many processes at once: counting an attempt, trying
/// the PIN and recording the result must be one step across processes, or a guesser who starts
/// 50 `key unlock` processes together gets 50 tries out of a budget of 10.
@Suite("PIN attempts across processes (CLI)")
struct PINAttemptRaceCLITests {
    @Test func fiftyParallelWrongPINsGetAtMostTenTriesAndNoneAfterTheWipe() async throws {
        let home = try await keyLabHome("race")
        var run = try await rampartDev.run(["--home", home.path, "key", "protect", "--pin-stdin"], stdin: "482913\n", environment: fastPINDerivation)
        #expect(run.status == 0, "\(run.stderr)")

        let children = try (0..<50).map { index in
            try rampartDev.spawn(["--home", home.path, "key", "unlock", "--pin-stdin"],
                                 stdin: String(format: "%06d\n", 100_000 + index), environment: fastPINDerivation)
        }
        var results: [CLIResult] = []
        for child in children { results.append(try await child.result(timeout: .seconds(240))) }
        let statuses = results.map(\.status)
        let wrong = results.filter { $0.status == 4 }
        let wiped = results.filter { $0.status == 5 }
        let gone = results.filter { $0.status == 6 }
        // Each evaluated try says how many remain; across processes they must count down, never repeat.
        let attemptsLeft = wrong.compactMap { result -> Int? in
            guard let range = result.stderr.range(of: #"Wrong PIN\. (\d+) attempts? left"#, options: .regularExpression) else { return nil }
            return Int(result.stderr[range].split(separator: " ")[2])
        }
        #expect(wrong.count + wiped.count <= 10, "tries evaluated: \(wrong.count) wrong + \(wiped.count) wiping, statuses \(statuses)")
        #expect(wrong.count == 9, "statuses \(statuses)")
        #expect(wiped.count == 1, "statuses \(statuses)")
        #expect(gone.count == 40, "after the wipe no try is evaluated: statuses \(statuses)")
        #expect(Set(attemptsLeft) == Set(1...9) && attemptsLeft.count == 9, "attempts left reported: \(attemptsLeft.sorted())")
        #expect(statuses.allSatisfy { [4, 5, 6].contains($0) }, "unexpected statuses \(statuses): \(results.map(\.stderr))")

        run = try await rampartDev.run(["--home", home.path, "key", "unlock", "--pin-stdin"], stdin: "482913\n", environment: fastPINDerivation)
        #expect(run.status == 5 || run.status == 6, "the right PIN after the wipe opens nothing: \(run.status) \(run.stderr)")
        #expect(!run.stdout.contains("Unlocked"))
    }
}
