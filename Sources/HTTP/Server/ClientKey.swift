#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whom a per-client limit counts a request against: an IPv4 address as it is, an IPv6
/// address by its /64 network. A host is usually given a whole /64 and may use any address
/// in it, so counting single IPv6 addresses would let one client multiply its limit.
public enum ClientKey {
    public static func of(_ address: String) -> String {
        guard address.contains(":") else { return address }
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        return withUnsafeBytes(of: &bytes) { raw -> String in
            let octets = Array(raw)
            // An IPv4 client on a dual-stack socket (::ffff:a.b.c.d) is that IPv4 address.
            if octets[0..<10].allSatisfy({ $0 == 0 }) && octets[10] == 0xff && octets[11] == 0xff {
                return octets[12..<16].map(String.init).joined(separator: ".")
            }
            let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(octets[$0]) << 8 | UInt16(octets[$0 + 1]), radix: 16) }
            return groups.joined(separator: ":") + "::/64"
        }
    }
}
