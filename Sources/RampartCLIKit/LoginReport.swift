import Foundation
import RampartClient
import RampartCore

/// What `rampart signup` prints after its login, in the words of `rampart login`: who is logged in,
/// the new MainKey (protector none until `rampart protect`), and whether push was registered (a
/// warning on standard error when not; the login still succeeded).
///
/// Trust-model rows **MainKey** and **push payload key**: the key's fingerprint only, never a secret.
public enum LoginReport {
    public static func print(_ result: LoginResult, endpoint: ServerEndpoint, localUser: UserID) {
        let session = result.session
        Swift.print("Logged in as \(session.username) (\(session.addresses.first ?? session.serverUserID)) on \(endpoint.url.absoluteString); local account '\(localUser)'.")
        Swift.print("MainKey \(result.mainKeyFingerprint) created (protector: none). Protect it: rampart protect --pin")
        if let problem = result.pushProblem {
            FileHandle.standardError.write(Data("rampart: warning: push notifications not registered: \(problem)\n".utf8))
        } else {
            Swift.print("Push notifications registered for session \(session.sessionID).")
        }
    }
}
