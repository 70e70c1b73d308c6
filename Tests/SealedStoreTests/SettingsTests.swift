import Foundation
import GRDB
import RampartCore
import Testing
@testable import SealedStore

@Suite struct SettingsIntegrityTests {
    let chosen = PrivacySettings(autoLoadRemoteContent: true, stripImageMetadata: false,
                                 trustedSenders: ["news@shop.example"], autolock: .afterMinutes(10))

    @Test func nothingStoredGivesSafeDefaultsWithoutWarning() throws {
        let fixture = try StoreFixture()
        let readout = try fixture.store.privacySettings()
        #expect(readout.settings == .safeDefaults)
        #expect(readout.warnings.isEmpty)
        #expect(PrivacySettings.safeDefaults.autoLoadRemoteContent == false)
        #expect(PrivacySettings.safeDefaults.stripImageMetadata == true)
    }

    @Test func storedSettingsRoundTrip() throws {
        let fixture = try StoreFixture()
        try fixture.store.setPrivacySettings(chosen)
        try fixture.reopen()
        let readout = try fixture.store.privacySettings()
        #expect(readout.settings == chosen)
        #expect(readout.warnings.isEmpty)
    }

    @Test func blockAllRemoteContentIsStoredAndAStoreWrittenBeforeItReadsItAsOff() throws {
        let fixture = try StoreFixture()
        var blocking = chosen
        blocking.blockAllRemoteContent = true
        try fixture.store.setPrivacySettings(blocking)
        try fixture.reopen()
        #expect(try fixture.store.privacySettings().settings.blockAllRemoteContent == true)
        // The four rows an older version wrote (no blockAllRemoteContent): an authentic set, read as off.
        let older = ["autoLoadRemoteContent", "stripImageMetadata", "trustedSenders", "autolock"]
        try fixture.store.mutate(.settings) { db, keys, state in
            try SealedStore.store(blocking, in: db, user: fixture.store.user, key: keys.settingsKey!, state: state, names: older)
        }
        fixture.store.forgetChecks([StoreState.settingsTable])
        try fixture.reopen()
        let readout = try fixture.store.privacySettings()
        #expect(readout.warnings.isEmpty)
        #expect(readout.settings == chosen && !readout.settings.blockAllRemoteContent)
        #expect(try fixture.store.currentPool!.read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM settings") } == 4)
        // Saving again stores the new setting with the others.
        try fixture.store.setPrivacySettings(blocking)
        #expect(try fixture.store.privacySettings() == PrivacySettingsReadout(settings: blocking, warnings: []))
        // Changed on disk, it falls back to off with a warning like every other setting.
        try fixture.tamper { db in try db.execute(sql: "UPDATE settings SET value = 'false' WHERE name = 'blockAllRemoteContent'") }
        let tampered = try fixture.store.privacySettings()
        #expect(tampered.warnings.map(\.setting) == ["blockAllRemoteContent"] && !tampered.settings.blockAllRemoteContent)
    }

    @Test func silentChangeOnDiskFallsBackToTheSafeDefaultWithAWarning() throws {
        let fixture = try StoreFixture()
        try fixture.store.setPrivacySettings(PrivacySettings.safeDefaults)
        try fixture.tamper { db in
            // Turn on remote content and disable metadata stripping, as malware with the disk would.
            try db.execute(sql: "UPDATE settings SET value = 'true' WHERE name = 'autoLoadRemoteContent'")
            try db.execute(sql: "UPDATE settings SET value = 'false' WHERE name = 'stripImageMetadata'")
            try db.execute(sql: #"UPDATE settings SET value = '["evil@tracker.example"]' WHERE name = 'trustedSenders'"#)
        }
        let readout = try fixture.store.privacySettings()
        #expect(readout.settings == .safeDefaults)
        #expect(readout.warnings.map(\.setting) == ["autoLoadRemoteContent", "stripImageMetadata", "trustedSenders"])
        #expect(readout.warnings.allSatisfy { $0.reason == .authenticationFailed })
    }

    @Test func settingMACsAreBoundToTheirNameAndUser() throws {
        let fixture = try StoreFixture()
        try fixture.store.setPrivacySettings(chosen)
        // Copy the (valid) value and MAC of one setting onto another with the same JSON type.
        try fixture.tamper { db in
            let row = try Row.fetchOne(db, sql: "SELECT value, mac FROM settings WHERE name = 'autoLoadRemoteContent'")!
            try db.execute(sql: "UPDATE settings SET value = ?, mac = ? WHERE name = 'stripImageMetadata'",
                           arguments: [row["value"] as String, row["mac"] as Data])
        }
        let readout = try fixture.store.privacySettings()
        #expect(readout.settings.stripImageMetadata == true)
        #expect(readout.settings.autoLoadRemoteContent == true)
        #expect(readout.warnings.map(\.setting) == ["stripImageMetadata"])
    }
}
