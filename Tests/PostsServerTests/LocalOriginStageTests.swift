import Testing
@testable import PostsServer

/// Which `Host` fields trust mode answers (API.md "Safety": DNS rebinding): this machine by
/// loopback address or by `localhost` and names under it, with or without a port.
@Suite struct LocalOriginStageTests {
    @Test(arguments: ["127.0.0.1", "127.0.0.1:18080", "127.9.8.7:80", "localhost", "LocalHost:3000", "app.localhost",
                      "API.LOCALHOST:8080", "[::1]", "[::1]:8080", "::1", "localhost:"])
    func thisMachine_isAnswered(_ host: String) {
        #expect(LocalOriginStage.isLocalHost(host))
    }

    @Test(arguments: ["evil.example", "evil.example:80", "127.0.0.1.evil.example", "localhost.evil.example", "evillocalhost",
                      "xlocalhost:80", "10.0.0.1:80", "127.1", "0127.0.0.1", "127.0.0.1:abc", "127.0.0.1:123456",
                      "[::1", "[::2]:80", "::2", "", ":80", "localhost:80:80"])
    func anyOtherName_isRefused(_ host: String) {
        #expect(!LocalOriginStage.isLocalHost(host))
    }
}
