import ArgumentParser
import RampartCLIKit
import RampartClient

/// `rampart signup`: makes the account on this device (SRP verifier, key locked with bcrypt of the
/// password), then logs in as `rampart login` does. The logic is RampartClient's ``SignupFlow``.
struct SignupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "signup",
        abstract: "Create an account on a Rampart server from this device, then log in.",
        discussion: """
        The server is given as for `rampart login` (--server-info or --url with pins and modulus key). This \
        device makes the SRP verifier against the server's signed modulus (checked against the pinned modulus \
        key), the OpenPGP user key locked with bcrypt(password, key salt) and the address's key locked with a token \
        the user key encrypts and signs; the server receives neither password nor a cleartext key. One password by default (it also unlocks the key); --two-password takes a \
        separate mailbox password (with --password-stdin and --mailbox-password-stdin: first and second line). \
        A recovery phrase of 12 words is shown once (or written to --recovery-phrase-file FILE, 0600) and a \
        copy of the key locked under it goes to the server: with it, `rampart account recover` sets a new \
        password and old mail still opens. A closed server needs --invite CODE. Human verification (captcha, e-mail or SMS) is out of scope: none is done. Exit \
        statuses as for login; a refused name or address exits 2, any other refusal 1.
        """)
    @OptionGroup var global: GlobalOptions
    @OptionGroup var server: ServerOptions
    @OptionGroup var signup: SignupOptions

    func run() async throws {
        try await withAccountSession(global) { context in
            let endpoint = try server.endpoint()
            let credentials = try signup.credentials()
            let made = try await SignupFlow.signUp(endpoint: endpoint, credentials: credentials, account: context.account,
                                                   keymaker: context.keymaker) { signup.created(username: $0.username, address: $0.address, on: endpoint, phrase: credentials.recoveryPhrase) }
            LoginReport.print(made.login, endpoint: endpoint, localUser: context.userID)
        }
    }
}
