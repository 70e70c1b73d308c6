import CRampartAgentTestSupport
import Foundation
import Keychain
import Keymaker
import RampartCore
import RampartTestSupport
import Testing
@testable import RampartAgent

#if canImport(Glibc)
import Glibc
#endif

/// Records that a wipe ran in the agent's process.
final class WipeWitness: Wipeable, @unchecked Sendable {
    private let lock = NSLock()
    private var users: [UserID] = []
    var wipeName: String { "witness" }
    func wipe(user: UserID) throws { lock.withLock { users.append(user) } }
    var wipedUsers: [UserID] { lock.withLock { users } }
}

/// An agent serving a temporary home in this process, over a real socket, and a client.
final class AgentFixture {
    /// A private home with a short path (socket paths must fit in 107 bytes).
    let temporaryHome: TemporaryHome
    var home: URL { temporaryHome.url }
    let location: AgentLocation
    let global: GlobalContainer
    let server: AgentServer
    let client: AgentClient
    let witness = WipeWitness()
    private let token: ObserverToken
    static let settings = ["pin.kdf.logN": "15", "keychain.backend": "file"]

    init(clock: any RampartClock = SystemClock(), maxFailedAttempts: Int = 10, onLock: AgentServer.LockHook? = nil) throws {
        temporaryHome = try TemporaryHome("agent", shortPath: true)
        let home = temporaryHome.url
        location = AgentLocation(homeDirectory: home)
        global = GlobalContainer(environment: RampartEnvironment(homeDirectory: home, clock: clock, settings: Self.settings))
        token = global.wipeRegistry.register(witness)
        server = AgentServer(location: location, global: global, options: .init(autolockCheckInterval: 0.1), makeKeymaker: { container in
            Keymaker(userID: container.userID, dependencies: container,
                     configuration: .init(maxFailedAttempts: maxFailedAttempts, protectors: container.global.mainKeyProtectors))
        }, onLock: onLock)
        try server.start()
        client = AgentClient(location: location)
    }

    deinit {
        server.stop()
        token.cancel()
        temporaryHome.remove()
    }

    /// Creates the user's MainKey from "another process" (its own containers on the same home),
    /// protects it with `pin`, and locks. Returns the key's fingerprint.
    func createUser(_ user: UserID, pin: String?, autolock: AutolockPolicy? = nil) throws -> String {
        let other = GlobalContainer(environment: RampartEnvironment(homeDirectory: home, settings: Self.settings))
        let keymaker = UserContainer(userID: user, global: other).keymaker
        let key = try keymaker.createMainKey()
        let fingerprint = key.fingerprint
        if let pin { try keymaker.activate(.pin, credential: .pin(SecretBytes(copying: Array(pin.utf8)))) }
        if let autolock { try keymaker.setAutolockPolicy(autolock) }
        keymaker.lock()
        return fingerprint
    }

    /// Creates `user` with `pin` (``createUser(_:pin:autolock:)``), unlocks it through the agent
    /// and returns the MainKey the agent now holds.
    func unlockedUser(_ user: UserID, pin: String) throws -> MainKey {
        _ = try createUser(user, pin: pin)
        try client.unlock(user: user, credential: Self.pin(pin))
        return try #require(server.heldKey(user))
    }

    static func pin(_ text: String) -> UnlockCredential { .pin(SecretBytes(copying: Array(text.utf8))) }
}

@Suite("RampartAgent", .serialized)
struct AgentTests {
    @Test func unlockThroughTheAgentHandsOutTheSameMainKey() throws {
        let fixture = try AgentFixture()
        let user: UserID = "alice"
        let fingerprint = try fixture.createUser(user, pin: "2468")
        #expect(try fixture.client.status(user: user).unlocked == false)
        let status = try fixture.client.unlock(user: user, credential: AgentFixture.pin("2468"))
        #expect(status.unlocked)
        #expect(status.keyFingerprint == fingerprint)
        let key = try fixture.client.mainKey(user: user)
        #expect(key.fingerprint == fingerprint)
        let held = try #require(fixture.server.heldKey(user))
        #expect(try key.constantTimeEquals(held))
        // The provider used by the CLI gives the same key and wipes its copy when closed.
        let provider = AgentMainKeyProvider(client: fixture.client, userID: user)
        let copy = try provider.currentMainKey()
        #expect(copy.fingerprint == fingerprint)
        provider.close()
        #expect(copy.isWiped)
        #expect(held.isWiped == false)
    }

    #if os(Linux)
    /// The agent's threads carry their names. They used to show the process's name: the names
    /// were set before `start()` (which on Linux never reaches the thread) and were longer than
    /// Linux's 15 bytes (which Foundation drops silently).
    @Test func agentThreadsAreNamed() async throws {
        let fixture = try AgentFixture()
        let expected: Set = [AgentServer.acceptThreadName, AgentServer.autolockThreadName, AgentServer.connectionThreadName]
        #expect(expected.allSatisfy { $0.utf8.count <= 15 })
        // A thread sets its name once it runs: wait for both long-lived threads (up to 10 s).
        var names: Set<String> = []
        for _ in 0..<100 {
            names = Self.threadNames()
            if names.contains(AgentServer.acceptThreadName), names.contains(AgentServer.autolockThreadName) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(names.contains(AgentServer.acceptThreadName))
        #expect(names.contains(AgentServer.autolockThreadName))
        withExtendedLifetime(fixture) {}
    }

    /// The names of this process's threads (`/proc/self/task/*/comm`).
    static func threadNames() -> Set<String> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines)
        })
    }
    #endif

    @Test func lockZeroizesTheKeyInTheAgent() throws {
        let fixture = try AgentFixture()
        let user: UserID = "bob"
        let held = try fixture.unlockedUser(user, pin: "1357")
        let provider = AgentMainKeyProvider(client: fixture.client, userID: user, revalidationInterval: 0)
        let copy = try provider.currentMainKey()
        try fixture.client.lock(user: user)
        #expect(held.isWiped)
        #expect(throws: AgentError.locked(user)) { try fixture.client.mainKey(user: user) }
        #expect(try fixture.client.status(user: user).unlocked == false)
        // The CLI-side copy is dropped (and wiped) at the next use after the agent locked.
        #expect(throws: LockedError(userID: user)) { try provider.currentMainKey() }
        #expect(copy.isWiped)
    }

    @Test func autolockLocksTheKeyInTheAgentWithoutAnyRequest() async throws {
        let clock = ManualClock()
        let fixture = try AgentFixture(clock: clock)
        let user: UserID = "carol"
        _ = try fixture.createUser(user, pin: "8642", autolock: .afterMinutes(1))
        let status = try fixture.client.unlock(user: user, credential: AgentFixture.pin("8642"))
        #expect(status.autolock == "1")
        let held = try #require(fixture.server.heldKey(user))
        clock.advance(by: 30)
        try await Task.sleep(for: .milliseconds(400))
        #expect(held.isWiped == false, "30 s idle is within the 1-minute policy")
        clock.advance(by: 31)
        // Only the agent's autolock thread (every 0.1 s here) runs now: no request is made.
        var waited = 0
        while !held.isWiped, waited < 300 {
            try await Task.sleep(for: .milliseconds(100))
            waited += 1
        }
        #expect(held.isWiped, "the agent's autolock thread zeroized the key")
        #expect(throws: AgentError.locked(user)) { try fixture.client.mainKey(user: user) }
    }

    @Test func touchRestartsTheAutolockTimer() async throws {
        let clock = ManualClock()
        let fixture = try AgentFixture(clock: clock)
        let user: UserID = "erin"
        _ = try fixture.createUser(user, pin: "9753", autolock: .afterMinutes(1))
        try fixture.client.unlock(user: user, credential: AgentFixture.pin("9753"))
        clock.advance(by: 50)
        try fixture.client.touch(user: user)
        clock.advance(by: 50)
        try await Task.sleep(for: .milliseconds(400))
        #expect(try fixture.client.status(user: user).unlocked, "100 s after unlock but 50 s after the touch")
        clock.advance(by: 11)
        try await Task.sleep(for: .milliseconds(400))
        #expect(throws: AgentError.locked(user)) { try fixture.client.touch(user: user) }
    }

    @Test func wrongPINReportsAttemptsLeftAndTheWipeStillHappensThroughTheAgent() throws {
        let fixture = try AgentFixture(maxFailedAttempts: 3)
        let user: UserID = "dave"
        _ = try fixture.createUser(user, pin: "1234")
        #expect(throws: AgentError.wrongPIN(attemptsLeft: 2)) {
            try fixture.client.unlock(user: user, credential: AgentFixture.pin("0000"))
        }
        #expect(try fixture.client.status(user: user).failedAttempts == 1)
        #expect(throws: AgentError.wrongPIN(attemptsLeft: 1)) {
            try fixture.client.unlock(user: user, credential: AgentFixture.pin("0001"))
        }
        #expect(throws: AgentError.wiped(user)) {
            try fixture.client.unlock(user: user, credential: AgentFixture.pin("0002"))
        }
        #expect(fixture.witness.wipedUsers == [user], "the agent ran the wipe registry")
        #expect(try fixture.client.status(user: user).hasMainKey == false)
        // Seen from another process: nothing of the user is left in the keychain.
        let other = GlobalContainer(environment: RampartEnvironment(homeDirectory: fixture.home, settings: AgentFixture.settings))
        #expect(try UserContainer(userID: user, global: other).keymaker.hasMainKey() == false)
        #expect(throws: AgentError.noMainKey(user)) {
            try fixture.client.unlock(user: user, credential: AgentFixture.pin("1234"))
        }
    }

    @Test func aLogoutInAnotherProcessLocksTheAgentsKey() throws {
        let fixture = try AgentFixture()
        let user: UserID = "hana"
        let held = try fixture.unlockedUser(user, pin: "5555")
        // The CLI's logout runs its own Keymaker and erases the user's keychain items.
        let other = GlobalContainer(environment: RampartEnvironment(homeDirectory: fixture.home, settings: AgentFixture.settings))
        _ = UserContainer(userID: user, global: other).keymaker.logout()
        #expect(throws: AgentError.noMainKey(user)) { try fixture.client.mainKey(user: user) }
        #expect(held.isWiped)
        let status = try fixture.client.status(user: user)
        #expect(!status.unlocked && !status.hasMainKey)
    }

    @Test func unsafeSocketFoldersAreRefused() throws {
        let temporaryHome = try TemporaryHome("agent", shortPath: true)
        let home = temporaryHome.url
        let location = AgentLocation(homeDirectory: home)
        let global = GlobalContainer(environment: RampartEnvironment(homeDirectory: home, settings: AgentFixture.settings))
        // Group/other bits.
        try FileManager.default.createDirectory(at: location.directoryURL, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o755])
        chmod(location.directoryURL.path, 0o755)
        #expect(throws: AgentError.self) { try AgentServer(location: location, global: global).start() }
        do {
            try AgentServer(location: location, global: global).start()
        } catch let error as AgentError {
            guard case .socketFolderUnsafe = error else { Issue.record("unexpected \(error)"); return }
        }
        // The client refuses it too, before connecting.
        #expect(throws: AgentError.self) { try AgentClient(location: location).status(user: "u") }
        #expect(AgentClient(location: location).isRunning() == false)
        // A symlink to a private folder.
        try FileManager.default.removeItem(at: location.directoryURL)
        let elsewhere = home.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createSymbolicLink(at: location.directoryURL, withDestinationURL: elsewhere)
        #expect(throws: AgentError.self) { try location.prepareDirectory() }
        // Another owner (only root can make one).
        if geteuid() == 0 {
            try FileManager.default.removeItem(at: location.directoryURL)
            try FileManager.default.createDirectory(at: location.directoryURL, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            chown(location.directoryURL.path, 65534, 65534)
            #expect(throws: AgentError.self) { try location.checkDirectory() }
        }
        // A home whose path is too long for sun_path.
        let long = AgentLocation(homeDirectory: URL(fileURLWithPath: "/tmp/" + String(repeating: "x", count: 120)))
        #expect(throws: AgentError.socketPathTooLong(path: long.socketURL.path, length: long.socketURL.path.utf8.count,
                                                     limit: AgentLocation.maxSocketPathLength)) {
            try long.prepareDirectory()
        }
    }

    @Test func anIdleAgentExitsOnlyWithEveryUserLocked() async throws {
        let temporaryHome = try TemporaryHome("agent", shortPath: true)
        let home = temporaryHome.url
        let location = AgentLocation(homeDirectory: home)
        let global = GlobalContainer(environment: RampartEnvironment(homeDirectory: home, settings: AgentFixture.settings))
        let other = GlobalContainer(environment: RampartEnvironment(homeDirectory: home, settings: AgentFixture.settings))
        _ = try UserContainer(userID: "gina", global: other).keymaker.createMainKey()
        let server = AgentServer(location: location, global: global, options: .init(autolockCheckInterval: 0.1, idleExit: 0.5))
        try server.start()
        let client = AgentClient(location: location)
        try client.unlock(user: "gina", credential: .none)
        try await Task.sleep(for: .milliseconds(1200))
        #expect(server.isRunning, "an unlocked user keeps the agent alive")
        let held = try #require(server.heldKey("gina"))
        try client.lock(user: "gina")
        var waited = 0
        while !server.hasStopped, waited < 300 {
            try await Task.sleep(for: .milliseconds(100))
            waited += 1
        }
        #expect(!server.isRunning, "idle and locked: the agent exited")
        #expect(held.isWiped)
        #expect(!FileManager.default.fileExists(atPath: location.socketURL.path))
        #expect(!client.isRunning())
    }

    /// An agent whose socket is gone (its home deleted, as a test's or a user's clean-up does) can
    /// be reached by nobody, so nobody could lock it: it stops and zeroizes the keys it holds.
    /// When its path holds another file by then (a new agent's socket), that file stays.
    @Test(arguments: [false, true])
    func anAgentWhoseSocketIsGoneStopsAndWipesItsKeys(replaced: Bool) async throws {
        let fixture = try AgentFixture()
        let user: UserID = "hana"
        let held = try fixture.unlockedUser(user, pin: "2468")
        let path = fixture.location.socketURL.path
        #expect(unlink(path) == 0)
        if replaced { #expect(FileManager.default.createFile(atPath: path, contents: Data("another agent's".utf8))) }
        var waited = 0
        while !fixture.server.hasStopped, waited < 300 {
            try await Task.sleep(for: .milliseconds(100))
            waited += 1
        }
        #expect(fixture.server.hasStopped, "the agent stopped once its socket was gone")
        #expect(held.isWiped)
        #expect(FileManager.default.fileExists(atPath: path) == replaced, "a file another put at the path is not removed")
    }

    @Test func aSecondAgentOnTheSameSocketIsRefused() throws {
        let fixture = try AgentFixture()
        #expect(throws: AgentError.alreadyRunning(socketPath: fixture.location.socketURL.path)) {
            try AgentServer(location: fixture.location, global: fixture.global).start()
        }
        #expect(fixture.client.isRunning())
    }

    @Test func thePeerRuleAdmitsOnlyTheAgentsOwnUID() {
        #expect(AgentServer.isPeerAllowed(peerUID: 1000, ownUID: 1000))
        #expect(!AgentServer.isPeerAllowed(peerUID: 65534, ownUID: 1000))
        #expect(!AgentServer.isPeerAllowed(peerUID: 0, ownUID: 1000), "root is refused too")
    }

    /// Runs a child under uid 65534 (nobody), which needs root for setuid().
    @Test(.enabled(if: geteuid() == 0, "needs root to run a child under another uid"))
    func aPeerWithAnotherUIDIsRefused() throws {
        let fixture = try AgentFixture()
        let user: UserID = "frank"
        _ = try fixture.createUser(user, pin: "2222")
        try fixture.client.unlock(user: user, credential: AgentFixture.pin("2222"))
        // Open the folder and the socket to everybody, so that only the peer-uid check is left.
        chmod(fixture.home.path, 0o711)
        chmod(fixture.location.directoryURL.path, 0o711)
        chmod(fixture.location.socketURL.path, 0o777)
        let request = Self.frame(json: #"{"op":"mainKey","user":"frank"}"#)
        let refused = try Self.exchange(asUID: 65534, path: fixture.location.socketURL.path, request: request)
        #expect(refused.rc == 0, "the child connected (errno \(refused.childErrno))")
        let answer = try #require(refused.response)
        #expect(answer.ok == false)
        #expect(answer.error?.code == "agent.peerRefused")
        #expect(answer.error?.peerUID == 65534)
        #expect(refused.secretLength == 0, "no key bytes were sent")
        #expect(fixture.server.refusedPeerCount == 1)
        // Control: the same exchange from our own uid gets the key.
        let accepted = try Self.exchange(asUID: geteuid(), path: fixture.location.socketURL.path, request: request)
        #expect(accepted.response?.ok == true)
        #expect(accepted.secretLength == MainKey.byteCount)
    }

    @Test func malformedFramesGetAnErrorNotACrash() throws {
        let fixture = try AgentFixture()
        let path = fixture.location.socketURL.path
        var cases: [(String, [UInt8], String)] = [
            ("oversized", [0xFF, 0xFF, 0xFF, 0xFF], "agent.protocol.frameTooLarge"),
            ("bad version", [0, 0, 0, 6, 9, 0, 0, 0, 1, 0x7B], "agent.protocol.version"),
            ("header past the end", [0, 0, 0, 6, 1, 0, 0, 0, 200, 0x7B], "agent.protocol"),
        ]
        cases.append(("not JSON", Self.frame(json: "not json"), "agent.protocol"))
        cases.append(("unknown operation", Self.frame(json: #"{"op":"dump"}"#), "agent.protocol"))
        cases.append(("bad user id", Self.frame(json: #"{"op":"status","user":"../x"}"#), "agent.protocol"))
        cases.append(("no user", Self.frame(json: #"{"op":"mainKey"}"#), "agent.protocol"))
        for (name, bytes, code) in cases {
            let result = try Self.exchange(asUID: geteuid(), path: path, request: bytes)
            #expect(result.response?.ok == false, "\(name)")
            #expect(result.response?.error?.code == code, "\(name): \(String(describing: result.response?.error))")
        }
        #expect(fixture.client.isRunning(), "the agent still serves")
    }

    // MARK: Raw frames

    static func frame(json: String) -> [UInt8] {
        let header = Array(json.utf8)
        let body = [AgentWire.version] + bigEndian(header.count) + header
        return bigEndian(body.count) + body
    }

    static func bigEndian(_ value: Int) -> [UInt8] {
        withUnsafeBytes(of: UInt32(value).bigEndian) { Array($0) }
    }

    struct RawExchange {
        var rc: Int32
        var childErrno: Int32
        var response: AgentResponse?
        var secretLength: Int
    }

    /// Sends `request` from a child process running as `uid` and parses the answer.
    static func exchange(asUID uid: uid_t, path: String, request: [UInt8]) throws -> RawExchange {
        var reply = [UInt8](repeating: 0, count: 65536)
        var length = 0
        var childErrno: Int32 = 0
        let gid: gid_t = uid == 0 ? 0 : 65534
        let rc = request.withUnsafeBufferPointer { req in
            reply.withUnsafeMutableBufferPointer { out in
                rampart_test_exchange_as_uid(uid, gid, path, req.baseAddress, req.count, out.baseAddress, out.count, &length, &childErrno)
            }
        }
        var result = RawExchange(rc: rc, childErrno: childErrno, response: nil, secretLength: 0)
        guard length >= 9 else { return result }
        let body = Int(reply[0]) << 24 | Int(reply[1]) << 16 | Int(reply[2]) << 8 | Int(reply[3])
        let headerLength = Int(reply[5]) << 24 | Int(reply[6]) << 16 | Int(reply[7]) << 8 | Int(reply[8])
        guard 9 + headerLength <= length else { return result }
        result.response = try JSONDecoder().decode(AgentResponse.self, from: Data(reply[9..<(9 + headerLength)]))
        result.secretLength = body - 5 - headerLength
        reply.withUnsafeMutableBytes { SecretBytes.zeroize($0) }
        return result
    }
}
