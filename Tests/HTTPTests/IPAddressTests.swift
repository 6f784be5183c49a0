import Testing
@testable import HTTP

/// Addresses as `X-Forwarded-For` and `TRUSTED_PROXIES` write them, read without the C
/// library, and written back in one canonical form.
@Suite struct IPAddressTests {
    @Test(arguments: [
        ("192.0.2.7", "192.0.2.7"), ("0.0.0.0", "0.0.0.0"), ("255.255.255.255", "255.255.255.255"),
        ("2001:db8::1", "2001:db8::1"), ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"), ("::", "::"), ("::1", "::1"),
        ("1::", "1::"), ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"), ("2001:0db8::0001", "2001:db8::1"),
        // RFC 5952: the longest run of zeros is shortened, the first of two equal ones.
        ("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"), ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
        // IPv4-mapped is the IPv4 address; an IPv4 tail is read in any IPv6 address.
        ("::ffff:192.0.2.7", "192.0.2.7"), ("::FFFF:c000:0207", "192.0.2.7"), ("64:ff9b::192.0.2.7", "64:ff9b::c000:207"),
        ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"),
    ])
    func wellFormed_readsAndWritesCanonically(text: String, canonical: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.description == canonical)
        #expect(IPAddress(canonical) == address)
    }

    @Test(arguments: [
        "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.-4", "01.2.3.4", "1.2.3.04", "1..2.3", "1.2.3.4.", ".1.2.3.4",
        "127.1", "0x7f.0.0.1", " 1.2.3.4", "1.2.3.4 ", "::1%eth0", "[::1]", "1.2.3.4:80", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9",
        "1::2::3", ":::", ":1::", "1::2:", "12345::", "g::", "+f::", "1:2:3:4:5:6:7:1.2.3.4", "1.2.3.4::", "::1.2.3",
        "unknown", "localhost", String(repeating: "1", count: 100),
    ])
    func malformed_isNil(text: String) {
        #expect(IPAddress(text) == nil, "\(text)")
    }

    @Test func ipv4AndItsMappedForm_areOneAddress() {
        #expect(IPAddress("10.1.2.3") == IPAddress("::ffff:10.1.2.3"))
        #expect(IPAddress("10.1.2.3")?.isIPv4 == true && IPAddress("::a01:203")?.isIPv4 == false)
    }

    @Test func loopback_is127Slash8AndColonColon1() {
        for text in ["127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"] {
            #expect(IPAddress(text)?.isLoopback == true, "\(text)")
        }
        for text in ["128.0.0.1", "10.0.0.1", "::", "::2", "1::1", "::127.0.0.1"] {
            #expect(IPAddress(text)?.isLoopback == false, "\(text)")
        }
    }

    /// What the server's own requests to addresses others name (a Web Push endpoint) may
    /// reach: the public internet, never this machine or its networks.
    @Test func onlyPublicAddresses_areGloballyRoutable() {
        for text in ["8.8.8.8", "142.250.74.10", "2a00:1450:4007:80e::200a", "100.128.0.1", "172.32.0.1", "::ffff:8.8.4.4"] {
            #expect(IPAddress(text)?.isGloballyRoutable == true, "\(text)")
        }
        for text in ["127.0.0.1", "127.9.9.9", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
                     "100.64.0.1", "0.0.0.0", "224.0.0.1", "255.255.255.255", "192.0.2.1", "::", "::1", "fe80::1", "fc00::1",
                     "fd12:3456::1", "ff02::1", "2001:db8::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1"] {
            #expect(IPAddress(text)?.isGloballyRoutable == false, "\(text)")
        }
    }
}
