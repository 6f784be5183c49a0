/// Whether an address is out on the internet, for the server's own outgoing requests to
/// addresses users or remote servers name (a Web Push endpoint, a remote actor): a request
/// there must not reach the server's own machine or network.
extension IPAddress {
    /// Networks that are not the public internet (RFC 6890's special-purpose registries):
    /// this host, private and shared networks, link-local, documentation, benchmarking,
    /// multicast and reserved ones, in both families.
    private static let nonPublic: [(IPAddress, Int)] = [
        ("0.0.0.0", 8), ("10.0.0.0", 8), ("100.64.0.0", 10), ("127.0.0.0", 8), ("169.254.0.0", 16),
        ("172.16.0.0", 12), ("192.0.0.0", 24), ("192.0.2.0", 24), ("192.88.99.0", 24), ("192.168.0.0", 16),
        ("198.18.0.0", 15), ("198.51.100.0", 24), ("203.0.113.0", 24), ("224.0.0.0", 4), ("240.0.0.0", 4),
        ("::", 128), ("::1", 128), ("64:ff9b:1::", 48), ("100::", 64), ("2001::", 23), ("2001:db8::", 32),
        ("2002::", 16), ("fc00::", 7), ("fe80::", 10), ("ff00::", 8),
    ].map { text, bits in
        // IPv4 networks are held IPv4-mapped: their prefix counts from bit 96.
        let address = IPAddress(text)!
        return (address, address.isIPv4 ? 96 + bits : bits)
    }

    /// False for loopback, private, link-local, multicast and every other special-purpose
    /// address (an IPv4-mapped one judged as IPv4).
    public var isGloballyRoutable: Bool {
        !Self.nonPublic.contains { network, bits in masked(to: bits) == network.masked(to: bits) }
    }
}
