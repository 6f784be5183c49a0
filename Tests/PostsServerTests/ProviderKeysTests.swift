import Foundation
import Logging
@testable import PostsServer
import Testing
import TestSupport

/// A provider's keys fetched from a real (local) OpenID provider: loaded once and kept,
/// fetched again for a key id after a rotation, not for made-up ids more than once a
/// minute, and a provider that is down answers `unavailable` until it is back.
@Suite struct ProviderKeysTests {
    private static func store(_ provider: TestOpenIDProvider,
                              freshness: ClosedRange<Duration> = .seconds(60) ... .seconds(86_400),
                              retryInterval: Duration = .seconds(5)) -> ProviderKeys {
        var logger = Logger(label: "oidc-test")
        logger.logLevel = .critical
        let store = ProviderKeys(provider: OIDCProvider(name: "local", issuer: provider.issuer, clientIDs: ["app"]),
                                 logger: logger, freshness: freshness, retryInterval: retryInterval)
        store.start()
        return store
    }

    private static func ids(_ lookup: ProviderKeys.Lookup) -> [String] {
        guard case .keys(let keys) = lookup else { return [] }
        return keys.compactMap(\.id).sorted()
    }

    @Test func keysLoad_andARotationIsFetchedForItsNewKeyID() throws {
        let provider = try TestOpenIDProvider()
        defer { provider.stop() }
        let store = Self.store(provider)
        defer { store.stop() }
        let first = provider.keys
        #expect(Self.ids(store.keys(for: first.rsaKeyID)) == [first.ecKeyID, first.rsaKeyID].sorted())
        // A known id: no fetch.
        let fetched = provider.keySetRequests
        #expect(Self.ids(store.keys(for: first.ecKeyID)).count == 2 && provider.keySetRequests == fetched)
        try provider.rotateKeys()
        let second = provider.keys
        // The rotation is found the first time a token names a new id, but a made-up id
        // right after does not make another request.
        #expect(Self.ids(store.keys(for: second.rsaKeyID)) == [second.ecKeyID, second.rsaKeyID].sorted())
        let afterRotation = provider.keySetRequests
        _ = store.keys(for: "made-up")
        #expect(provider.keySetRequests == afterRotation)
    }

    @Test func aProviderDown_isUnavailable_untilItIsBack() throws {
        let provider = try TestOpenIDProvider()
        provider.stop()
        let store = Self.store(provider)
        defer { store.stop() }
        guard case .unavailable = store.keys(for: nil, wait: .seconds(5)) else {
            Issue.record("keys from a provider that is down")
            return
        }
        try provider.start()
        defer { provider.stop() }
        #expect(eventually(timeout: .seconds(20)) { Self.ids(store.keys(for: provider.keys.rsaKeyID)).count == 2 })
    }

    /// Keys past their age whose refetch fails are kept (tokens still verify) and tried
    /// again at the store's pace (here every 200 ms), not in a loop and not never.
    @Test func staleKeys_withTheProviderFailing_areKept_andRetriedAtItsPace() throws {
        let provider = try TestOpenIDProvider()
        let store = Self.store(provider, freshness: .zero ... .milliseconds(100), retryInterval: .milliseconds(200))
        defer { store.stop() }
        #expect(Self.ids(store.keys(for: provider.keys.rsaKeyID)).count == 2)
        provider.setFailing(true)
        defer { provider.stop() }
        let started = store.fetchesStarted
        // An observation window, not a wait for an event: about ten retries are due in it.
        Thread.sleep(forTimeInterval: 2)
        let retries = store.fetchesStarted - started
        #expect((1...20).contains(retries), "\(retries) fetches in 2 s")
        #expect(Self.ids(store.keys(for: provider.keys.rsaKeyID)).count == 2)
    }

    @Test func cacheControl_maxAge() {
        #expect(DocumentFetch.maxAge("public, max-age=3600") == .seconds(3600))
        #expect(DocumentFetch.maxAge("no-store") == .zero && DocumentFetch.maxAge("private") == nil)
        #expect(DocumentFetch.maxAge("max-age=99999999") == .seconds(7 * 86_400))
    }
}
