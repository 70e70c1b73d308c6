import Crypto
import Foundation
import MailboxCrypto
import OpenPGP
import RampartAPI
import RampartCore
import SRP

/// Why a sign-up was refused: one case per rule, each with its HTTP status, a stable code and a
/// sentence a person can act on (never echoing a key, salt or verifier).
///
/// Trust-model rows **server (zero access)** (a key that is not passphrase-locked is refused: the
/// server must never hold a usable private key) and **transport (network), low trust** (a bad
/// request changes nothing: every check runs before the one write transaction).
public enum SignupRefusal: RampartError, Sendable, Equatable {
    /// Sign-up is closed on this server and no invitation code was given.
    case closed
    /// The invitation code is unknown, already used or expired.
    case invitationInvalid
    /// The username breaks a rule (length, characters, reserved); the reason says which.
    case usernameInvalid(String)
    /// Another account has this username (compared without regard to case).
    case usernameTaken(String)
    /// The address is not `local@domain` of the allowed characters.
    case addressInvalid(String)
    /// The address is in another domain than the server's.
    case addressDomain(address: String, domain: String)
    /// Another account has this address.
    case addressTaken(String)
    /// The private key is not locked with a passphrase (or a secret part is unprotected).
    case keyNotLocked
    /// The key does not match the account: another user id, another key, no encryption subkey.
    case keyMismatch(String)
    /// A field is missing its form: base64, length, a number out of range, unreadable OpenPGP.
    case malformed(field: String, why: String)
    /// Too many sign-ups from this client address: wait.
    case throttled(retryAfterSeconds: Int)

    public var code: String {
        switch self {
        case .closed: "signup.closed"
        case .invitationInvalid: "signup.invitationInvalid"
        case .usernameInvalid: "signup.usernameInvalid"
        case .usernameTaken: "signup.usernameTaken"
        case .addressInvalid: "signup.addressInvalid"
        case .addressDomain: "signup.addressDomain"
        case .addressTaken: "signup.addressTaken"
        case .keyNotLocked: "signup.keyNotLocked"
        case .keyMismatch: "signup.keyMismatch"
        case .malformed: "signup.malformed"
        case .throttled: "signup.throttled"
        }
    }

    public var message: String {
        switch self {
        case .closed:
            "Sign-up is closed on this server: ask its operator for an invitation code (rampart server invite) and give it with --invite."
        case .invitationInvalid: "The invitation code is unknown, already used or expired; ask the operator for a new one."
        case .usernameInvalid(let why): "The username is not allowed: \(why)."
        case .usernameTaken(let name): "The username \(name) is taken; choose another."
        case .addressInvalid(let why): "The address is not allowed: \(why)."
        case .addressDomain(let address, let domain): "The address \(address) is not in this server's domain (\(domain)); use name@\(domain)."
        case .addressTaken(let address): "The address \(address) is taken; choose another."
        case .keyNotLocked:
            "The private key is not locked with a passphrase; this server stores only locked keys (the client locks it with bcrypt of the password)."
        case .keyMismatch(let why): "The key does not match the account: \(why)."
        case .malformed(let field, let why): "The field \"\(field)\" is malformed: \(why)."
        case .throttled(let seconds): "Too many sign-ups from this address. Wait \(seconds) seconds and try again."
        }
    }

    public var description: String { message }

    public var kind: RampartErrorKind {
        switch self {
        case .usernameInvalid, .addressInvalid, .addressDomain, .malformed: .badInput
        default: .failure
        }
    }

    /// The HTTP status of the answer.
    var status: Int {
        switch self {
        case .closed, .invitationInvalid: 403
        case .usernameTaken, .addressTaken: 409
        case .malformed: 400
        case .throttled: 429
        default: 422
        }
    }
}

/// The username rules of sign-up.
///
/// Trust-model row **username (critical)**: a name ties the account to a person, so it must not
/// impersonate another one. Only ASCII letters, digits, `.`, `-` and `_` are allowed: this also
/// refuses confusables (a Cyrillic "а" in a Latin-looking name, full-width letters, zero-width
/// characters), and names are unique without regard to case (a UNIQUE index with `COLLATE NOCASE`).
public enum UsernameRules {
    /// The shortest and longest username.
    public static let length = 3...40
    /// Names kept for the operator and for mail roles (RFC 2142 and common service names).
    public static let reserved: Set<String> = [
        "admin", "administrator", "postmaster", "abuse", "root", "hostmaster", "webmaster", "support", "security",
        "noreply", "no-reply", "mailer-daemon", "info", "help", "system", "operator", "owner", "rampart", "server",
        "www", "ftp", "usenet", "news", "uucp", "marketing", "sales", "billing", "privacy", "staff",
    ]

    /// The username in lower case, or why it is refused.
    /// - Throws: ``SignupRefusal/usernameInvalid(_:)``.
    public static func check(_ name: String) throws -> String {
        guard length.contains(name.unicodeScalars.count) else {
            throw SignupRefusal.usernameInvalid("it must have \(length.lowerBound) to \(length.upperBound) characters")
        }
        guard name.unicodeScalars.allSatisfy(allowed) else {
            throw SignupRefusal.usernameInvalid(
                "only ASCII letters, digits, \".\", \"-\" and \"_\" are allowed (look-alike letters of other scripts are refused)")
        }
        guard let first = name.unicodeScalars.first, let last = name.unicodeScalars.last,
              isLetterOrDigit(first), isLetterOrDigit(last) else {
            throw SignupRefusal.usernameInvalid("it must start and end with a letter or a digit")
        }
        let lower = name.lowercased()
        guard !reserved.contains(lower) else { throw SignupRefusal.usernameInvalid("\(lower) is reserved") }
        return lower
    }

    static func allowed(_ scalar: Unicode.Scalar) -> Bool { isLetterOrDigit(scalar) || scalar == "." || scalar == "-" || scalar == "_" }
    static func isLetterOrDigit(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
    }
}

/// A sign-up request whose every field was checked (``Signups/check(_:group:domain:)``).
struct CheckedSignup {
    let username: String
    let displayName: String
    let address: String
    let salt: [UInt8]
    let verifier: [UInt8]
    let keySalt: [UInt8]
    let publicKey: PGPPublicKey
    let lockedPrivateKey: String
    /// The recovery copy, checked against ``publicKey`` (``RecoveryCopies/check(_:publicKey:)``).
    let recovery: CheckedRecoveryCopy?
    /// The first address's key, checked against the user key (``KeyList/check(_:userKey:domain:)``).
    let addressKey: CheckedAddressKey
}

/// Sign-up: the checks of a ``SignupRequest`` and the one transaction that creates the account.
///
/// Trust-model rows **server (zero access)** — what is stored is the SRP salt and verifier, the
/// key salt, the public key and the private key locked by the client (checked with RNP to be
/// passphrase-protected), never a password or a passphrase — and **username (critical)**.
enum Signups {
    /// The largest armored key accepted (a v4 Ed25519 + Curve25519 key is about 1 KiB).
    static let maximumKeyCharacters = 32 * 1024

    /// Checks every field; nothing is written.
    /// - Throws: ``SignupRefusal``.
    static func check(_ request: SignupRequest, group: SRPGroup, domain: String) throws -> CheckedSignup {
        let username = try UsernameRules.check(request.username)
        let displayName = request.displayName.trimmingCharacters(in: .whitespaces)
        guard (1...100).contains(displayName.count),
              !displayName.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "<" || $0 == ">" || $0 == "\"" })
        else { throw SignupRefusal.malformed(field: "DisplayName", why: "it must have 1 to 100 characters, without control characters, quotes or angle brackets") }
        let address = try checkAddress(request.address, domain: domain)
        guard request.version == SRPPassword.version else {
            throw SignupRefusal.malformed(field: "Version", why: "this server takes SRP auth version \(SRPPassword.version)")
        }
        let salt = try bytes(request.salt, field: "Salt", count: SRPPassword.saltCount...SRPPassword.saltCount)
        let verifier = try bytes(request.verifier, field: "Verifier", count: SRPGroup.byteCount...SRPGroup.byteCount)
        guard (try? SRPServer(group: group, verifier: verifier)) != nil else {
            throw SignupRefusal.malformed(field: "Verifier", why: "it must be a number in 2..<N of the server's group")
        }
        let keySalt = try bytes(request.keySalt, field: "KeySalt", count: MailboxKey.keySaltCount...MailboxKey.keySaltCount)
        let publicKey = try checkLockedKey(publicKey: request.publicKey, privateKey: request.privateKey, address: address)
        guard let upload = request.addressKey else {
            throw SignupRefusal.malformed(field: "AddressKey", why: "the address's key (locked with a token of the user key) is missing")
        }
        let addressKey = try KeyList.check(upload, userKey: publicKey, domain: domain)
        guard addressKey.address == address else {
            throw SignupRefusal.keyMismatch("the address key is for \(addressKey.address), not \(address)")
        }
        let recovery: CheckedRecoveryCopy?
        do {
            recovery = try request.recovery.map { try RecoveryCopies.check($0, publicKey: publicKey) }
        } catch RecoveryRefusal.copyInvalid(let why) {
            throw SignupRefusal.malformed(field: "Recovery", why: why)
        }
        return CheckedSignup(username: username, displayName: displayName, address: address, salt: salt, verifier: verifier,
                             keySalt: keySalt, publicKey: publicKey, lockedPrivateKey: request.privateKey, recovery: recovery,
                             addressKey: addressKey)
    }

    /// A public key and its private half, checked: one armored public key that can encrypt, one
    /// armored secret key with every secret part present and passphrase-locked, the same
    /// fingerprint, user ids naming exactly `address` (the user key at sign-up and each address key).
    /// - Parameter field: the request field holding the pair (empty: the request itself), named in refusals.
    /// - Throws: ``SignupRefusal``.
    static func checkLockedKey(publicKey armoredPublic: String, privateKey armoredPrivate: String, address: String,
                               field: String = "") throws -> PGPPublicKey {
        let name = field.isEmpty ? "" : "\(field).", whose = field.isEmpty ? "" : "the address key: "
        guard armoredPublic.utf8.count <= maximumKeyCharacters, let publicKey = try? PGPPublicKey(armored: armoredPublic) else {
            throw SignupRefusal.malformed(field: "\(name)PublicKey", why: "it is not one armored OpenPGP public key")
        }
        let inspection: PGPSecretKeyInspection
        do {
            guard armoredPrivate.utf8.count <= maximumKeyCharacters, OpenPGP.isArmored(Data(armoredPrivate.utf8)) else {
                throw OpenPGPError.malformed("not armored")
            }
            inspection = try PGPPrivateKey.inspectLocked(armored: armoredPrivate)
        } catch {
            throw SignupRefusal.malformed(field: "\(name)PrivateKey", why: "it is not one armored OpenPGP secret key")
        }
        guard inspection.everySecretPartLocked else { throw SignupRefusal.keyNotLocked }
        guard inspection.hasEverySecretPart else {
            throw SignupRefusal.malformed(field: "\(name)PrivateKey", why: "a secret part (primary key or subkey) is missing")
        }
        guard inspection.publicKey.fingerprint == publicKey.fingerprint else {
            throw SignupRefusal.keyMismatch("\(whose)the private key (\(inspection.publicKey.fingerprint.hex)) is not the public key's (\(publicKey.fingerprint.hex))")
        }
        for key in [publicKey, inspection.publicKey] where key.addresses.map({ $0.lowercased() }) != [address] {
            throw SignupRefusal.keyMismatch("\(whose)its user id names \(key.addresses.isEmpty ? "no address" : key.addresses.joined(separator: ", ")), not \(address)")
        }
        guard publicKey.canEncrypt else { throw SignupRefusal.keyMismatch("\(whose)it has no encryption subkey") }
        return publicKey
    }

    /// `local@domain`, the local part of the username's characters, the domain the server's.
    static func checkAddress(_ address: String, domain: String) throws -> String {
        let lower = address.lowercased()
        let parts = lower.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, lower.utf8.count <= 254 else {
            throw SignupRefusal.addressInvalid("it must be name@domain")
        }
        guard parts[0].unicodeScalars.count <= 64, parts[0].unicodeScalars.allSatisfy(UsernameRules.allowed),
              parts[1].unicodeScalars.allSatisfy({ UsernameRules.allowed($0) && $0 != "_" }) else {
            throw SignupRefusal.addressInvalid("only ASCII letters, digits, \".\", \"-\" and \"_\" are allowed (at most 64 before the @)")
        }
        guard parts[1] == Substring(domain.lowercased()) else { throw SignupRefusal.addressDomain(address: lower, domain: domain.lowercased()) }
        guard !UsernameRules.reserved.contains(String(parts[0])) else { throw SignupRefusal.addressInvalid("\(parts[0]) is reserved") }
        return lower
    }

    static func bytes(_ text: String, field: String, count: ClosedRange<Int>) throws -> [UInt8] {
        guard text.utf8.count <= (count.upperBound + 2) / 3 * 4, let data = Data(base64Encoded: text), count.contains(data.count) else {
            let size = count.count == 1 ? "\(count.lowerBound)" : "\(count.lowerBound) to \(count.upperBound)"
            throw SignupRefusal.malformed(field: field, why: "it must be base64 of \(size) bytes")
        }
        return [UInt8](data)
    }
}

extension Accounts {
    /// Checks `request` and creates the account in one write transaction: the invitation is
    /// consumed (unless sign-up is open), the user row, its address, SRP salt + verifier, system
    /// labels and their events are inserted. A refusal or a failure rolls all of it back; two
    /// sign-ups racing for one name (any case) cannot both win: a UNIQUE index decides.
    /// - Throws: ``SignupRefusal``, ``ServerError/storage(_:)``.
    func signUp(_ request: SignupRequest, group: SRPGroup, policy: SignupPolicy) throws -> SignupResponse {
        let checked = try Signups.check(request, group: group, domain: policy.domain)
        let userID = BackendStore.newID("u")
        let now = Int64(clock.now.timeIntervalSince1970)
        try store.write { db in
            if !policy.open {
                guard let code = request.invitation, !code.isEmpty else { throw SignupRefusal.closed }
                try db.execute(sql: "UPDATE invitations SET used = ?, usedBy = ? WHERE codeHash = ? AND used IS NULL AND expires > ?",
                               arguments: [now, userID, Invitations.hash(code), now])
                guard db.changesCount == 1 else { throw SignupRefusal.invitationInvalid }
            }
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM users WHERE username = ? COLLATE NOCASE)",
                                 arguments: [checked.username]) == true {
                throw SignupRefusal.usernameTaken(checked.username)
            }
            if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM addresses WHERE address = ? COLLATE NOCASE)",
                                 arguments: [checked.address]) == true {
                throw SignupRefusal.addressTaken(checked.address)
            }
            let addresses = String(decoding: try JSONEncoder().encode([checked.address]), as: UTF8.self)
            do {
                try db.execute(sql: """
                    INSERT INTO users (id, username, displayName, addresses, passwordSalt, passwordLogN, passwordHash,
                                       publicKey, sealedPrivateKey, keySalt, created) VALUES (?, ?, ?, ?, x'', 0, x'', ?, ?, ?, ?)
                    """, arguments: [userID, checked.username, checked.displayName, addresses, checked.publicKey.binary,
                                     Data(checked.lockedPrivateKey.utf8), Data(checked.keySalt), now])
            } catch StorageError.uniqueViolation {
                throw SignupRefusal.usernameTaken(checked.username)
            }
            try KeyList.apply(db, .published(userID: userID, key: checked.addressKey), now: now)
            try SRPAuthority.store(db, userID: userID, salt: checked.salt, verifier: checked.verifier)
            if let recovery = checked.recovery { try RecoveryCopies.store(db, userID: userID, copy: recovery, now: now) }
            for (id, name) in [(SystemLabel.inbox, "Inbox"), (SystemLabel.sent, "Sent"),
                               (SystemLabel.archive, "Archive"), (SystemLabel.trash, "Trash")] {
                try db.execute(sql: "INSERT INTO labels (userId, id, name) VALUES (?, ?, ?)", arguments: [userID, id, name])
                try BackendStore.appendEvent(db, userID: userID, kind: .label, action: .create, objectID: id)
            }
        }
        return SignupResponse(userId: userID, username: checked.username, address: checked.address)
    }
}

/// Who may sign up, and in which domain.
///
/// Trust-model row **server (zero access)** / *server abuse*: sign-up is closed unless the operator
/// opens it (`rampart server start --open-signup`) or hands out single-use invitation codes
/// (`rampart server invite`). Human verification (captcha, e-mail or SMS codes) is out of scope.
public struct SignupPolicy: Sendable, Equatable {
    /// Anyone may sign up (no invitation needed).
    public var open: Bool
    /// The domain every address is made in.
    public var domain: String
    /// The default domain of the embedded server.
    public static let defaultDomain = "rampart.test"
    /// A policy.
    public init(open: Bool = false, domain: String = SignupPolicy.defaultDomain) { self.open = open; self.domain = domain.lowercased() }

    /// The file in the data folder that keeps the operator's choice: `{"open": true|false}` (0600).
    public static let fileName = "signup.json"

    /// The operator's choice for the data folder: `open` (from `--open-signup` or
    /// `--no-open-signup`) is stored and returned; nil reads what was stored last (closed when
    /// nothing was), so a restart keeps sign-up as the operator left it.
    /// - Throws: ``ServerError/startFailed(_:)`` when the file cannot be read or written.
    public static func persisted(dataDirectory: URL, open: Bool?) throws -> SignupPolicy {
        struct Stored: Codable { var open: Bool }
        let file = dataDirectory.standardizedFileURL.appendingPathComponent(fileName)
        do {
            if let open {
                try PrivateFiles.ensurePrivateDirectory(dataDirectory.standardizedFileURL)
                try PrivateFiles.writeAtomically(try JSONEncoder().encode(Stored(open: open)), to: file)
                return SignupPolicy(open: open)
            }
            guard FileManager.default.fileExists(atPath: file.path) else { return SignupPolicy() }
            return SignupPolicy(open: try JSONDecoder().decode(Stored.self, from: Data(contentsOf: file)).open)
        } catch {
            throw ServerError.startFailed("the sign-up setting \(file.path) cannot be used (\(error)); fix or delete it, or give --open-signup or --no-open-signup")
        }
    }
}

/// Single-use invitation codes: 128 random bits shown once (`rmi-` + 32 hex digits), stored only
/// as their SHA-256 in the `invitations` table with an expiry; a sign-up consumes one in its own
/// transaction.
///
/// Trust-model row **access token (high)**, by analogy: a copy of the database gives no usable code.
public enum Invitations {
    /// The default lifetime of a code: 7 days.
    public static let defaultLifetime: TimeInterval = 7 * 86_400

    static func hash(_ code: String) -> Data { Data(SHA256.hash(data: Data(code.trimmingCharacters(in: .whitespaces).utf8))) }

    /// A new code, stored hashed; returns the code (to be shown once).
    static func create(in store: BackendStore, now: Date, lifetime: TimeInterval) throws -> String {
        let code = "rmi-" + SymmetricKey(size: .bits128).withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
        let created = Int64(now.timeIntervalSince1970)
        try store.write { db in
            try db.execute(sql: "INSERT INTO invitations (codeHash, created, expires) VALUES (?, ?, ?)",
                           arguments: [hash(code), created, created + Int64(lifetime)])
        }
        return code
    }

    /// Reads a lifetime such as `7d`, `12h`, `30m`, `90s` or a number of seconds.
    /// - Throws: ``ServerError/badRequest(_:)`` for anything else, or a lifetime outside 1 minute–365 days.
    public static func lifetime(_ text: String) throws -> TimeInterval {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        var number = Substring(text.trimmingCharacters(in: .whitespaces).lowercased())
        var unit = 1.0
        if let last = number.last, let factor = units[last] { unit = factor; number = number.dropLast() }
        guard let value = Double(number), value.isFinite, (60...365 * 86_400).contains(value * unit) else {
            throw ServerError.badRequest("an invitation lifetime is a number with s, m, h, d or w (for example 7d), from 1 minute to 365 days")
        }
        return value * unit
    }

    /// The `invitations` table and the case-insensitive UNIQUE indexes of usernames and addresses.
    static func registerMigration(_ migrator: inout StorageMigrator) {
        migrator.registerMigration("signup-v1") { db in
            try db.execute(sql: """
                CREATE UNIQUE INDEX users_username_nocase ON users(username COLLATE NOCASE);
                CREATE UNIQUE INDEX addresses_address_nocase ON addresses(address COLLATE NOCASE);
                CREATE TABLE invitations (
                    codeHash BLOB PRIMARY KEY NOT NULL,
                    created INTEGER NOT NULL,
                    expires INTEGER NOT NULL,
                    used INTEGER,
                    usedBy TEXT);
                """)
        }
    }
}

extension EmbeddedServer {
    /// Makes a single-use invitation code in the backend of `dataDirectory` (the server may be
    /// running) and returns it; only its hash is stored (`rampart server invite`).
    /// - Throws: ``ServerError`` (storage, a bad folder).
    public static func createInvitation(dataDirectory: URL, lifetime: TimeInterval = Invitations.defaultLifetime,
                                        now: Date = Date(), storage: ServerStorageOpener? = nil) throws -> String {
        try Invitations.create(in: try openStore(dataDirectory, storage: storage), now: now, lifetime: lifetime)
    }
}
