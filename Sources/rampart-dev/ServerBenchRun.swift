import Crypto
import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartClient
import RampartCore

#if canImport(Glibc)
import Glibc
#endif

/// One setup of `bench server`: its processes, the seeded accounts and mail, the load, the kill
/// and the check of what was acknowledged.
struct ServerBenchRun {
    let setup: BenchSetup
    let size: BenchSize
    let work: URL
    let kill: Bool
    let tools = AgentHostPaths()

    static func username(_ index: Int) -> String { "bench\(index)" }
    static func password(_ index: Int) -> String { "bench-password-\(index)" }

    /// Runs the setup; returns its markdown table rows.
    func run() async throws -> [String] {
        print("\n== \(setup.name): \(setup.processes) process\(setup.processes == 1 ? "" : "es") on \(setup.database == nil ? "SQLite" : "PostgreSQL")")
        var setup = self.setup
        if let server = setup.database {
            // A database of its own per setup (psql, through the URL's user), dropped at the end.
            let name = "rampart_bench_\(setup.name.replacingOccurrences(of: "-", with: "_"))_\(getpid())"
            try tools.run(URL(fileURLWithPath: "/usr/bin/psql"), [server, "-q", "-c", "CREATE DATABASE \(name)"])
            setup.database = Self.url(server, database: name)
        }
        defer {
            if let server = self.setup.database, let mine = setup.database {
                _ = try? tools.run(URL(fileURLWithPath: "/usr/bin/psql"),
                                   [server, "-q", "-c", "DROP DATABASE IF EXISTS \(URLComponents(string: mine)?.path.dropFirst() ?? "") WITH (FORCE)"])
            }
        }
        return try await ServerBenchRun(setup: setup, size: size, work: work, kill: kill).measure()
    }

    /// `url` naming database `name` instead of its own.
    static func url(_ url: String, database name: String) -> String {
        guard var components = URLComponents(string: url) else { return url }
        components.path = "/" + name
        return components.string ?? url
    }

    /// Starts the processes, seeds, loads, kills, checks; returns the markdown rows.
    func measure() async throws -> [String] {
        var processes: [Process] = []
        defer { processes.forEach(AgentHostPaths.stop) }
        var infos: [ServerInfo] = []
        for index in 0..<setup.processes {
            let (process, info) = try start(index)
            processes.append(process)
            infos.append(info)
        }
        var endpoints: [ServerEndpoint] = []
        for first in 0..<infos.count {   // client i starts at process i % N, then the others in order
            var endpoint = ServerEndpoint(serverInfo: infos[first])
            endpoint.alternateURLs = (1..<max(1, infos.count)).map { infos[(first + $0) % infos.count].baseURL }
            endpoints.append(endpoint)
        }

        let seeded = try await seed(endpoints[0])
        var rows: [String] = []
        let recorder = BenchRecorder()
        let killAt = kill && setup.processes > 1 ? size.seconds / 2 : nil
        let started = ContinuousClock.now
        let clientEndpoints = endpoints, addresses = seeded.addresses, run = self
        let loadTask = Task {
            try await run.load(endpoints: clientEndpoints, addresses: addresses, recorder: recorder)
        }
        if let killAt {
            try await Task.sleep(for: .seconds(killAt))
            recorder.killed = true
            Glibc.kill(processes[0].processIdentifier, SIGKILL)
            print(String(format: "killed process 1 (pid %d, SIGKILL) at %.1f s", processes[0].processIdentifier, (ContinuousClock.now - started).inSeconds))
        }
        try await loadTask.value
        let elapsed = (ContinuousClock.now - started).inSeconds
        let (timings, errors, samples, cut) = recorder.snapshot
        print("kind                           requests    req/s    p50 ms    p99 ms  errors  cut by the kill")
        for kind in timings.keys.sorted() {
            let timing = timings[kind] ?? Timing()
            print(kind.padding(toLength: 28, withPad: " ", startingAt: 0) + String(format: " %9d %8.1f %9.2f %9.2f %7d %7d", timing.samples.count,
                  Double(timing.samples.count) / elapsed, timing.median, timing.percentile(0.99), errors[kind] ?? 0, cut[kind] ?? 0))
            rows.append(String(format: "| %@ | %@ | %d | %.1f | %.2f | %.2f | %d |", setup.name, kind, timing.samples.count,
                               Double(timing.samples.count) / elapsed, timing.median, timing.percentile(0.99), errors[kind] ?? 0))
        }
        for sample in samples { print("  error: \(sample)") }
        let survivor = endpoints[endpoints.count - 1]
        try await verify(recorder, endpoint: survivor, killed: killAt != nil)
        rows += try await syncCurve(survivor)
        return rows
    }

    /// Starts process `index` and waits for its description.
    func start(_ index: Int) throws -> (Process, ServerInfo) {
        let data = work.appendingPathComponent("data")
        let info = work.appendingPathComponent("process-\(index + 1).json")
        var arguments = ["server", "start", "--data", data.path, "--port", "0", "--no-demo", "--open-signup", "--info-file", info.path]
        if let database = setup.database { arguments += ["--database", database] }
        let process = try tools.spawn(tools.rampart, arguments, log: work.appendingPathComponent("process-\(index + 1).log"),
                                      environment: ["RAMPART_SERVER_SIGNUPS_PER_HOUR": "100000000",
                                                    "RAMPART_SERVER_REQUESTS_PER_MINUTE": "100000000"])
        try tools.waitFor(file: info, process: process)
        return (process, try JSONDecoder().decode(ServerInfo.self, from: Data(contentsOf: info)))
    }

    struct Seeded {
        var addresses: [String]
    }

    /// Creates the accounts (sign-up over HTTPS, four at a time) and fills their mailboxes
    /// (sends to up to 100 recipients each, from the first account).
    func seed(_ endpoint: ServerEndpoint) async throws -> Seeded {
        let accounts = size.accounts
        let signupStart = ContinuousClock.now
        var addresses = [String](repeating: "", count: accounts)
        try await withThrowingTaskGroup(of: (Int, String).self) { group in
            var next = 0
            func add() {
                let index = next
                next += 1
                group.addTask {
                    let password = SecretBytes(copying: Array(Self.password(index).utf8))
                    defer { password.wipe() }
                    let made = try await APIClient(endpoint: endpoint).closing { api in
                        try await SignupFlow.register(api: api, credentials: SignupCredentials(username: Self.username(index), password: password),
                                                      keyPassword: password)
                    }
                    return (index, made.address)
                }
            }
            for _ in 0..<min(4, accounts) { add() }
            while let (index, address) = try await group.next() {
                addresses[index] = address
                if next < accounts { add() }
            }
        }
        print(String(format: "seed: %d accounts signed up over HTTPS in %.1f s", accounts, (ContinuousClock.now - signupStart).inSeconds))

        let sendStart = ContinuousClock.now, recipients = addresses, size = self.size
        let body = try Self.sealedBody()
        let sends = (size.messages + 99) / 100
        try await APIClient(endpoint: endpoint).closing { api in
            _ = try await api.login(username: Self.username(0), password: Self.password(0))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    group.addTask {
                        for send in stride(from: worker, to: sends, by: 4) {
                            let count = min(100, size.messages - send * 100)
                            let to = (0..<count).map { recipients[(send * 100 + $0) % accounts] }
                            _ = try await api.send(SendRequest(to: Array(Set(to)), id: SendRequest.newID(), subject: "seed \(send)",
                                                               encryptedBody: body))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        print(String(format: "seed: %d messages in %d sends over HTTPS in %.1f s", size.messages, sends, (ContinuousClock.now - sendStart).inSeconds))
        return Seeded(addresses: addresses)
    }

    /// A small message body sealed to a throw-away key (the server stores it; nothing reads it).
    static func sealedBody(bytes: Int = 600) throws -> String {
        let key = try PGPPrivateKey.generate(name: "bench", address: "bench@localhost")
        let content = MessageContent(subject: "bench", sender: Correspondent(name: "", address: "bench@localhost"), to: [],
                                     html: "<p>" + String(repeating: "x", count: bytes) + "</p>")
        return try MailPart.seal(try JSONEncoder().encode(content), to: [key.publicKey], signedBy: nil, messageID: SendRequest.newID(),
                                 part: SealedPartName.body).base64EncodedString()
    }
}
