import Testing
@testable import HTTP

/// Whom a request is from behind our load balancers: the walk of `X-Forwarded-For`.
@Suite struct TrustedProxiesTests {
    /// Our balancers: 10.0.0.0/8 and 2001:db8:ffff::/48.
    private static let ours = try! TrustedProxies(parsing: " 10.0.0.0/8 ,2001:db8:ffff::/48,")

    private static func client(_ peer: String, _ values: String...) -> String {
        ours.clientAddress(peer: peer, forwardedFor: values)
    }

    @Test func aList_isParsedAndAnInvalidEntryNamed() throws {
        #expect(Self.ours.networks.map(\.description) == ["10.0.0.0/8", "2001:db8:ffff::/48"])
        #expect(try TrustedProxies(parsing: "").isEmpty)
        #expect(throws: TrustedProxies.InvalidEntry(entry: "10.0.0.300", reason: .malformed)) {
            try TrustedProxies(parsing: "10.0.0.0/8, 10.0.0.300")
        }
    }

    @Test func fromAnUntrustedPeer_theHeaderIsIgnored() {
        #expect(Self.client("203.0.113.9", "198.51.100.1") == "203.0.113.9")
        #expect(Self.client("203.0.113.9") == "203.0.113.9")
        #expect(TrustedProxies.none.clientAddress(peer: "10.0.0.1", forwardedFor: ["198.51.100.1"]) == "10.0.0.1")
    }

    @Test func fromATrustedPeer_theRightMostUntrustedEntryIsTheClient() {
        #expect(Self.client("10.0.0.1", "198.51.100.1") == "198.51.100.1")
        // What the client wrote itself (left) is passed over; our second balancer too.
        #expect(Self.client("10.0.0.1", "6.6.6.6, 198.51.100.1, 10.2.3.4") == "198.51.100.1")
        #expect(Self.client("::ffff:10.0.0.1", "6.6.6.6,198.51.100.1") == "198.51.100.1")
        #expect(Self.client("2001:db8:ffff::5", "2001:DB8:1::0001") == "2001:db8:1::1")
    }

    @Test func severalFields_readAsOneListInOrder() {
        #expect(Self.client("10.0.0.1", "6.6.6.6", "198.51.100.1, 10.0.0.2") == "198.51.100.1")
        #expect(Self.client("10.0.0.1", "198.51.100.1", "10.0.0.2") == "198.51.100.1")
    }

    @Test func whenEveryEntryIsOurs_theLeftMostIsTheClient() {
        #expect(Self.client("10.0.0.1", "10.0.0.3, 10.0.0.2") == "10.0.0.3")
        #expect(Self.client("10.0.0.1") == "10.0.0.1")
    }

    /// A malformed entry ends the walk at the last hop walked past: the request counts
    /// against our proxy, never against a key the client made up.
    @Test func aMalformedEntry_endsTheWalkAtTheLastHop() {
        #expect(Self.client("10.0.0.1", "unknown") == "10.0.0.1")
        #expect(Self.client("10.0.0.1", "198.51.100.1, garbage-\(Int.random(in: 0..<1000)), 10.0.0.2") == "10.0.0.2")
        #expect(Self.client("10.0.0.1", "198.51.100.1,,10.0.0.2") == "10.0.0.2")
        #expect(Self.client("10.0.0.1", "") == "10.0.0.1")
        // Past an untrusted entry, nothing more is read, malformed or not.
        #expect(Self.client("10.0.0.1", "garbage, 198.51.100.1") == "198.51.100.1")
    }

    @Test func portsAndBrackets_asSomeProxiesWriteThem() {
        #expect(Self.client("10.0.0.1", "198.51.100.1:5123") == "198.51.100.1")
        #expect(Self.client("10.0.0.1", "[2001:db8:1::1]:5123") == "2001:db8:1::1")
        #expect(Self.client("10.0.0.1", "[2001:db8:1::1]") == "2001:db8:1::1")
        for bad in ["198.51.100.1:", "198.51.100.1:123456", "[2001:db8:1::1", "[2001:db8:1::1]x", "[198.51.100.1]:x"] {
            #expect(Self.client("10.0.0.1", bad) == "10.0.0.1", "\(bad)")
        }
    }
}
