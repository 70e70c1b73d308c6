// swift-tools-version: 6.1
//
// Rampart: the client-side security core of an end-to-end encrypted mail and drive app.
//
// Layout: one library target per trust-model concern, each declared in its own block below
// (search for "MARK: -") with its product and its tests. Every target lists, in one place, the
// modules it imports and nothing else; the few exceptions are executables a test runs as a
// user would (`rampart`, `rampart-dev`), listed so that they are built first, and said so. The
// core targets never depend on the CLI, the server or any UI.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

var products: [Product] = []
var targets: [Target] = []

// Products of the packages this one depends on, by the module name a target imports.
let crypto: Target.Dependency = .product(name: "Crypto", package: "swift-crypto")
let cryptoExtras: Target.Dependency = .product(name: "_CryptoExtras", package: "swift-crypto")
let grdb: Target.Dependency = .product(name: "GRDB", package: "GRDB.swift")
let argumentParser: Target.Dependency = .product(name: "ArgumentParser", package: "swift-argument-parser")
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let propertyBased: Target.Dependency = .product(name: "PropertyBased", package: "swift-property-based")
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
let nioPosix: Target.Dependency = .product(name: "NIOPosix", package: "swift-nio")
let nioHTTP1: Target.Dependency = .product(name: "NIOHTTP1", package: "swift-nio")
let nioTLS: Target.Dependency = .product(name: "NIOTLS", package: "swift-nio")
let nioConcurrencyHelpers: Target.Dependency = .product(name: "NIOConcurrencyHelpers", package: "swift-nio")
let nioSSL: Target.Dependency = .product(name: "NIOSSL", package: "swift-nio-ssl")
let x509: Target.Dependency = .product(name: "X509", package: "swift-certificates")
let asn1: Target.Dependency = .product(name: "SwiftASN1", package: "swift-asn1")
let hummingbird: Target.Dependency = .product(name: "Hummingbird", package: "hummingbird")
let hummingbirdTLS: Target.Dependency = .product(name: "HummingbirdTLS", package: "hummingbird")
let httpTypes: Target.Dependency = .product(name: "HTTPTypes", package: "swift-http-types")
let serviceLifecycle: Target.Dependency = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let postgresNIO: Target.Dependency = .product(name: "PostgresNIO", package: "postgres-nio")

// MARK: - RampartCore: secrets, errors, clock, dependency injection
products.append(.library(name: "RampartCore", targets: ["RampartCore"]))
targets += [
    .target(name: "CRampartShims"),
    .target(name: "RampartCore", dependencies: ["CRampartShims", crypto], swiftSettings: swiftSettings),
    .testTarget(name: "RampartCoreTests", dependencies: ["RampartCore"], swiftSettings: swiftSettings),
]

// MARK: - Keychain: keychain protocol and backends
products.append(.library(name: "Keychain", targets: ["Keychain"]))
targets += [
    // libsecret (Secret Service: GNOME Keyring, KWallet) on Linux; Debian: libsecret-1-dev.
    .systemLibrary(name: "CLibSecret", pkgConfig: "libsecret-1",
                   providers: [.apt(["libsecret-1-dev"]), .brew(["libsecret"])]),
    .target(name: "Keychain",
            dependencies: ["RampartCore", crypto, .target(name: "CLibSecret", condition: .when(platforms: [.linux]))],
            swiftSettings: swiftSettings),
    .testTarget(name: "KeychainTests", dependencies: ["Keychain", "RampartCore", "RampartTestSupport"], swiftSettings: swiftSettings),
]

// MARK: - Keymaker: MainKey protectors, autolock, wipe
products.append(.library(name: "Keymaker", targets: ["Keymaker"]))
targets += [
    .target(name: "Keymaker", dependencies: ["RampartCore", "Keychain", crypto, cryptoExtras], swiftSettings: swiftSettings),
    .testTarget(name: "KeymakerTests", dependencies: ["Keymaker", "Keychain", "RampartCore", crypto], swiftSettings: swiftSettings),
]

// MARK: - HTML5: spec-exact HTML5 parser
products.append(.library(name: "HTML5", targets: ["HTML5"]))
targets += [
    .target(name: "HTML5", swiftSettings: swiftSettings),
    .testTarget(name: "HTML5Tests", dependencies: ["HTML5", "RampartTestSupport"], swiftSettings: swiftSettings),
]

// MARK: - MailSafety: sanitizer, remote content, trackers, CSP
products.append(.library(name: "MailSafety", targets: ["MailSafety"]))
targets += [
    .target(name: "MailSafety", dependencies: ["HTML5", "RampartCore"], swiftSettings: swiftSettings),
    .testTarget(name: "MailSafetyTests", dependencies: ["MailSafety", "HTML5", "RampartTestSupport", propertyBased],
                resources: [.copy("Resources")], swiftSettings: swiftSettings),
]

// MARK: - SealedStore: sealed SQLite store
// Keymaker: the user container's MainKey provider the store opens with; Keychain: its rollback anchor.
products.append(.library(name: "SealedStore", targets: ["SealedStore"]))
targets += [
    .target(name: "SealedStore", dependencies: ["RampartCore", "Keychain", "Keymaker", crypto, grdb], swiftSettings: swiftSettings),
    .testTarget(name: "SealedStoreTests", dependencies: ["SealedStore", "RampartCore", "Keymaker", "RampartTestSupport", crypto, grdb],
                swiftSettings: swiftSettings),
]

// MARK: - HardwareKeys: TPM 2.0 / Secure Enclave protector
// CTSS2: the TPM 2.0 Software Stack (tpm2-tss ESYS + TCTI loader), Linux only (Debian libtss2-dev).
products.append(.library(name: "HardwareKeys", targets: ["HardwareKeys"]))
targets += [
    .systemLibrary(name: "CTSS2", pkgConfig: "tss2-esys", providers: [.apt(["libtss2-dev"])]),
    .target(name: "HardwareKeys",
            dependencies: ["RampartCore", "Keymaker", crypto, .target(name: "CTSS2", condition: .when(platforms: [.linux]))],
            swiftSettings: swiftSettings),
    .testTarget(name: "HardwareKeysTests", dependencies: ["HardwareKeys", "Keymaker", "Keychain", "RampartCore", "RampartTestSupport"],
                swiftSettings: swiftSettings),
]

// MARK: - PushCrypto: Web Push encryption
products.append(.library(name: "PushCrypto", targets: ["PushCrypto"]))
targets += [
    .target(name: "PushCrypto", dependencies: ["RampartCore", "Keychain", crypto], swiftSettings: swiftSettings),
    .testTarget(name: "PushCryptoTests", dependencies: ["PushCrypto", "Keychain", "RampartCore", "RampartTestSupport", crypto],
                swiftSettings: swiftSettings),
]

// MARK: - PinnedTransport: certificate pinning
// SwiftNIO, NIOSSL and swift-certificates live behind this module: its callers use its own
// request and response values (the client imports no NIO module).
products.append(.library(name: "PinnedTransport", targets: ["PinnedTransport"]))
targets += [
    .target(name: "PinnedTransport",
            dependencies: ["RampartCore", crypto, nioCore, nioPosix, nioHTTP1, nioTLS, nioConcurrencyHelpers, nioSSL, x509, asn1],
            swiftSettings: swiftSettings),
    .testTarget(name: "PinnedTransportTests",
                dependencies: ["PinnedTransport", "RampartCore", "RampartTestSupport", crypto, cryptoExtras,
                               nioCore, nioPosix, nioHTTP1, nioConcurrencyHelpers, nioSSL, x509, asn1],
                swiftSettings: swiftSettings),
]

// MARK: - FileVault: attachment cache and drive block store
products.append(.library(name: "FileVault", targets: ["FileVault"]))
targets += [
    .target(name: "FileVault", dependencies: ["RampartCore", crypto, grdb], swiftSettings: swiftSettings),
    // The crash test runs the built `rampart-dev vault hold-lease` (found by RampartTestSupport: next
    // to the test bundle or through RAMPART_DEV_BIN), like SealedStoreTests' crash test.
    .testTarget(name: "FileVaultTests", dependencies: ["FileVault", "RampartCore", "RampartTestSupport", crypto],
                swiftSettings: swiftSettings),
]

// MARK: - Bcrypt: bcrypt `$2y$` through libxcrypt's crypt_r (SRP password hashing, mailbox key passphrase)
products.append(.library(name: "Bcrypt", targets: ["Bcrypt"]))
targets += [
    // libxcrypt (crypt_r with "$2y$"); Debian: libcrypt-dev (scripts/deps/srp.apt).
    .systemLibrary(name: "CCrypt", providers: [.apt(["libcrypt-dev"])]),
    .target(name: "Bcrypt", dependencies: ["RampartCore", "CCrypt"], swiftSettings: swiftSettings),
    // Known answers from Python's bcrypt (scripts/srp/bcrypt_vectors.py with $RAMPART_PYTHON or .venv).
    .testTarget(name: "BcryptTests", dependencies: ["Bcrypt", "RampartCore", "RampartTestSupport"], swiftSettings: swiftSettings),
]

// MARK: - SRP: Proton's SRP-6a (client and server), big numbers from OpenSSL's libcrypto
products.append(.library(name: "SRP", targets: ["SRP"]))
targets += [
    // OpenSSL 3 libcrypto (BIGNUM, BN_mod_exp_mont_consttime); Debian: libssl-dev (scripts/deps/srp.apt).
    .systemLibrary(name: "CLibCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"]), .brew(["openssl@3"])]),
    .target(name: "SRP", dependencies: ["RampartCore", "Bcrypt", "CLibCrypto", crypto], swiftSettings: swiftSettings),
    // Known answers and cross-checks against proton-client's proton.srp (scripts/srp/*.py, $RAMPART_PYTHON or .venv).
    .testTarget(name: "SRPTests", dependencies: ["SRP", "Bcrypt", "RampartCore", "RampartTestSupport"], swiftSettings: swiftSettings),
]

// MARK: - OpenPGP: keys, messages and signatures (RNP, in-memory FFI only)
// CRNP: RNP, the OpenPGP C library Thunderbird uses (Debian librnp-dev, pkg-config librnp).
products.append(.library(name: "OpenPGP", targets: ["OpenPGP"]))
targets += [
    .systemLibrary(name: "CRNP", pkgConfig: "librnp", providers: [.apt(["librnp-dev"])]),
    .target(name: "OpenPGP", dependencies: ["RampartCore", "CRNP"], swiftSettings: swiftSettings),
    .testTarget(name: "OpenPGPTests", dependencies: ["OpenPGP", "RampartCore", "RampartTestSupport"], swiftSettings: swiftSettings),
    // Interop with the implementations people use: gpg, Sequoia's sq and GopenPGP (a Go helper built in
    // the test from scripts/openpgp/gopenpgp-peer; scripts/deps/openpgp.apt installs all three).
    .testTarget(name: "OpenPGPInteropTests", dependencies: ["OpenPGP", "RampartCore", "RampartTestSupport"],
                swiftSettings: swiftSettings),
]

// MARK: - MIME: RFC 5322 / MIME messages (parse, build, mbox, Maildir); no other Rampart dependency
products.append(.library(name: "MIME", targets: ["MIME"]))
targets += [
    .target(name: "MIME", dependencies: [crypto], swiftSettings: swiftSettings),
    // The differential test runs scripts/mime/*.py with $RAMPART_PYTHON (else python3) as the reference.
    .testTarget(name: "MIMETests", dependencies: ["MIME", "RampartTestSupport"], resources: [.copy("Fixtures")],
                swiftSettings: swiftSettings),
]

// MARK: - PGPMIME: RFC 3156 PGP/MIME (multipart/encrypted, multipart/signed) and inline PGP, on MIME + OpenPGP
products.append(.library(name: "PGPMIME", targets: ["PGPMIME"]))
targets += [
    .target(name: "PGPMIME", dependencies: ["MIME", "OpenPGP", "RampartCore"], swiftSettings: swiftSettings),
    // Real peers: gpg (GnuPG) and Python's email package ($RAMPART_PYTHON, else .venv, else python3).
    .testTarget(name: "PGPMIMETests", dependencies: ["PGPMIME", "MIME", "OpenPGP", "RampartCore", "RampartTestSupport", crypto],
                swiftSettings: swiftSettings),
]

// MARK: - Integration (cross-module attacker tests)
targets.append(.testTarget(name: "RampartIntegrationTests", dependencies: ["RampartCore", "Keychain", "Keymaker", "SealedStore"],
                           swiftSettings: swiftSettings))

// MARK: - RampartAPI: the wire contract the server and the client share (routes, request and response models)
products.append(.library(name: "RampartAPI", targets: ["RampartAPI"]))
targets += [
    .target(name: "RampartAPI", swiftSettings: swiftSettings),
    .testTarget(name: "RampartAPITests", dependencies: ["RampartAPI"], swiftSettings: swiftSettings),
]

// MARK: - MailboxCrypto: the account key locked with bcrypt of the mailbox password, OpenPGP parts bound to their message, MIME → stored mail
products.append(.library(name: "MailboxCrypto", targets: ["MailboxCrypto"]))
targets += [
    .target(name: "MailboxCrypto", dependencies: ["RampartAPI", "RampartCore", "MIME", "OpenPGP", "Bcrypt", "SRP", crypto, cryptoExtras],
            swiftSettings: swiftSettings),
    .testTarget(name: "MailboxCryptoTests", dependencies: ["MailboxCrypto", "RampartCore", "OpenPGP", "RampartTestSupport"],
                swiftSettings: swiftSettings),
]

// MARK: - TransparencyLog: RFC 9162 Merkle tree, inclusion and consistency proofs, C2SP checkpoints, signed notes and cosignatures
products.append(.library(name: "TransparencyLog", targets: ["TransparencyLog"]))
targets += [
    .target(name: "TransparencyLog", dependencies: ["RampartCore", crypto], swiftSettings: swiftSettings),
    // Go's golang.org/x/mod/sumdb/tlog and note (Debian golang-golang-x-mod-dev) check our trees,
    // proofs and notes and sign notes we check (scripts/kt/tlog-peer, built in the test).
    .testTarget(name: "TransparencyLogTests", dependencies: ["TransparencyLog", "RampartTestSupport", crypto],
                swiftSettings: swiftSettings),
]

// MARK: - RampartServer: embedded local backend (TLS on loopback, zero-access storage)
// Only the `rampart` executable and the tests link it; no core library depends on it.
products.append(.library(name: "RampartServer", targets: ["RampartServer"]))
targets += [
    .target(name: "RampartServer",
            dependencies: ["RampartAPI", "MailboxCrypto", "MIME", "RampartCore", "PushCrypto", "OpenPGP", "SRP", "TransparencyLog", crypto, grdb,
                           hummingbird, hummingbirdTLS, httpTypes, serviceLifecycle, nioCore, nioSSL, x509, asn1, logging,
                           "MailSafety", nioPosix, nioHTTP1],  // the remote-content proxy: tracker list, its own HTTP client
            swiftSettings: swiftSettings),
    .testTarget(name: "RampartServerTests",
                dependencies: ["RampartServer", "RampartAPI", "MailboxCrypto", "RampartCore", "PinnedTransport", "PushCrypto",
                               "OpenPGP", "SRP", "RampartTestSupport", "RampartServerTestSupport", "RampartServerPostgres", crypto, nioHTTP1, x509],
                swiftSettings: swiftSettings),
]

// MARK: - RampartServerPostgres: the server's storage on PostgreSQL (postgres-nio), for several server processes
// on one database. Its own target: what links RampartServer alone (the client tests, rampart-dev) does not build
// postgres-nio; `rampart server start --database postgresql://…` and the server tests do.
products.append(.library(name: "RampartServerPostgres", targets: ["RampartServerPostgres"]))
targets.append(.target(name: "RampartServerPostgres", dependencies: ["RampartServer", postgresNIO, nioCore, nioPosix, nioSSL, logging],
                       swiftSettings: swiftSettings))

// MARK: - RampartClient: API client, session, login, sync, reading, attachments, drive
products.append(.library(name: "RampartClient", targets: ["RampartClient"]))
targets += [
    .target(name: "RampartClient",
            dependencies: ["RampartAPI", "MailboxCrypto", "MIME", "PinnedTransport", "SealedStore", "Keymaker", "Keychain",
                           "PushCrypto", "MailSafety", "HTML5", "FileVault", "RampartCore", "OpenPGP", "PGPMIME", "SRP", "TransparencyLog",
                           crypto],
            swiftSettings: swiftSettings),
    .testTarget(name: "RampartClientTests",
                dependencies: ["RampartClient", "RampartAPI", "MailboxCrypto", "SealedStore", "Keymaker", "Keychain",
                               "MailSafety", "RampartCore", "PushCrypto", "OpenPGP", "FileVault", "RampartServer", "TransparencyLog",
                               "RampartTestSupport", "RampartServerTestSupport", crypto, "PinnedTransport",
                               // Not imported: the end-to-end tests run the built tools as a user would.
                               "rampart", "rampart-dev"],
                swiftSettings: swiftSettings),
]

// MARK: - RampartAgent: the agent that holds unlocked MainKeys, over a Unix socket
products.append(.library(name: "RampartAgent", targets: ["RampartAgent"]))
targets += [
    .target(name: "CRampartAgentShims"),
    .target(name: "RampartAgent", dependencies: ["RampartCore", "Keymaker", "Keychain", "CRampartShims", "CRampartAgentShims"],
            swiftSettings: swiftSettings),
    // Test support only: a child process that connects under another uid (the peer-uid check).
    .target(name: "CRampartAgentTestSupport", path: "Tests/CRampartAgentTestSupport"),
    .testTarget(name: "RampartAgentTests",
                dependencies: ["RampartAgent", "RampartCore", "Keymaker", "Keychain", "CRampartAgentTestSupport", "RampartTestSupport",
                               // Not imported: the CLI tests run the built tools as a user would.
                               "rampart", "rampart-dev"],
                swiftSettings: swiftSettings),
]

// MARK: - RampartRuntime: the composition root (roles, home layout, keychain, agent, accounts, wipes)
// Every process builds its containers and a user's account through it. No ArgumentParser.
products.append(.library(name: "RampartRuntime", targets: ["RampartRuntime"]))
targets += [
    .target(name: "RampartRuntime",
            dependencies: ["RampartCore", "Keychain", "Keymaker", "HardwareKeys", "SealedStore", "FileVault", "RampartClient",
                           "RampartAgent"],
            swiftSettings: swiftSettings),
    .testTarget(name: "RampartRuntimeTests",
                dependencies: ["RampartRuntime", "RampartCLIKit", "RampartAgent", "RampartCore", "Keymaker", "HardwareKeys",
                               "SealedStore", "Keychain"],
                swiftSettings: swiftSettings),
]

// MARK: - RampartCLIKit: the command-line glue `rampart` and `rampart-dev` share (global and server
// options, the `--pin-stdin` group, terminal prompting, error reporting and exit statuses, JSON output).
targets.append(.target(name: "RampartCLIKit",
                       dependencies: ["RampartRuntime", "RampartAgent", "RampartClient", "RampartCore", "Keymaker", "RampartBridge", "RampartAPI", argumentParser, crypto],
                       swiftSettings: swiftSettings))

// MARK: - RampartWeb: `rampart web`, the local web app (Hummingbird on 127.0.0.1, a client of the agent)
// Only the `rampart` executable and the tests link it; no core library depends on it.
targets += [
    .target(name: "RampartWeb",
            dependencies: ["RampartCLIKit", "RampartRuntime", "RampartClient", "RampartAgent", "RampartCore", "RampartAPI", "MailSafety",
                           "HTML5", "SealedStore", "Keymaker", "FileVault", crypto, hummingbird, httpTypes, serviceLifecycle, nioCore, logging,
                           argumentParser],
            swiftSettings: swiftSettings),
    // The access rules in-process, and the app in Debian's chromium driven by Playwright for Python
    // (scripts/web/*.py; scripts/deps/web.apt and web.pip) against `rampart web` and `rampart server`.
    .testTarget(name: "RampartWebTests",
                dependencies: ["RampartWeb", "RampartTestSupport", "RampartServerTestSupport",
                               // Not imported: the browser test runs the built `rampart` as a user would.
                               "rampart"],
                swiftSettings: swiftSettings),
]

// MARK: - rampart (the user's command-line tool: account, mail, drive, notifications, server, agent, demo)
products.append(.executable(name: "rampart", targets: ["rampart"]))
targets += [
    .executableTarget(name: "rampart",
                      dependencies: ["RampartCLIKit", "RampartRuntime", "RampartClient", "RampartServer", "RampartServerPostgres", "RampartWeb", "RampartAgent", "RampartAPI",
                                     "MailboxCrypto", "RampartCore", "HardwareKeys", "Keychain", "Keymaker", "MailSafety",
                                     "SealedStore", argumentParser],
                      swiftSettings: swiftSettings),
    // Runs the built `rampart` and `rampart-dev` executables (located next to the test bundle) as a user would.
    .testTarget(name: "RampartCLITests",
                dependencies: ["RampartTestSupport", "RampartServerTestSupport", "rampart", "rampart-dev"],
                swiftSettings: swiftSettings),
]

// MARK: - RampartBenchmarks: benchmark corpora and timing (no command-line layer)
// The generated mail corpora, the deterministic generators and the median-of-runs timing
// `rampart-dev bench` uses, kept in a library so that a small package of HTML5 + MailSafety can run
// the same workloads while the parser and sanitizer are profiled.
targets.append(.target(name: "RampartBenchmarks", swiftSettings: swiftSettings))

// MARK: - rampart-dev (the developer tool: every module's lab commands and benchmarks)
// It links not the server, and the client only for the simulated clients of `bench server`; the lab commands reach the modules they test directly;
// the pinning bench runs its own loopback TLS server on NIO.
products.append(.executable(name: "rampart-dev", targets: ["rampart-dev"]))
targets.append(.executableTarget(
    name: "rampart-dev",
    dependencies: ["RampartCLIKit", "RampartRuntime", "RampartBenchmarks", "RampartCore", "Bcrypt", "FileVault", "HTML5",
                   "HardwareKeys", "Keychain", "Keymaker", "MIME", "MailSafety", "OpenPGP", "PinnedTransport", "PushCrypto", "SRP",
                   "SealedStore", "TransparencyLog", argumentParser, crypto, grdb, nioCore, nioPosix, nioHTTP1, nioTLS, nioSSL, x509,
                   "RampartClient", "RampartAPI", "MailboxCrypto"],  // bench server: the simulated clients (not the server)
    swiftSettings: swiftSettings
))

// MARK: - RampartTestSupport: what the tests share instead of carrying copies
// Locating the built `rampart` / `rampart-dev`, running them (output, exit status, time limit),
// child processes read while they run, private temporary homes, stopping an agent a test started;
// the deterministic generators (SplitMix64 and a linear congruential one, defined in
// RampartBenchmarks, whose corpora use them, and re-exported: the benchmarks library the
// executables link never depends on test code), the reference HTML escaper, and the sanitizer
// options a fuzz input picks. A library product, so that the fuzz package (Fuzz/) shares it too.
// RampartServerTestSupport adds `rampart server start` in a child process; it is separate so that
// tests which need no server do not link Hummingbird through it.
products.append(.library(name: "RampartTestSupport", targets: ["RampartTestSupport"]))
targets += [
    .target(name: "RampartTestSupport", dependencies: ["RampartCore", "RampartBenchmarks", "MailSafety"],
            path: "Tests/RampartTestSupport", swiftSettings: swiftSettings),
    .target(name: "RampartServerTestSupport", dependencies: ["RampartTestSupport", "RampartServer", "RampartAPI"],
            path: "Tests/RampartServerTestSupport", swiftSettings: swiftSettings),
    // The helpers' own tests: a run's output and status, the time limit, temporary homes.
    .testTarget(name: "RampartTestSupportTests", dependencies: ["RampartTestSupport"], swiftSettings: swiftSettings),
]

// MARK: - LibraryExampleTests: README's "Use it as a library" example, compiled, run and compared with README
targets.append(.testTarget(name: "LibraryExampleTests",
                           dependencies: ["RampartCore", "Keymaker", "Keychain", "SealedStore", "MailSafety"],
                           swiftSettings: swiftSettings))

// MARK: - MailListener: what the IMAP and SMTP servers share on NIO (listener, connection limit,
// session feed with backpressure, STARTTLS channel) and the client line step of both framers
targets.append(.target(name: "MailListener", dependencies: ["RampartCore", nioCore, nioPosix, nioSSL], swiftSettings: swiftSettings))

// MARK: - IMAPServer: IMAP4rev1 server library for `rampart bridge` (parser, encoder, sessions on NIO, backend seam)
// Independent of Rampart's store: the bridge implements `IMAPBackend` over the sealed store. MIME computes
// ENVELOPE and BODYSTRUCTURE from the message bytes.
products.append(.library(name: "IMAPServer", targets: ["IMAPServer"]))
targets += [
    .target(name: "IMAPServer", dependencies: ["MIME", "MailListener", "RampartCore", nioCore, nioPosix, nioSSL], swiftSettings: swiftSettings),
    // Real clients against a server on 127.0.0.1: Python's imaplib and imapclient (scripts/deps/bridge.pip,
    // $RAMPART_PYTHON or .venv), isync's mbsync and curl's imap:// (scripts/deps/bridge.apt); openssl makes
    // the STARTTLS test's certificate.
    .testTarget(name: "IMAPServerTests", dependencies: ["IMAPServer", "RampartTestSupport", nioSSL], swiftSettings: swiftSettings),
]

// MARK: - SMTPServer: SMTP submission server library for `rampart bridge` (RFC 6409 on NIO, backend seam)
// Independent of Rampart's store: the bridge implements `SubmissionBackend` over the user's account.
products.append(.library(name: "SMTPServer", targets: ["SMTPServer"]))
targets += [
    .target(name: "SMTPServer", dependencies: ["MailListener", "RampartCore", nioCore, nioPosix, nioSSL], swiftSettings: swiftSettings),
    // Real clients against a server on 127.0.0.1: Python's smtplib ($RAMPART_PYTHON or .venv) and swaks
    // (scripts/deps/bridge.apt); openssl makes the STARTTLS test's certificate.
    .testTarget(name: "SMTPServerTests", dependencies: ["SMTPServer", "RampartTestSupport", nioSSL], swiftSettings: swiftSettings),
]

// MARK: - RampartBridge: `rampart bridge`, IMAP and SMTP on 127.0.0.1 over the account (the sealed store and
// the send path of RampartClient, opened through the composition root with the role `bridge`)
products.append(.library(name: "RampartBridge", targets: ["RampartBridge"]))
targets += [
    .target(name: "RampartBridge",
            dependencies: ["IMAPServer", "SMTPServer", "RampartClient", "RampartRuntime", "RampartAgent", "SealedStore", "RampartAPI",
                           "MailboxCrypto", "MIME", "OpenPGP", "RampartCore", crypto, nioSSL, x509, asn1],
            swiftSettings: swiftSettings),
    // `rampart server` and `rampart bridge` in child processes, with real clients: Python's imaplib and
    // smtplib, isync's mbsync, swaks, neomutt in tmux (scripts/deps/bridge.apt and bridge.pip).
    .testTarget(name: "RampartBridgeTests",
                dependencies: ["RampartBridge", "RampartTestSupport", "RampartServerTestSupport",
                               // Not imported: the tests run the built `rampart` as a user would.
                               "rampart"],
                swiftSettings: swiftSettings),
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
        // Already resolved as Hummingbird's dependencies; RampartServer uses ServiceGroup for a
        // graceful stop and HTTPTypes' fields directly.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: targets
)
