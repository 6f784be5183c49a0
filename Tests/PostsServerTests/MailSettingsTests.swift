import Testing
@testable import PostsServer

@Suite struct MailSettingsTests {
    private func parse(_ url: String, from: String = "noreply@example.com") throws -> MailSettings {
        try #require(try MailSettings.parse(smtpURL: url, mailFrom: from, caFile: nil))
    }

    @Test func noURL_meansNoMailer() throws {
        #expect(try MailSettings.parse(smtpURL: nil, mailFrom: nil, caFile: nil) == nil)
        #expect(try Configuration.fromEnvironment([:]).mail == nil)
    }

    @Test func smtp_defaultsTo587WithSTARTTLSRequired() throws {
        let settings = try parse("smtp://smtp.example.com")
        #expect(settings.host == "smtp.example.com" && settings.port == 587 && settings.security == .startTLS)
        #expect(settings.username == nil && settings.password == nil)
        #expect(settings.connectURL == "smtp://smtp.example.com:587")
    }

    @Test func smtps_defaultsTo465WithTLSFromTheStart() throws {
        let settings = try parse("SMTPS://mail.example.com/")
        #expect(settings.port == 465 && settings.security == .implicitTLS)
        #expect(settings.connectURL == "smtps://mail.example.com:465")
    }

    @Test func credentials_arePercentDecoded_andNeverDescribed() throws {
        let settings = try parse("smtp://apikey:SG.a%2Fb%40c%3Ad%25@smtp.example.com:2525")
        #expect(settings.username == "apikey" && settings.password == "SG.a/b@c:d%")
        #expect(settings.port == 2525)
        #expect(!settings.description.contains("SG.a"))
        #expect(settings.description.contains("apikey:****@"))
        // A user without a password is a user (AUTH with an empty password is libcurl's call).
        #expect(try parse("smtp://only@smtp.example.com").username == "only")
    }

    @Test func starttlsOff_onlyForLoopback() throws {
        #expect(try parse("smtp://127.0.0.1:1025?starttls=off").security == .none)
        #expect(try parse("smtp://localhost:1025?starttls=off").security == .none)
        let ipv6 = try parse("smtp://[::1]:1025?starttls=off")
        #expect(ipv6.security == .none && ipv6.host == "::1" && ipv6.connectURL == "smtp://[::1]:1025")
        for unsafe in ["smtp://mail.example.com?starttls=off", "smtp://10.0.0.1:25?starttls=off",
                       "smtp://127.example.com?starttls=off", "smtps://127.0.0.1?starttls=off"] {
            #expect(throws: Configuration.Invalid.self, "\(unsafe)") { try parse(unsafe) }
        }
    }

    @Test func malformedURLs_areRefused_withoutRepeatingThem() throws {
        for bad in ["http://smtp.example.com", "smtp://", "smtp://:587", "smtp://host:0", "smtp://host:65536",
                    "smtp://host:abc", "smtp://host/path", "smtp://host?starttls=on", "smtp://ho st",
                    "smtp://user:pa%zzss@host", "smtp://[::1", "smtp://user:secret%0A@host"] {
            do {
                _ = try parse(bad)
                Issue.record("accepted \(bad)")
            } catch {
                #expect("\(error)".contains("SMTP_URL"))
                #expect(!"\(error)".contains("secret"))
            }
        }
    }

    @Test func mailFrom_isRequired_andParsed() throws {
        #expect(throws: Configuration.Invalid.self) { try MailSettings.parse(smtpURL: "smtp://h", mailFrom: nil, caFile: nil) }
        #expect(try parse("smtp://h", from: "noreply@example.com").from == MailSender(name: nil, address: "noreply@example.com"))
        #expect(try parse("smtp://h", from: "Posts App <noreply@example.com>").from
            == MailSender(name: "Posts App", address: "noreply@example.com"))
        #expect(try parse("smtp://h", from: "\"Posts, Inc.\" <noreply@example.com>").from.name == "Posts, Inc.")
        for bad in ["noreply", "a@b.c, d@e.f", "Posts <a@b.c>\r\nBcc: x@y.z", "Posts <not an address>", "<>", "x\n<a@b.c>"] {
            #expect(throws: Configuration.Invalid.self, "\(bad.debugDescription)") { try parse("smtp://h", from: bad) }
        }
    }

    @Test func environment_fillsTheConfiguration() throws {
        let configuration = try Configuration.fromEnvironment([
            "SMTP_URL": "smtps://u:p@mail.example.com", "MAIL_FROM": "Posts <n@example.com>", "SMTP_CA_FILE": "/etc/ca.pem",
        ])
        let mail = try #require(configuration.mail)
        #expect(mail.security == .implicitTLS && mail.username == "u" && mail.password == "p" && mail.caFile == "/etc/ca.pem")
        #expect(throws: Configuration.Invalid.self) { try configuration.validate() }
    }
}
