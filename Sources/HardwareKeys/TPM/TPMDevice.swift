#if os(Linux)
import CTSS2
import Foundation
import RampartCore

/// A sealed data object as stored in an envelope: the marshaled TPM2B_PUBLIC and TPM2B_PRIVATE.
/// The private part is encrypted by the TPM under its storage primary key; only the TPM that
/// made it (same owner seed) can load it.
///
/// Trust-model row: **keychain (low)** — this is what the keychain holds for the hardware
/// protectors; without this TPM it is useless.
public struct TPMSealedObject: Sendable, Equatable {
    public var publicArea: Data
    public var privateArea: Data

    public init(publicArea: Data, privateArea: Data) {
        self.publicArea = publicArea
        self.privateArea = privateArea
    }
}

/// A TPM 2.0 reached through the TPM 2.0 Software Stack (tpm2-tss ESYS API).
///
/// Trust-model row: **secure hardware (high)** — the only highly trusted place. Secrets are
/// sealed into keyedhash objects that are `fixedTPM | fixedParent`, under a storage primary key
/// of the owner hierarchy; with an authorization value (the PIN, stretched to 32 bytes), every
/// guess is checked by the TPM and counted by its dictionary-attack protection.
///
/// Every operation opens its own ESYS context, uses a **salted HMAC session** (salt encrypted to
/// the primary key; AES-128-CFB parameter encryption), and flushes every transient object and
/// session before closing, so it works without a resource manager (swtpm, `/dev/tpm0`): the
/// PIN-derived authorization never crosses the bus in clear, an observer of the bus cannot
/// test PIN guesses against the recorded HMACs, and the unsealed secret travels encrypted.
/// Operations of one process are serialized.
public struct TPMDevice: Sendable {
    public let configuration: TPMConfiguration

    public init(configuration: TPMConfiguration = .fromEnvironment()) {
        self.configuration = configuration
    }

    private static let commandLock = NSLock()
    /// tpm2-tss logs every TPM error to stderr by default; errors are reported by Rampart
    /// instead (TSS2_LOG is respected when set).
    private static let quietLogging: Void = { setenv("TSS2_LOG", "all+NONE", 0); return () }()

    // MARK: Public operations

    /// Reads the TPM's identity and dictionary-attack state.
    public func describe() throws -> TPMDescription {
        try withContext { context in
            let manufacturer = try context.property(0x105, "TPM2_PT_MANUFACTURER") ?? 0
            var vendor = ""
            for index in UInt32(0)..<4 {
                if let part = try context.property(0x106 + index, "TPM2_PT_VENDOR_STRING") { vendor += Self.fourCC(part) }
            }
            return TPMDescription(tcti: context.tcti, manufacturer: Self.fourCC(manufacturer),
                                  vendor: vendor.trimmingCharacters(in: .whitespaces),
                                  dictionaryAttack: try context.dictionaryAttackStatus())
        }
    }

    /// Reads the dictionary-attack counter and parameters.
    public func dictionaryAttackStatus() throws -> TPMDictionaryAttackStatus {
        try withContext { try $0.dictionaryAttackStatus() }
    }

    /// Sets the dictionary-attack parameters (needs the lockout hierarchy's authorization,
    /// empty on a fresh TPM). Provisioning, not normal use: the OS owner usually does this.
    public func setDictionaryAttackParameters(_ parameters: TPMDictionaryAttackParameters,
                                              lockoutAuthorization: SecretBytes? = nil) throws {
        try withContext { context in
            try context.setAuth(lockoutHandle, lockoutAuthorization)
            let rc = Esys_DictionaryAttackParameters(context.esys, lockoutHandle, passwordSession, noHandle, noHandle,
                                                     parameters.maxTries, parameters.recoveryTime, parameters.lockoutRecovery)
            try context.check(rc, "TPM2_DictionaryAttackParameters")
        }
    }

    /// Ends a lockout and zeroes the failure counter (needs the lockout authorization).
    public func resetDictionaryAttackLockout(lockoutAuthorization: SecretBytes? = nil) throws {
        try withContext { context in
            try context.setAuth(lockoutHandle, lockoutAuthorization)
            let rc = Esys_DictionaryAttackLockReset(context.esys, lockoutHandle, passwordSession, noHandle, noHandle)
            try context.check(rc, "TPM2_DictionaryAttackLockReset")
        }
    }

    /// Seals `secret` (at most 128 bytes) into a new object under the storage primary key.
    /// - Parameters:
    ///   - authorization: the object's authValue (at most 32 bytes); nil makes an
    ///     object with an empty authValue that is exempt from DA (noDA), bound to this TPM only.
    ///   - secret: the bytes to seal (the key-encryption key).
    public func seal(_ secret: SecretBytes, authorization: SecretBytes?) throws -> TPMSealedObject {
        try withContext { context in
            let primary = try context.createStoragePrimary()
            let session = try context.startSaltedSession(tpmKey: primary)
            try context.setSessionAttributes(session, decrypt: true, encrypt: false)

            var template = TPM2B_PUBLIC()
            rampart_tpm_sealed_object_template(&template, authorization == nil ? 1 : 0)
            var sensitive = TPM2B_SENSITIVE_CREATE()
            defer { rampart_tpm_zero(&sensitive, MemoryLayout<TPM2B_SENSITIVE_CREATE>.size) }
            let filled: Int32
            do {
                filled = try secret.withUnsafeBytes { data in
                    try (authorization ?? SecretBytes(count: 0) { _ in }).withUnsafeBytes { auth in
                        rampart_tpm_sensitive_create(&sensitive, auth.bindMemory(to: UInt8.self).baseAddress, auth.count,
                                                     data.bindMemory(to: UInt8.self).baseAddress, data.count)
                    }
                }
            } catch {
                throw HardwareKeysError.credentialMismatch("the secret or the authorization was wiped")
            }
            guard filled == 0 else { throw HardwareKeysError.credentialMismatch("secret over 128 bytes or authorization over 32 bytes") }
            var outsideInfo = TPM2B_DATA()
            var pcrs = TPML_PCR_SELECTION()
            var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
            var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
            let rc = Esys_Create(context.esys, primary, session, noHandle, noHandle, &sensitive, &template,
                                 &outsideInfo, &pcrs, &outPrivate, &outPublic, nil, nil, nil)
            defer { Esys_Free(outPrivate); Esys_Free(outPublic) }
            try context.check(rc, "TPM2_Create")
            guard let outPrivate, let outPublic else {
                throw HardwareKeysError.commandFailed(command: "TPM2_Create", responseCode: 0, message: "no object returned")
            }
            return TPMSealedObject(publicArea: try Self.marshal(outPublic), privateArea: try Self.marshal(outPrivate))
        }
    }

    /// Loads `object` under the storage primary key and unseals it with `authorization`.
    /// - Throws: ``HardwareKeysError/wrongAuthorization(responseCode:)`` (counted by the TPM),
    ///   ``HardwareKeysError/lockedOut(_:)``, ``HardwareKeysError/sealedObjectFromAnotherTPM(responseCode:)``.
    public func unseal(_ object: TPMSealedObject, authorization: SecretBytes?) throws -> SecretBytes {
        var publicArea = try Self.unmarshalPublic(object.publicArea)
        var privateArea = try Self.unmarshalPrivate(object.privateArea)
        guard rampart_tpm_object_type(&publicArea) == 0x0008 else {
            throw HardwareKeysError.corruptParameters("the TPM object is not a sealed data object")
        }
        let attributes = rampart_tpm_object_attributes(&publicArea)
        let required: UInt32 = 0x2 | 0x10 | 0x40 // fixedTPM | fixedParent | userWithAuth
        guard attributes & required == required else {
            throw HardwareKeysError.corruptParameters("the sealed object is not fixedTPM/fixedParent/userWithAuth")
        }
        return try withContext { context in
            let primary = try context.createStoragePrimary()
            let session = try context.startSaltedSession(tpmKey: primary)
            try context.setSessionAttributes(session, decrypt: false, encrypt: false)
            var loaded: UInt32 = noHandle
            let loadRC = Esys_Load(context.esys, primary, session, noHandle, noHandle, &privateArea, &publicArea, &loaded)
            if loadRC != 0, TPMResponseCode.isFromTPM(loadRC) {
                let base = TPMResponseCode.base(loadRC)
                // Integrity / unmarshaling / key-size failures of the private blob: another parent seed.
                if base == TPMResponseCode.integrity || base == 0x0A7 /* sensitive */ || base == 0x095 /* size */
                    || base == 0x09A /* key size */ || base == 0x0A5 /* binding */ {
                    throw HardwareKeysError.sealedObjectFromAnotherTPM(responseCode: loadRC)
                }
            }
            try context.check(loadRC, "TPM2_Load")
            context.track(loaded)
            try context.setAuth(loaded, authorization)
            try context.setSessionAttributes(session, decrypt: false, encrypt: true)
            var outData: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
            let rc = Esys_Unseal(context.esys, loaded, session, noHandle, noHandle, &outData)
            defer {
                if let outData { rampart_tpm_zero(outData, MemoryLayout<TPM2B_SENSITIVE_DATA>.size) }
                Esys_Free(outData)
            }
            try context.check(rc, "TPM2_Unseal")
            guard let outData else {
                throw HardwareKeysError.commandFailed(command: "TPM2_Unseal", responseCode: 0, message: "no data returned")
            }
            let length = Int(outData.pointee.size)
            guard length > 0, length <= 128 else { throw HardwareKeysError.corruptParameters("unsealed \(length) bytes") }
            return SecretBytes(count: length) { buffer in
                _ = rampart_tpm_sensitive_data_copy(outData, buffer.bindMemory(to: UInt8.self).baseAddress, buffer.count)
            }
        }
    }

    // MARK: Context

    private func withContext<R>(_ body: (TPMContext) throws -> R) throws -> R {
        _ = Self.quietLogging
        guard let tcti = configuration.tcti else { throw HardwareKeysError.noTPM(configuration.origin) }
        Self.commandLock.lock()
        defer { Self.commandLock.unlock() }
        let context = try TPMContext(tcti: tcti)
        defer { context.close() }
        return try body(context)
    }

    // MARK: Marshaling

    static func marshal(_ value: UnsafePointer<TPM2B_PUBLIC>) throws -> Data {
        try marshal(value, named: "TPM2B_PUBLIC", Tss2_MU_TPM2B_PUBLIC_Marshal)
    }

    static func marshal(_ value: UnsafePointer<TPM2B_PRIVATE>) throws -> Data {
        try marshal(value, named: "TPM2B_PRIVATE", Tss2_MU_TPM2B_PRIVATE_Marshal)
    }

    static func unmarshalPublic(_ data: Data) throws -> TPM2B_PUBLIC {
        try unmarshal(data, into: TPM2B_PUBLIC(), named: "TPM2B_PUBLIC", Tss2_MU_TPM2B_PUBLIC_Unmarshal)
    }

    static func unmarshalPrivate(_ data: Data) throws -> TPM2B_PRIVATE {
        try unmarshal(data, into: TPM2B_PRIVATE(), named: "TPM2B_PRIVATE", Tss2_MU_TPM2B_PRIVATE_Unmarshal)
    }

    /// Marshals a TPM2B structure with its `Tss2_MU_*_Marshal` function.
    private static func marshal<T>(
        _ value: UnsafePointer<T>, named name: String,
        _ marshalFunction: (UnsafePointer<T>?, UnsafeMutablePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?) -> TSS2_RC
    ) throws -> Data {
        var buffer = [UInt8](repeating: 0, count: MemoryLayout<T>.size)
        var offset = 0
        let rc = marshalFunction(value, &buffer, buffer.count, &offset)
        guard rc == 0 else { throw HardwareKeysError.commandFailed(command: "marshal \(name)", responseCode: rc, message: decode(rc)) }
        return Data(buffer.prefix(offset))
    }

    /// Unmarshals a TPM2B structure with its `Tss2_MU_*_Unmarshal` function; the whole of `data`
    /// must decode.
    private static func unmarshal<T>(
        _ data: Data, into initial: T, named name: String,
        _ unmarshalFunction: (UnsafePointer<UInt8>?, Int, UnsafeMutablePointer<Int>?, UnsafeMutablePointer<T>?) -> TSS2_RC
    ) throws -> T {
        var value = initial
        var offset = 0
        let bytes = [UInt8](data)
        let rc = unmarshalFunction(bytes, bytes.count, &offset, &value)
        guard rc == 0, offset == bytes.count else { throw HardwareKeysError.corruptParameters("\(name) does not decode") }
        return value
    }

    static func decode(_ rc: UInt32) -> String {
        guard let text = Tss2_RC_Decode(rc) else { return "unknown" }
        return String(cString: text)
    }

    static func fourCC(_ value: UInt32) -> String {
        let bytes = [24, 16, 8, 0].map { UInt8((value >> UInt32($0)) & 0xFF) }.filter { $0 >= 0x20 && $0 < 0x7F }
        return String(decoding: bytes, as: UTF8.self)
    }
}

// ESYS handle constants (tss2_esys.h; the macros do not import into Swift with their types).
let noHandle: UInt32 = 0xFFF
let passwordSession: UInt32 = 0x0FF
let ownerHandle: UInt32 = 0x101
let lockoutHandle: UInt32 = 0x10A

/// One ESYS context over one TCTI, with the transient handles it created (flushed at close).
final class TPMContext {
    let tcti: String
    private(set) var esys: OpaquePointer?
    private var tctiContext: OpaquePointer?
    private var transients: [UInt32] = []

    init(tcti: String) throws {
        self.tcti = tcti
        var loaded: OpaquePointer?
        let rc = Tss2_TctiLdr_Initialize(tcti, &loaded)
        guard rc == 0, let loaded else {
            throw HardwareKeysError.tctiUnavailable(tcti: tcti, responseCode: rc, message: TPMDevice.decode(rc))
        }
        tctiContext = loaded
        var context: OpaquePointer?
        let esysRC = Esys_Initialize(&context, loaded, nil)
        guard esysRC == 0, context != nil else {
            Tss2_TctiLdr_Finalize(&tctiContext)
            throw HardwareKeysError.tctiUnavailable(tcti: tcti, responseCode: esysRC, message: TPMDevice.decode(esysRC))
        }
        esys = context
    }

    func track(_ handle: UInt32) { transients.append(handle) }

    /// Flushes every transient object and session, then closes the context and the TCTI.
    func close() {
        for handle in transients.reversed() { _ = Esys_FlushContext(esys, handle) }
        transients.removeAll()
        if esys != nil { Esys_Finalize(&esys) }
        if tctiContext != nil { Tss2_TctiLdr_Finalize(&tctiContext) }
    }

    /// Maps a response code to an error (success passes).
    func check(_ rc: UInt32, _ command: String) throws {
        guard rc != 0 else { return }
        if TPMResponseCode.isFromTPM(rc) {
            switch TPMResponseCode.base(rc) {
            case TPMResponseCode.authFail, TPMResponseCode.badAuth:
                throw HardwareKeysError.wrongAuthorization(responseCode: rc)
            case TPMResponseCode.lockout:
                let status = (try? dictionaryAttackStatus()).map(\.description) ?? "TPM_RC_LOCKOUT"
                throw HardwareKeysError.lockedOut(status)
            default: break
            }
        }
        let layer = rc >> 16
        if layer == 0x0A { // TCTI layer: the connection broke
            throw HardwareKeysError.tctiUnavailable(tcti: tcti, responseCode: rc, message: TPMDevice.decode(rc))
        }
        throw HardwareKeysError.commandFailed(command: command, responseCode: rc, message: TPMDevice.decode(rc))
    }

    func property(_ property: UInt32, _ name: String) throws -> UInt32? {
        var value: UInt32 = 0
        var found: Int32 = 0
        try check(rampart_tpm_property(esys, property, &value, &found), "TPM2_GetCapability(\(name))")
        return found != 0 ? value : nil
    }

    func dictionaryAttackStatus() throws -> TPMDictionaryAttackStatus {
        let permanent = try property(0x200, "TPM2_PT_PERMANENT") ?? 0
        return TPMDictionaryAttackStatus(
            failedTries: try property(0x20E, "TPM2_PT_LOCKOUT_COUNTER") ?? 0,
            parameters: TPMDictionaryAttackParameters(
                maxTries: try property(0x20F, "TPM2_PT_MAX_AUTH_FAIL") ?? 0,
                recoveryTime: try property(0x210, "TPM2_PT_LOCKOUT_INTERVAL") ?? 0,
                lockoutRecovery: try property(0x211, "TPM2_PT_LOCKOUT_RECOVERY") ?? 0
            ),
            inLockout: permanent & 0x200 != 0
        )
    }

    func setAuth(_ handle: UInt32, _ authorization: SecretBytes?) throws {
        var auth = TPM2B_AUTH()
        defer { rampart_tpm_zero(&auth, MemoryLayout<TPM2B_AUTH>.size) }
        if let authorization {
            let filled: Int32
            do {
                filled = try authorization.withUnsafeBytes { rampart_tpm_auth(&auth, $0.bindMemory(to: UInt8.self).baseAddress, $0.count) }
            } catch {
                throw HardwareKeysError.credentialMismatch("the authorization was wiped")
            }
            guard filled == 0 else { throw HardwareKeysError.credentialMismatch("authorization over 64 bytes") }
        }
        try check(Esys_TR_SetAuth(esys, handle, &auth), "Esys_TR_SetAuth")
    }

    /// Creates the deterministic storage primary key under the owner hierarchy.
    func createStoragePrimary() throws -> UInt32 {
        var sensitive = TPM2B_SENSITIVE_CREATE()
        var template = TPM2B_PUBLIC()
        rampart_tpm_storage_primary_template(&template)
        var outsideInfo = TPM2B_DATA()
        var pcrs = TPML_PCR_SELECTION()
        var handle: UInt32 = noHandle
        let rc = Esys_CreatePrimary(esys, ownerHandle, passwordSession, noHandle, noHandle, &sensitive, &template,
                                    &outsideInfo, &pcrs, &handle, nil, nil, nil, nil)
        if rc != 0, TPMResponseCode.isFromTPM(rc), TPMResponseCode.base(rc) == TPMResponseCode.badAuth {
            throw HardwareKeysError.ownerAuthorizationRequired
        }
        try check(rc, "TPM2_CreatePrimary")
        track(handle)
        return handle
    }

    /// Starts an HMAC session salted with `tpmKey` (ECDH to the primary key), SHA-256,
    /// AES-128-CFB parameter encryption.
    func startSaltedSession(tpmKey: UInt32) throws -> UInt32 {
        var symmetric = TPMT_SYM_DEF()
        rampart_tpm_session_symmetric(&symmetric)
        var session: UInt32 = noHandle
        let rc = Esys_StartAuthSession(esys, tpmKey, noHandle, noHandle, noHandle, noHandle, nil,
                                       0x00 /* TPM2_SE_HMAC */, &symmetric, 0x000B /* SHA-256 */, &session)
        try check(rc, "TPM2_StartAuthSession")
        track(session)
        return session
    }

    func setSessionAttributes(_ session: UInt32, decrypt: Bool, encrypt: Bool) throws {
        var flags: UInt8 = 0x01 // continueSession: flushed explicitly at close
        if decrypt { flags |= 0x20 }
        if encrypt { flags |= 0x40 }
        try check(Esys_TRSess_SetAttributes(esys, session, flags, 0xFF), "Esys_TRSess_SetAttributes")
    }
}
#endif
