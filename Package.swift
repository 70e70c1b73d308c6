// swift-tools-version: 6.1
//
// Rampart: the client-side security core of an end-to-end encrypted mail and drive app.
//
// Layout: one library target per trust-model concern. Each module is declared in its own block
// below (search for "MARK: -"), which adds to `targets`, `products` and to the dependencies of the
// `rampart` executable. The core targets never depend on the CLI, the server or any UI.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

var products: [Product] = []
var targets: [Target] = []
/// Targets the `rampart` executable links.
var cliDependencies: [Target.Dependency] = []

let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
let cryptoExtras: Target.Dependency = .product(name: "_CryptoExtras", package: "swift-crypto")

// MARK: - RampartCore (issue 2): secrets, errors, clock, dependency injection
products.append(.library(name: "RampartCore", targets: ["RampartCore"]))
targets += [
    .target(name: "CRampartShims"),
    .target(name: "RampartCore", dependencies: ["CRampartShims", crypto], swiftSettings: swiftSettings),
    .testTarget(name: "RampartCoreTests", dependencies: ["RampartCore"], swiftSettings: swiftSettings),
]
cliDependencies.append("RampartCore")

// MARK: - Keychain (issue 2): keychain protocol and backends
products.append(.library(name: "Keychain", targets: ["Keychain"]))
targets += [
    .target(name: "Keychain", dependencies: ["RampartCore"], swiftSettings: swiftSettings),
    .testTarget(name: "KeychainTests", dependencies: ["Keychain"], swiftSettings: swiftSettings),
]
cliDependencies.append("Keychain")

// MARK: - Keymaker (issue 2): MainKey protectors, autolock, wipe
products.append(.library(name: "Keymaker", targets: ["Keymaker"]))
targets += [
    .target(name: "Keymaker", dependencies: ["RampartCore", "Keychain", crypto, cryptoExtras], swiftSettings: swiftSettings),
    .testTarget(name: "KeymakerTests", dependencies: ["Keymaker"], swiftSettings: swiftSettings),
]
cliDependencies.append("Keymaker")

// MARK: - HTML5 (issue 3): spec-exact HTML5 parser

// MARK: - MailSafety (issue 4): sanitizer, remote content, trackers, CSP

// MARK: - SealedStore (issue 5): sealed SQLite store

// MARK: - HardwareKeys (issue 6): TPM 2.0 / Secure Enclave protector

// MARK: - PushCrypto (issue 7): Web Push encryption

// MARK: - PinnedTransport (issue 8): certificate pinning

// MARK: - FileVault (issue 9): attachment cache and drive block store
products.append(.library(name: "FileVault", targets: ["FileVault"]))
targets += [
    .target(name: "FileVault",
            dependencies: ["RampartCore", crypto, .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: swiftSettings),
    .testTarget(name: "FileVaultTests", dependencies: ["FileVault", "rampart"], swiftSettings: swiftSettings),
]
cliDependencies.append("FileVault")

// MARK: - Server (issue 10): embedded local backend

// MARK: - rampart (the command-line tool)
products.append(.executable(name: "rampart", targets: ["rampart"]))
targets += [
    .executableTarget(
        name: "rampart",
        dependencies: cliDependencies + [
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ],
        swiftSettings: swiftSettings
    ),
]

let package = Package(
    name: "Rampart",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: products,
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    ],
    targets: targets
)
