import Foundation
import Testing
@testable import RampartServer

/// The remote-content fetcher's destination rule: public addresses only, whatever spelling or
/// name leads to a local one; an operator's `HOST:PORT` allow entry for a probe on this machine.
@Suite("Remote fetch destinations")
struct RemoteFetchDestinationsTests {
    @Test func localAndReservedAddressesAreRefusedWhateverTheirSpelling() throws {
        let destinations = try RemoteFetchDestinations()
        // Spellings getaddrinfo turns into local addresses: names, dotted, decimal, hex, short forms, IPv6.
        for host in ["localhost", "127.0.0.1", "127.1", "2130706433", "0x7f000001", "0", "0.0.0.0", "10.1.2.3", "172.16.0.9",
                     "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1", "198.18.0.1", "224.0.0.1", "255.255.255.255",
                     "[::1]", "::", "::ffff:127.0.0.1", "::ffff:169.254.169.254", "64:ff9b::a00:1", "2002:c0a8:101::1", "fc00::1",
                     "fd12:3456::1", "fe80::1", "fec0::1", "ff02::1", "2001:db8::1"] {
            #expect(throws: RemoteFetchRefusal.self, "\(host)") { try destinations.resolve(host: host, port: 80) }
        }
        #expect(throws: RemoteFetchRefusal.localAddress(host: "169.254.169.254", port: 80, address: "169.254.169.254")) {
            try destinations.resolve(host: "169.254.169.254", port: 80)
        }
        #expect(throws: RemoteFetchRefusal.unresolvable(host: "no-such-host.invalid")) { try destinations.resolve(host: "no-such-host.invalid", port: 80) }
    }

    @Test func publicAddressesPassAndOneLocalAnswerAmongPublicOnesIsRefused() throws {
        let destinations = try RemoteFetchDestinations()
        for host in ["8.8.8.8", "1.1.1.1", "93.184.215.14", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "[2a00:1450::1]", "::ffff:8.8.8.8"] {
            #expect(try destinations.resolve(host: host, port: 443).count == 1, "\(host)")
        }
        // A name that answers with a public and a local address (rebinding by a second record).
        #expect(throws: RemoteFetchRefusal.localAddress(host: "mixed.test", port: 80, address: "10.0.0.1")) {
            try destinations.check(host: "mixed.test", port: 80, addresses: [[93, 184, 215, 14], [10, 0, 0, 1]])
        }
        #expect(!RemoteFetchDestinations.isPublic([1, 2, 3]))
    }

    @Test func theOperatorsAllowEntryOpensExactlyThatHostAndPort() throws {
        let lab = try RemoteFetchDestinations(allowingLocal: ["127.0.0.1:8080", "Probe.Local:9000"])
        #expect(try lab.resolve(host: "127.0.0.1", port: 8080) == [[127, 0, 0, 1]])
        #expect(throws: RemoteFetchRefusal.self) { try lab.resolve(host: "127.0.0.1", port: 8081) }
        #expect(throws: RemoteFetchRefusal.self) { try lab.resolve(host: "localhost", port: 8080) }
        try lab.check(host: "probe.local", port: 9000, addresses: [[192, 168, 0, 5]])
        for bad in ["127.0.0.1", "127.0.0.1:0", "127.0.0.1:99999", ":80", "http://x/:80", "host:port"] {
            #expect(throws: RemoteFetchRefusal.badAllowEntry(bad)) { try RemoteFetchDestinations(allowingLocal: [bad]) }
        }
    }
}
