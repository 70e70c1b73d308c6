// The README's "Use it as a library" example, compiled and run by LibraryExampleTests.
// Everything from the first `import` line down is shown in README.md verbatim; a test checks
// that the two stay identical, so edit both together.

import Foundation
import Keymaker
import MailSafety
import RampartCore
import SealedStore

/// Creates a PIN-protected MainKey for one user, stores one message in the sealed store, reads
/// it back and sanitizes its HTML body for display.
func readMailSafely(home: URL, pin: SecretBytes) throws -> SanitizedMessage {
    // The composition: app-wide things (home folder, keychain backend) in a global container,
    // the user's Keymaker and sealed store in a user container.
    let global = GlobalContainer(environment: RampartEnvironment(
        homeDirectory: home, settings: ["keychain.backend": "file"]))   // or "memory"
    let alice = UserContainer(userID: "alice", global: global)

    // A random MainKey, wrapped by a key derived from the PIN (scrypt); the keychain keeps only
    // the wrapped copy. Lock, then unlock with the PIN: the same key comes back.
    let keymaker = alice.keymaker
    try keymaker.createMainKey()
    try keymaker.activate(.pin, credential: .pin(pin))
    keymaker.lock()
    try keymaker.unlock(.pin(pin))

    // The sealed store: subject, sender, recipients and body sealed under a MainKey sub-key.
    let mail = try alice.sealedStore.mail
    try mail.insert(message: MailMessage(
        id: "m1", conversationID: "c1", time: 1_700_000_000, size: 120, labelIDs: ["inbox"],
        subject: "Hello", sender: MailAddress(name: "Bob", address: "bob@example.org"),
        recipients: [MailAddress(address: "alice@example.org")],
        body: #"<p onclick="steal()">Hi Alice <img src="https://tracker.example/p.gif"></p>"#))
    let message = try mail.message(id: "m1")

    // Sanitize before showing: no scripts, remote content blocked until the user allows it.
    return try MailSanitizer().sanitize(message.body)
}
