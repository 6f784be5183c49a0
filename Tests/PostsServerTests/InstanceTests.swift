import Foundation
@testable import PostsServer
import Testing
import TestSupport

/// `GET /api/instance` (API.md "Instance information"): the operator's settings as given
/// at start, the server's version and features, to anyone, in one constant answer.
@Suite struct InstanceTests {
    @Test func defaults_nameTheSoftwareAndLeaveTheRestNull() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let answer = try APIClient(port: app.server.port).get("/api/instance")
        #expect(answer.status == 200)
        #expect(answer.header("Content-Type") == "application/json; charset=utf-8")
        #expect(answer.text == #"{"status":"success","name":"posts-server","contact_email":null,"terms_url":null,"#
            + #""privacy_url":null,"version":"\#(ServerVersion.current)","features":["dev"],"sign_in":["email"]}"#)
    }

    @Test func everythingSet_isAnsweredAsGiven_toAnyoneInTokenMode() throws {
        let parsed = try Configuration.fromEnvironment([
            "INSTANCE_NAME": #"Ash's "Posts" café"#, "CONTACT_EMAIL": "Abuse@Example.com",
            "TERMS_URL": "https://example.com/terms#use", "PRIVACY_URL": "http://example.com:8080/privacy?lang=en",
        ])
        let app = try TestApplication.start {
            $0.authMode = .token
            $0.instance = parsed.instance
        }
        defer { app.stop() }
        // No token, no X-User-Email: an app shows this before anyone signs in.
        let answer = try APIClient(port: app.server.port).get("/api/instance")
        #expect(answer.status == 200)
        let json = answer.json
        #expect(json["status"] as? String == "success")
        #expect(json["name"] as? String == #"Ash's "Posts" café"#)
        #expect(json["contact_email"] as? String == "Abuse@Example.com")
        #expect(json["terms_url"] as? String == "https://example.com/terms#use")
        #expect(json["privacy_url"] as? String == "http://example.com:8080/privacy?lang=en")
        #expect(json["version"] as? String == ServerVersion.current)
        #expect(json["features"] as? [String] == [])
        #expect(Set(json.keys) == ["status", "name", "contact_email", "terms_url", "privacy_url", "version", "features", "sign_in"])
    }

    @Test func features_nameTheMailerAndPush_sorted() throws {
        let parsed = try Configuration.fromEnvironment([
            "SMTP_URL": "smtp://127.0.0.1:9?starttls=off", "MAIL_FROM": "Posts <noreply@example.com>",
            "PUSH_WEBHOOK_URL": "http://127.0.0.1:9/push", "PUSH_WEBHOOK_SECRET": "shh",
        ])
        let app = try TestApplication.start {
            $0.mail = parsed.mail
            $0.push = parsed.push
        }
        defer { app.stop() }
        let answer = try APIClient(port: app.server.port).get("/api/instance")
        #expect(answer.json["features"] as? [String] == ["dev", "mail", "push"])
    }

    @Test func features_followTheConfiguration() throws {
        var configuration = Configuration()
        #expect(InstanceInformation.features(of: configuration) == [])
        configuration.authMode = .trust
        #expect(InstanceInformation.features(of: configuration) == ["dev"])
        configuration.authMode = .token
        configuration.push = try PushSettings.parse(url: "https://hooks.example.com/push", secret: "shh")
        #expect(InstanceInformation.features(of: configuration) == ["push"])
        configuration.mail = try MailSettings.parse(smtpURL: "smtps://mail.example.com", mailFrom: "noreply@example.com", caFile: nil)
        #expect(InstanceInformation.features(of: configuration) == ["mail", "push"])
        configuration.storage = try StorageSettings.parse(url: "s3://photos?endpoint=http://127.0.0.1:9000", accessKeyID: "k",
                                                          secretAccessKey: "s", publicURL: nil)
        #expect(InstanceInformation.features(of: configuration) == ["mail", "push", "s3"])
        configuration.storage = try StorageSettings.parse(url: "file:///srv/uploads", accessKeyID: nil, secretAccessKey: nil, publicURL: nil)
        #expect(InstanceInformation.features(of: configuration) == ["mail", "push"])
    }

    /// The answer is made once; a HEAD has its length and no body, like every GET route.
    @Test func head_isTheSameAnswerWithoutBody() throws {
        let app = try TestApplication.start()
        defer { app.stop() }
        let client = try RawHTTPClient(port: app.server.port)
        let get = try client.exchange("GET /api/instance HTTP/1.1\r\nHost: localhost\r\n\r\n")
        try client.send("HEAD /api/instance HTTP/1.1\r\nHost: localhost\r\n\r\n")
        let head = try client.readResponse(forHead: true)
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(head.header("Content-Length") == String(get.body.count))
    }

    @Test func settings_unsetOrEmpty_areTheDefaults() throws {
        let unset = try Configuration.fromEnvironment([:]).instance
        #expect(unset == InstanceInformation())
        #expect(unset.name == "posts-server" && unset.contactEmail == nil && unset.termsURL == nil && unset.privacyURL == nil)
        let empty = try Configuration.fromEnvironment(["INSTANCE_NAME": "", "CONTACT_EMAIL": "", "TERMS_URL": "", "PRIVACY_URL": ""])
        #expect(empty.instance == unset)
    }

    @Test(arguments: [
        ("INSTANCE_NAME", "   "), ("INSTANCE_NAME", "Posts\nSet-Cookie: x"), ("INSTANCE_NAME", String(repeating: "n", count: 101)),
        ("CONTACT_EMAIL", "operator"), ("CONTACT_EMAIL", "Ops <ops@example.com>"), ("CONTACT_EMAIL", "a@b.com, c@d.com"),
        ("CONTACT_EMAIL", "ops@"), ("TERMS_URL", "example.com/terms"), ("TERMS_URL", "/terms"), ("TERMS_URL", "ftp://example.com/terms"),
        ("TERMS_URL", "https://"), ("TERMS_URL", "https://example.com/our terms"), ("PRIVACY_URL", "mailto:privacy@example.com"),
        ("PRIVACY_URL", "https://user:secret@example.com/privacy"), ("PRIVACY_URL", "javascript:alert(1)"),
    ])
    func invalidValues_refuseToStart_namingTheirVariable(_ name: String, _ value: String) {
        let error = #expect(throws: Configuration.Invalid.self, "\(name)=\(value)") {
            try Configuration.fromEnvironment([name: value])
        }
        #expect(error?.description.hasPrefix(name + " ") == true, "\(error?.description ?? "")")
        #expect(error?.description.contains("secret") == false)
    }

    @Test func longestName_andIDNHosts_areAccepted() throws {
        let name = String(repeating: "é", count: InstanceInformation.maxNameCharacters)
        #expect(try Configuration.fromEnvironment(["INSTANCE_NAME": name]).instance.name == name)
        let urls = try Configuration.fromEnvironment(["TERMS_URL": "HTTPS://xn--caf-dma.example/terms",
                                                      "PRIVACY_URL": "http://[2001:db8::1]:8080/privacy"]).instance
        #expect(urls.termsURL == "HTTPS://xn--caf-dma.example/terms" && urls.privacyURL == "http://[2001:db8::1]:8080/privacy")
    }

    /// The binary: a bad value stops `serve` before anything listens; flags win over the
    /// environment like every other setting's.
    @Test func serve_refusesABadContactEmail_andTakesTheFlags() throws {
        let refused = try ServerProcess(["serve", "--no-migrate"],
                                        environment: ["DATABASE_URL": "postgres://x@y/z", "CONTACT_EMAIL": "nobody"])
        #expect(try #require(refused.waitForExit()) != 0)
        #expect(refused.lines.contains { $0.contains("CONTACT_EMAIL") })

        let conninfo = try TestDatabase.makeDatabase()
        let process = try ServerProcess(["serve", "--no-migrate", "--port", "0", "--instance-name", "Flagged",
                                         "--contact-email", "ops@example.com", "--terms-url", "https://example.com/terms",
                                         "--privacy-url", "https://example.com/privacy"],
                                        environment: ["DATABASE_URL": conninfo, "CONTACT_EMAIL": "nobody", "TERMS_URL": "nowhere"])
        let port = try #require(process.listeningPort())
        let json = try APIClient(port: port).get("/api/instance").json
        #expect(json["name"] as? String == "Flagged" && json["contact_email"] as? String == "ops@example.com")
        #expect(json["terms_url"] as? String == "https://example.com/terms")
        #expect(json["privacy_url"] as? String == "https://example.com/privacy")
        process.signal(SIGTERM)
        #expect(process.waitForExit() == 0)
    }

    @Test func version_isWhatTheBinaryPrints_andTheDocumentsVersion() throws {
        let process = try ServerProcess(["--version"])
        #expect(process.waitForExit() == 0)
        #expect(process.lines == [ServerVersion.current])
        let document = String(decoding: try Data(contentsOf: OpenAPIDocumentTests.documentFile), as: UTF8.self)
        #expect(document.split(separator: "\n").contains("  version: \(ServerVersion.current)"))
    }
}
