import Testing
import HTTP

/// Whom per-client limits count a request against.
@Suite struct ClientKeyTests {
    @Test func ipv4_isItsOwnKey() {
        #expect(ClientKey.of("203.0.113.7") == "203.0.113.7")
    }

    @Test func ipv6_isCountedByItsSlash64() {
        #expect(ClientKey.of("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64")
        #expect(ClientKey.of("2001:db8:1:2:bbbb:cccc:dddd:eeee") == "2001:db8:1:2::/64")
        #expect(ClientKey.of("2001:db8:1:3::1") != ClientKey.of("2001:db8:1:2::1"))
    }

    @Test func ipv4MappedIPv6_isTheIPv4Address() {
        #expect(ClientKey.of("::ffff:198.51.100.9") == "198.51.100.9")
    }

    @Test func somethingElse_isKeptAsItIs() {
        #expect(ClientKey.of("") == "")
        #expect(ClientKey.of("not:an:address") == "not:an:address")
    }
}
