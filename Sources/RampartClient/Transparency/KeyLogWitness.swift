import Crypto
import Foundation
import RampartAPI
import RampartCore
import TransparencyLog

/// The witness of a server's key log, as `rampart server witness` runs it: its own Ed25519 key
/// and state file in its own data folder; each round it fetches the log's newest signed head,
/// checks it extends the head it cosigned last (a consistency proof from the server), cosigns it
/// (`cosignature/v1`) and hands the cosignature back to the server, which serves the cosigned head
/// to clients.
///
/// Trust-model row **the user's private and public keys (critical when modified)**: the witness
/// runs apart from the server (another process, its own folder, its own key); a server that forks
/// or rewrites its log gets no cosignature for it, and clients refuse a head without one. Its
/// independence is what this rests on: run it under another account or on another machine.
public struct KeyLogWitness: Sendable {
    /// The witness's folder (0700): `witness-key` (0600) and `state.json` (the head last cosigned).
    public let directory: URL
    /// The key name the witness signs as.
    public let name: String

    public init(directory: URL, name: String = "rampart-witness") {
        self.directory = directory.standardizedFileURL
        self.name = name
    }

    /// The witness's signer (its key made at first use, 0600).
    /// - Throws: ``ClientError/badInput(_:)`` for an unusable folder or key file.
    public func signer() throws -> NoteSigner {
        let url = directory.appendingPathComponent("witness-key")
        do {
            try PrivateFiles.ensurePrivateDirectory(directory)
            if !FileManager.default.fileExists(atPath: url.path) {
                try PrivateFiles.writeAtomically(Curve25519.Signing.PrivateKey().rawRepresentation, to: url)
            }
            try PrivateFiles.checkPrivateFile(url)
            return try NoteSigner(name: name, key: try Curve25519.Signing.PrivateKey(rawRepresentation: Data(contentsOf: url)))
        } catch let error as TransparencyLogError {
            throw ClientError.badInput(error.description)
        } catch {
            throw ClientError.badInput("The witness key \(url.path) cannot be read or made (\(error)).")
        }
    }

    /// The cosignature verifier clients and the server pin (`rampart server start --witness-key`).
    public func verifierKey() throws -> String { try signer().cosignatureVerifier.keyString }

    /// What one round did.
    public enum Round: Sendable, Equatable {
        /// Cosigned the head of this size (new, or the same one again to keep it fresh).
        case cosigned(size: UInt64)
        /// Nothing new, and the last cosignature is fresh enough.
        case unchanged(size: UInt64)
    }

    /// One round against the server of `api`, whose log key is `logKey`.
    /// - Parameters:
    ///   - api: a client of the server (no session needed: the routes are public).
    ///   - logKey: the log's pinned note verifier key (`server.json`'s `keyLog.logKey`).
    ///   - now: the cosignature's time, seconds since 1970.
    ///   - refresh: cosign the same head again when the last cosignature is older (seconds).
    /// - Throws: TransparencyLog's `TransparencyLogError` when the head is not the log's or does not extend the
    ///   last one cosigned (nothing is cosigned, the state file is unchanged).
    public func round(api: APIClient, logKey: String, now: UInt64, refresh: UInt64 = 3600) async throws -> Round {
        let witness = Witness(signer: try signer(), logKey: try NoteVerifier(keyString: logKey),
                              stateFile: directory.appendingPathComponent("state.json"))
        let served = try await api.keyLogCheckpoint()
        var note = try SignedNote(serialized: served.head)
        let offered = try Checkpoint(text: note.text)
        let last = try witness.lastHead()
        if let last, last.size == offered.size, last.rootHash == offered.rootHash.base64,
           now - min(now, last.witnessedAt ?? 0) < refresh {
            return .unchanged(size: offered.size)
        }
        var proof: [LogHash] = []
        if let last, last.size > 0, last.size < offered.size {
            proof = try await api.keyLogConsistency(from: last.size, to: offered.size).proof.map(LogHash.init(base64:))
        }
        let previous = last.flatMap { $0.size == 0 ? nil : $0 }
        if last != nil && previous == nil {
            // The empty tree is a prefix of every tree: nothing to prove.
            try? FileManager.default.removeItem(at: witness.stateFile)
        }
        let cosignature = try witness.cosign(note, consistency: proof, now: now)
        note.signatures.append(cosignature)
        try await api.postKeyLogCosignature(note.serialized)
        return .cosigned(size: offered.size)
    }
}
