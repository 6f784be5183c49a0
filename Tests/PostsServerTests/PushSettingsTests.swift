import Testing
@testable import PostsServer

/// `PUSH_WEBHOOK_URL` and `PUSH_WEBHOOK_SECRET`: an http(s) URL, never without a secret, and
/// neither the secret nor the URL's credentials in what is logged.
@Suite struct PushSettingsTests {
    @Test func settings_needAnHTTPURLAndASecret() throws {
        let parsed = try #require(try Configuration.fromEnvironment([
            "PUSH_WEBHOOK_URL": "https://hooks.example.com:8443/push?key=abc", "PUSH_WEBHOOK_SECRET": "shh"]).push)
        #expect(parsed.url == "https://hooks.example.com:8443/push?key=abc" && parsed.secret == "shh")
        #expect(parsed.description == "https://hooks.example.com:8443")
        #expect(try Configuration.fromEnvironment(["PUSH_WEBHOOK_URL": "http://127.0.0.1:9000/push",
                                                   "PUSH_WEBHOOK_SECRET": "shh"]).push?.description == "http://127.0.0.1:9000")
        let withLogin = try Configuration.fromEnvironment(["PUSH_WEBHOOK_URL": "https://gw:p%40ss@hooks.example.com/push",
                                                           "PUSH_WEBHOOK_SECRET": "shh"]).push
        #expect(withLogin?.description == "https://hooks.example.com")
        #expect(try Configuration.fromEnvironment([:]).push == nil)
        #expect(try Configuration.fromEnvironment(["PUSH_WEBHOOK_SECRET": "shh"]).push == nil)

        let unsigned = #expect(throws: Configuration.Invalid.self) {
            try Configuration.fromEnvironment(["PUSH_WEBHOOK_URL": "https://hooks.example.com/push"])
        }
        #expect(unsigned?.description.hasPrefix("PUSH_WEBHOOK_SECRET is required with PUSH_WEBHOOK_URL") == true)
        for bad in ["ftp://hooks.example.com/push", "hooks.example.com/push", "https://", "http:///push", "https://a b/",
                    "file:///etc/passwd", "https://hooks.example.com/push#x", "gopher://x"] {
            let error = #expect(throws: Configuration.Invalid.self, "\(bad)") {
                try Configuration.fromEnvironment(["PUSH_WEBHOOK_URL": bad, "PUSH_WEBHOOK_SECRET": "shh"])
            }
            #expect(error?.description.hasPrefix("PUSH_WEBHOOK_URL ") == true, "\(bad)")
            #expect(error?.description.contains("shh") == false)
        }
    }
}
