import Foundation
import Logging

/// A provider's signing keys as its issuer publishes them (discovery document, then its
/// `jwks_uri`), fetched with libcurl on a thread of this store's own and kept for the key
/// set's `Cache-Control: max-age` (an hour without one; between a minute and a day). A
/// token naming a key id the set lacks has the set fetched again at once (a rotation), at
/// most once a minute: made-up ids cannot make the server hammer the provider. A provider
/// unreachable at start is not fatal: its sign-ins answer 503 until its keys load, and it
/// is tried again every few seconds meanwhile and on demand.
final class ProviderKeys: Sendable {
    enum Lookup {
        case keys([SigningKey])
        /// Never loaded: why (the provider's own words, for the log and the 503).
        case unavailable(String)
    }

    let provider: OIDCProvider
    private let logger: Logger
    /// How long a key set is kept: its `max-age` (an hour without one) brought into this range.
    private let freshness: ClosedRange<Duration>
    /// Set by `stop`: a fetch under way ends at once.
    private let cancellation = CurlTransfer.Cancellation()
    /// Guards `State`; signalled when a fetch ends or one is wanted.
    private let condition = NSCondition()
    /// Only touched with `condition` locked.
    private nonisolated(unsafe) var state = State()

    private struct State {
        var keys: [SigningKey] = []
        var loaded = false
        var freshUntil: ContinuousClock.Instant?
        var lastAttempt: ContinuousClock.Instant?
        /// The last fetch a token's unknown key id asked for (at most one a minute).
        var lastForUnknownKey: ContinuousClock.Instant?
        var lastFailure = "not fetched yet"
        var fetchWanted = true
        /// Fetches started and ended (they run one at a time, so they end in that order).
        var started = 0
        var fetches = 0
        /// A fetch is under way (on the store's thread).
        var fetching = false
        var running = true
    }

    static let refetchInterval: Duration = .seconds(60)
    /// How soon a failed fetch (never loaded, or a stale set) is tried again.
    private let retryInterval: Duration

    init(provider: OIDCProvider, logger: Logger, freshness: ClosedRange<Duration> = .seconds(60) ... .seconds(86_400),
         retryInterval: Duration = .seconds(5)) {
        self.provider = provider
        self.logger = logger
        self.freshness = freshness
        self.retryInterval = retryInterval
    }

    /// Fetches started so far (tests count them).
    var fetchesStarted: Int {
        condition.lock()
        defer { condition.unlock() }
        return state.started
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "oidc-keys-\(provider.name)"
        thread.start()
    }

    func stop() {
        cancellation.flag.store(true, ordering: .relaxed)
        condition.lock()
        state.running = false
        condition.broadcast()
        condition.unlock()
    }

    /// The keys to verify a token naming `keyID` with: fetched again first when the set
    /// lacks it (and has not been fetched in the last minute), waiting for that at most
    /// `wait`.
    func keys(for keyID: String?, wait: Duration = .seconds(5)) -> Lookup {
        condition.lock()
        defer { condition.unlock() }
        let now = ContinuousClock.now
        let known = state.loaded && (keyID == nil || state.keys.contains { $0.id == keyID })
        // Which fetch (by the order fetches start in) must have ended before answering.
        var awaited: Int?
        if known {
            awaited = nil
        } else if state.loaded {
            // A rotation, or a made-up id: one fetch that starts after now, at most once a minute.
            if state.lastForUnknownKey.map({ now - $0 >= Self.refetchInterval }) ?? true {
                state.lastForUnknownKey = now
                awaited = state.started + 1
            }
        } else if state.fetching {
            // Never loaded: the fetch under way will do.
            awaited = state.started
        } else if state.lastAttempt.map({ now - $0 >= .seconds(1) }) ?? true {
            awaited = state.started + 1
        }
        // (Else one failed within the second: the answer is that failure, at once.)
        if let awaited {
            state.fetchWanted = true
            condition.broadcast()
            let deadline = Date(timeIntervalSinceNow: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
            while state.fetches < awaited && state.running {
                if !condition.wait(until: deadline) { break }
            }
        }
        return state.loaded ? .keys(state.keys) : .unavailable(state.lastFailure)
    }

    private func run() {
        while true {
            condition.lock()
            while state.running && !dueNow() {
                _ = condition.wait(until: Date(timeIntervalSinceNow: secondsUntilDue()))
            }
            guard state.running else {
                condition.unlock()
                return
            }
            state.fetchWanted = false
            state.lastAttempt = .now
            state.fetching = true
            state.started += 1
            condition.unlock()
            let outcome = Result { try fetch() }
            condition.lock()
            switch outcome {
            case .success(let (keys, maxAge)):
                if !state.loaded { logger.info("sign-in provider's keys loaded", metadata: ["provider": "\(provider.name)"]) }
                state.keys = keys
                state.loaded = true
                state.freshUntil = .now + min(max(maxAge ?? .seconds(3600), freshness.lowerBound), freshness.upperBound)
            case .failure(let error):
                state.lastFailure = "\(error)"
                logger.warning("sign-in provider's keys could not be fetched", metadata: ["provider": "\(provider.name)", "error": "\(error)"])
            }
            state.fetches += 1
            state.fetching = false
            condition.broadcast()
            condition.unlock()
        }
    }

    /// (Under the lock.) Wanted by a request, or stale (or never loaded) and the last
    /// attempt long enough ago: a set past its age whose refetch fails is kept (tokens still
    /// verify with it) and tried again every `retryInterval`, not in a loop.
    private func dueNow() -> Bool {
        let now = ContinuousClock.now
        if state.fetchWanted { return true }
        if let freshUntil = state.freshUntil, state.loaded, now < freshUntil { return false }
        return state.lastAttempt.map { now - $0 >= retryInterval } ?? true
    }

    /// (Under the lock.) How long until `dueNow` turns true by itself (at most a second: a
    /// request's wish wakes the thread anyway).
    private func secondsUntilDue() -> Double {
        let now = ContinuousClock.now
        var due = state.lastAttempt.map { $0 + retryInterval } ?? now
        if let freshUntil = state.freshUntil, state.loaded { due = max(due, freshUntil) }
        let wait = min(max(due - now, .milliseconds(1)), .seconds(1))
        return Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
    }

    /// The discovery document, then the key set it names.
    private func fetch() throws -> ([SigningKey], Duration?) {
        let discovery = try DocumentFetch.get(provider.discoveryURL, cancellation: cancellation)
        struct Discovery: Decodable {
            let issuer: String
            let jwks_uri: String
        }
        guard let document = try? JSONDecoder().decode(Discovery.self, from: Data(discovery.body)) else {
            throw DocumentFetch.Failure(description: "\(provider.discoveryURL) is not a discovery document (issuer, jwks_uri)")
        }
        guard document.issuer == provider.issuer else {
            throw DocumentFetch.Failure(description: "\(provider.discoveryURL) names the issuer \(document.issuer), not \(provider.issuer)")
        }
        guard OIDCProvider.mayFetch(document.jwks_uri) else {
            throw DocumentFetch.Failure(description: "the jwks_uri \(document.jwks_uri) is not https")
        }
        let keySet = try DocumentFetch.get(document.jwks_uri, cancellation: cancellation)
        let keys = try SigningKeySet.parse(keySet.body)
        guard !keys.isEmpty else { throw DocumentFetch.Failure(description: "\(document.jwks_uri) has no RS256 or ES256 signing key") }
        return (keys, keySet.maxAge)
    }
}
