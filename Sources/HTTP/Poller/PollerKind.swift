#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which readiness API the event loops use (`EVENT_LOOP`): epoll is Linux's own and the
/// default there; Dispatch runs everywhere, is Darwin's only choice, and can be chosen on
/// Linux so that the code macOS runs is tested where CI runs.
public enum PollerKind: String, Sendable, CaseIterable {
    case epoll
    case dispatch

    #if os(Linux)
    public static let platformDefault = PollerKind.epoll
    public static let available: [PollerKind] = [.epoll, .dispatch]
    #else
    public static let platformDefault = PollerKind.dispatch
    public static let available: [PollerKind] = [.dispatch]
    #endif

    /// The kind of that name if this platform has it; nil otherwise.
    public static func named(_ name: String) -> PollerKind? {
        PollerKind(rawValue: name).flatMap { available.contains($0) ? $0 : nil }
    }

    /// A new poller of this kind, for one loop.
    func makePoller(label: String) throws -> any Poller {
        switch self {
        case .dispatch:
            return DispatchPoller(label: label)
        case .epoll:
            #if os(Linux)
            return try EpollPoller()
            #else
            // Configuration refuses it first; this is for code that builds one by hand.
            throw SocketError("epoll (Linux only)", errno: ENOTSUP)
            #endif
        }
    }
}
