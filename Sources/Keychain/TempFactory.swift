import RampartCore
extension GlobalContainer: HasKeychain {
    public var keychain: any Keychain { resolve(DependencyKey<any Keychain>("keychain")) { InMemoryKeychain() } }
}
