import Testing
@testable import HTTP

/// `TRUSTED_PROXIES`' entries: CIDR blocks of either family, or single addresses.
@Suite struct IPNetworkTests {
    private static func network(_ text: String) throws -> IPNetwork { try IPNetwork(parsing: text) }

    @Test func ipv4Block_containsItsAddressesOnly() throws {
        let block = try Self.network("10.0.0.0/8")
        for inside in ["10.0.0.0", "10.255.255.255", "10.1.2.3", "::ffff:10.9.9.9"] {
            #expect(block.contains(IPAddress(inside)!), "\(inside)")
        }
        for outside in ["11.0.0.0", "9.255.255.255", "::a00:1", "2001:db8::1"] {
            #expect(!block.contains(IPAddress(outside)!), "\(outside)")
        }
        #expect(block.description == "10.0.0.0/8")
    }

    @Test func ipv6Block_containsItsAddressesOnly() throws {
        let block = try Self.network("2001:DB8::/32")
        #expect(block.contains(IPAddress("2001:db8:ffff::1")!))
        #expect(!block.contains(IPAddress("2001:db9::1")!))
        #expect(!block.contains(IPAddress("10.0.0.1")!))
        #expect(block.description == "2001:db8::/32")
        // A prefix inside a group.
        #expect(try Self.network("2001:db8:0:4::/62").contains(IPAddress("2001:db8:0:7:ffff::")!))
        #expect(try !Self.network("2001:db8:0:4::/62").contains(IPAddress("2001:db8:0:8::")!))
    }

    @Test func anAddressAlone_isANetworkOfOne() throws {
        let one = try Self.network("192.0.2.7")
        #expect(one.contains(IPAddress("192.0.2.7")!) && !one.contains(IPAddress("192.0.2.8")!))
        #expect(one.description == "192.0.2.7/32")
        #expect(try Self.network("::1").description == "::1/128")
    }

    @Test func edgePrefixes() throws {
        #expect(try Self.network("0.0.0.0/0").contains(IPAddress("203.0.113.9")!))
        #expect(try !Self.network("0.0.0.0/0").contains(IPAddress("2001:db8::1")!))
        #expect(try Self.network("::/0").contains(IPAddress("2001:db8::1")!))
        // Written as IPv6, the prefix counts IPv6 bits: every IPv4 address.
        #expect(try Self.network("::ffff:0:0/96").contains(IPAddress("198.51.100.1")!))
        #expect(try Self.network("::ffff:10.0.0.0/104") == Self.network("10.0.0.0/8"))
    }

    @Test func bitsPastThePrefix_areRefusedNamingTheNetwork() throws {
        #expect(throws: IPNetwork.ParseError.hostBitsSet(network: try Self.network("10.0.0.0/8"))) {
            try IPNetwork(parsing: "10.0.0.1/8")
        }
        #expect(throws: IPNetwork.ParseError.hostBitsSet(network: try Self.network("2001:db8::/32"))) {
            try IPNetwork(parsing: "2001:db8::1/32")
        }
    }

    @Test(arguments: ["", "/8", "10.0.0.0/", "10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/+8", "10.0.0.0/08x",
                      "10.0.0.0/8/8", "10.0.0.0 /8", "10.0.0/8", "example.com/8", "10.0.0.0/0008"])
    func malformed_isRefused(text: String) {
        #expect(throws: IPNetwork.ParseError.malformed) { try IPNetwork(parsing: text) }
    }
}
