// Fuzz target: the file keychain's item format, read back from disk through FileKeychain's
// public API (read, accessibility(of:), itemIDs(accessGroup:)).
//
// Modes (first byte, bit 1 picks a portable or a this-device-only item):
// - raw: the bytes replace the item's file;
// - tamper: the item's real file, edited as the input says (Mutations).
// Oracle: read returns the stored value when the file is unchanged and throws a typed
// KeychainError whenever a byte changed (the header is the AEAD's associated data); listing
// never crashes and never lists an item the file does not hold.
import Foundation
import FuzzSupport
import Keychain
import RampartCore

let target = "keychain"

struct Fixture {
    let keychain: FileKeychain
    let items: [(KeychainItemID, [UInt8], URL)]
    let value: [UInt8] = Array("a keychain secret for the fuzzer".utf8)

    init() {
        let folder = ScratchFiles.folder.appendingPathComponent("keychain")
        let machine = ScratchFiles.write(Array("0123456789abcdef0123456789abcdef\n".utf8), "machine-id")
        keychain = FileKeychain(directory: folder, machineIdentity: MachineIdentity(sources: [machine]))
        var items: [(KeychainItemID, [UInt8], URL)] = []
        for (account, accessibility) in [("portable", KeychainAccessibility.afterFirstUnlock), ("device", .whenUnlockedThisDeviceOnly)] {
            let id = KeychainItemID(service: "rampart.fuzz", account: account)
            do {
                try keychain.add(SecretBytes(copying: value), for: id, accessibility: accessibility)
            } catch {
                Fuzz.violation(target, "setup: \(error)")
            }
            let url = keychain.itemFile(id)
            items.append((id, [UInt8](FileManager.default.contents(atPath: url.path)!), url))
        }
        self.items = items
    }
}

let fixture = Fixture()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeychain(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var reader = FuzzReader(Fuzz.bytes(data, size))
    let mode = reader.byte()
    let (id, original, url) = fixture.items[Int(mode >> 1) % 2]
    let file = mode % 2 == 0 ? reader.rest() : Mutations.apply(original, &reader)
    // Replace the file (same name, private permissions), as an attacker with disk access would.
    let temporary = url.deletingLastPathComponent().appendingPathComponent(".fuzz.tmp")
    ScratchFiles.writeFile(file, to: temporary)
    rename(temporary.path, url.path)
    defer {
        ScratchFiles.writeFile(original, to: temporary)
        rename(temporary.path, url.path)
    }
    let value: [UInt8]?
    do {
        value = try fixture.keychain.read(id).withUnsafeBytes { Array($0) }
    } catch is KeychainError {
        value = nil
    } catch {
        Fuzz.violation(target, "read threw an untyped error: \(error)")
    }
    if file == original {
        Fuzz.check(value == fixture.value, target, "an untouched item did not read back")
    } else {
        Fuzz.check(value == nil, target, "an edited item file was accepted (\(original.count) → \(file.count) bytes)")
    }
    _ = try? fixture.keychain.accessibility(of: id)
    if let ids = try? fixture.keychain.itemIDs(accessGroup: .app) {
        Fuzz.check(ids.allSatisfy { listed in fixture.items.contains { $0.0 == listed } }, target, "listing shows an item that is not stored: \(ids)")
    }
    return 0
}

/// The process entry point (see `Fuzz.main`).
@_cdecl("fuzz_keychain_main")
public func fuzzKeychainMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    Fuzz.main(argc, argv, fuzzKeychain)
}
