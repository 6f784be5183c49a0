/// A block of addresses in CIDR notation: `10.0.0.0/8`, `2001:db8::/32`, or one address
/// (`192.0.2.7`, a /32; `::1`, a /128).
public struct IPNetwork: Hashable, Sendable, CustomStringConvertible {
    public enum ParseError: Error, Equatable {
        /// Not an address, or a prefix length that is not a number in range.
        case malformed
        /// Bits are set past the prefix (`10.0.0.1/8`): probably a typo, so it is refused
        /// rather than silently read as the network it lies in, which this names.
        case hostBitsSet(network: IPNetwork)
    }

    /// The network's first address.
    public let address: IPAddress
    /// Leading bits that must match, counted over 128 (an IPv4 /8 is a /104 of its mapped
    /// form), so that one test serves both families.
    let prefixLength: Int

    init(address: IPAddress, prefixLength: Int) {
        self.address = address
        self.prefixLength = prefixLength
    }

    /// The prefix length counts bits of the address as written: IPv4 text up to 32, IPv6
    /// text up to 128 (so `::ffff:0:0/96` is every IPv4 address).
    public init(parsing text: some StringProtocol) throws(ParseError) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(parts[0]) else { throw .malformed }
        let writtenAsIPv4 = !parts[0].contains(":")
        let maximum = writtenAsIPv4 ? 32 : 128
        var length = maximum
        if parts.count == 2 {
            let digits = parts[1]
            guard (1...3).contains(digits.utf8.count), digits.utf8.allSatisfy({ (48...57).contains($0) }),
                  let number = Int(digits), number <= maximum else { throw .malformed }
            length = number
        }
        let bits = writtenAsIPv4 ? 96 + length : length
        let network = IPNetwork(address: address.masked(to: bits), prefixLength: bits)
        guard network.address == address else { throw .hostBitsSet(network: network) }
        self = network
    }

    public func contains(_ candidate: IPAddress) -> Bool {
        candidate.masked(to: prefixLength) == address
    }

    /// `10.0.0.0/8`, `2001:db8::/32`: IPv4 networks in IPv4 terms.
    public var description: String {
        if address.isIPv4 && prefixLength >= 96 { return "\(address)/\(prefixLength - 96)" }
        return "\(address)/\(prefixLength)"
    }
}
