/// The proxies (load balancers) whose `X-Forwarded-For` is believed: `TRUSTED_PROXIES`.
///
/// Each proxy appends the address it received the request from, so the header reads, left
/// to right, from the first hop to the last. Only what our own proxies appended can be
/// believed: everything left of that was sent by the client, who writes what it likes. So
/// the client is found walking right to left, past our proxies, to the first address that
/// is not one: whoever handed the request to our outermost proxy.
public struct TrustedProxies: Sendable, Equatable {
    public let networks: [IPNetwork]

    public static let none = TrustedProxies([])

    public init(_ networks: [IPNetwork]) {
        self.networks = networks
    }

    /// One entry of a list that is not a network, and why.
    public struct InvalidEntry: Error, Equatable {
        public let entry: String
        public let reason: IPNetwork.ParseError
    }

    /// `10.0.0.0/8, 2001:db8::/32, 192.0.2.7`: comma-separated networks (an address alone is
    /// a network of one); empty entries (a trailing comma) are passed over.
    public init(parsing list: String) throws(InvalidEntry) {
        var networks: [IPNetwork] = []
        for entry in list.split(separator: ",") {
            let trimmed = entry.trimmingHTTPWhitespace()
            guard !trimmed.isEmpty else { continue }
            do {
                networks.append(try IPNetwork(parsing: trimmed))
            } catch {
                throw InvalidEntry(entry: trimmed, reason: error)
            }
        }
        self.init(networks)
    }

    public var isEmpty: Bool { networks.isEmpty }

    public func contains(_ address: IPAddress) -> Bool {
        networks.contains { $0.contains(address) }
    }

    /// Whether `peer` (a socket address as text) is one of ours.
    public func trusts(peer: String) -> Bool {
        !isEmpty && IPAddress(peer).map(contains) ?? false
    }

    /// The client's address for a request from `peer` carrying these `X-Forwarded-For`
    /// values (every field of that name, in order). From a peer that is not a trusted proxy
    /// the header is ignored: the peer is the client.
    ///
    /// From a trusted one, the right-most entry that is not a trusted proxy; if all of them
    /// are, the left-most. An entry that is not an address (`unknown`, garbage, an empty
    /// element) ends the walk, and the client is the last hop walked past (the entry right
    /// of it, or the peer): the request then counts against a proxy of ours, all such
    /// requests together, which limits too much rather than too little. Taking the garbage
    /// itself as the client would let a client pick a new rate-limit key with every request.
    public func clientAddress(peer: String, forwardedFor values: [String]) -> String {
        trusts(peer: peer) ? clientAddress(behindTrusted: peer, forwardedFor: values) : peer
    }

    /// `clientAddress(peer:forwardedFor:)` for a peer already known to be trusted (a
    /// connection learns that once, not for every request).
    func clientAddress(behindTrusted peer: String, forwardedFor values: [String]) -> String {
        var client = peer
        for value in values.reversed() {
            for entry in value.split(separator: ",", omittingEmptySubsequences: false).reversed() {
                guard let address = Self.forwardedAddress(entry) else { return client }
                client = address.description
                if !contains(address) { return client }
            }
        }
        return client
    }

    /// One `X-Forwarded-For` element: an address, perhaps with a port as some proxies write
    /// it (`192.0.2.7:5123`, `[2001:db8::1]:5123`, `[2001:db8::1]`).
    static func forwardedAddress(_ element: Substring) -> IPAddress? {
        let text = element.trimmingHTTPWhitespace()
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || isPort(rest) else { return nil }
            return IPAddress(text[text.index(after: text.startIndex)..<close])
        }
        // One colon: IPv4 and a port. More: IPv6, which without brackets has no port.
        if text.utf8.lazy.filter({ $0 == UInt8(ascii: ":") }).count == 1, let colon = text.firstIndex(of: ":") {
            guard isPort(text[colon...]) else { return nil }
            return IPAddress(text[..<colon])
        }
        return IPAddress(text)
    }

    /// `:` and one to five digits.
    private static func isPort(_ text: Substring) -> Bool {
        let digits = text.utf8.dropFirst()
        return text.first == ":" && (1...5).contains(digits.count) && digits.allSatisfy { (48...57).contains($0) }
    }
}
