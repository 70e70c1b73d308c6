// swift-tools-version: 6.1
//
// Rampart's coverage-guided fuzz targets (libFuzzer + AddressSanitizer).
//
// A package of its own, so that the normal build and tests never need the fuzzer runtime. Each
// executable target is one libFuzzer target (`@_cdecl("LLVMFuzzerTestOneInput")`, no `main`:
// libFuzzer provides it), built only by `scripts/fuzz.sh`:
//
//     swift build -c release --package-path Fuzz --scratch-path .build-fuzz \
//         -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
//
// See docs/fuzzing.md for the targets, their oracles and the results of long runs.
import Foundation
import PackageDescription

// A path dependency is named by its folder (the clone's name), not by the root package's name.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
let rampart = root.lastPathComponent

func rampartProduct(_ name: String) -> Target.Dependency { .product(name: name, package: rampart) }

let swiftSettings: [SwiftSetting] = [.swiftLanguageMode(.v6)]
let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")

/// Fuzz target name → the Rampart products it exercises.
let fuzzTargets: [(String, [Target.Dependency])] = [
    ("fuzz-html5", [rampartProduct("HTML5")]),
    ("fuzz-sanitizer", [rampartProduct("MailSafety"), rampartProduct("HTML5"), rampartProduct("RampartTestSupport")]),
    ("fuzz-css", [rampartProduct("MailSafety"), rampartProduct("HTML5"), rampartProduct("RampartTestSupport")]),
    ("fuzz-mime", [rampartProduct("MIME")]),
    ("fuzz-mbox", [rampartProduct("MIME")]),
    ("fuzz-push", [rampartProduct("PushCrypto"), rampartProduct("RampartCore"), crypto]),
    ("fuzz-vault", [rampartProduct("FileVault"), rampartProduct("RampartCore"), crypto]),
    ("fuzz-sealed", [rampartProduct("SealedStore"), rampartProduct("RampartCore"), crypto]),
    ("fuzz-keychain", [rampartProduct("Keychain"), rampartProduct("RampartCore")]),
    ("fuzz-agentwire", [rampartProduct("RampartAgent")]),
    ("fuzz-api", [rampartProduct("RampartAPI"), rampartProduct("MailboxCrypto"), rampartProduct("OpenPGP"), rampartProduct("RampartCore"), crypto]),
    ("fuzz-openpgp", [rampartProduct("OpenPGP"), rampartProduct("RampartCore")]),
    ("fuzz-srp", [rampartProduct("SRP"), rampartProduct("RampartClient"), rampartProduct("RampartServer"), rampartProduct("RampartAPI"),
                  rampartProduct("OpenPGP"), rampartProduct("RampartCore"), crypto]),
    ("fuzz-pgpmime", [rampartProduct("PGPMIME"), rampartProduct("MIME"), rampartProduct("OpenPGP"), rampartProduct("RampartCore")]),
    ("fuzz-imap", [rampartProduct("IMAPServer")]),
    ("fuzz-smtp", [rampartProduct("SMTPServer")]),
    ("fuzz-tlog", [rampartProduct("TransparencyLog")]),
    ("fuzz-signup", [rampartProduct("RampartServer"), rampartProduct("MailboxCrypto"), rampartProduct("RampartAPI"), rampartProduct("OpenPGP"),
                     rampartProduct("SRP"), rampartProduct("RampartCore")]),
]

var targets: [Target] = [
    // Shared helpers and the sanitizer's safety oracle (used by the sanitizer and CSS targets).
    // RampartTestSupport: the options a sanitizer input's first byte picks, shared with the tests.
    .target(name: "FuzzSupport", dependencies: [rampartProduct("HTML5"), rampartProduct("MailSafety"), rampartProduct("RampartTestSupport")],
            swiftSettings: swiftSettings),
]
for (name, dependencies) in fuzzTargets {
    targets.append(.executableTarget(name: name, dependencies: ["FuzzSupport"] + dependencies,
                                     path: "Sources/\(name)", swiftSettings: swiftSettings))
}

let package = Package(
    name: "RampartFuzz",
    platforms: [.macOS(.v14)],
    products: fuzzTargets.map { .executable(name: $0.0, targets: [$0.0]) },
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
    ],
    targets: targets
)
