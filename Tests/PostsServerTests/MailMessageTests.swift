import Foundation
import Testing
@testable import PostsServer

@Suite struct MailMessageTests {
    private func message(subject: String = "Your sign-in code: 123456", body: String = "Your code is 123456.",
                         name: String? = "Posts") -> String {
        let rendered = MailMessage(from: MailSender(name: name, address: "noreply@posts.test"), to: "ash@example.com",
                                   subject: subject, body: body, date: Date(timeIntervalSince1970: 1_795_563_518),
                                   messageID: "<m1@posts.test>").rendered
        return String(decoding: rendered, as: UTF8.self)
    }

    @Test func headers_areTheListedOnes_inCRLFLines() {
        #expect(message() == "From: Posts <noreply@posts.test>\r\nTo: ash@example.com\r\nSubject: Your sign-in code: 123456\r\n"
            + "Date: Tue, 24 Nov 2026 23:38:38 +0000\r\nMessage-ID: <m1@posts.test>\r\nMIME-Version: 1.0\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 7bit\r\n\r\nYour code is 123456.\r\n")
    }

    @Test func nonASCIISubject_isEncodedWords_neverRawUTF8() {
        let text = message(subject: "Votre code de connexion : 123456 — à bientôt, ça marche très bien ici")
        let subject = text.components(separatedBy: "\r\nDate:")[0].components(separatedBy: "Subject: ")[1]
        #expect(subject.hasPrefix("=?utf-8?B?"))
        #expect(subject.utf8.allSatisfy { $0 < 0x80 })
        let lines = subject.components(separatedBy: "\r\n")
        #expect(lines.count > 1)
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix(" =?utf-8?B?") })
        #expect(lines.allSatisfy { $0.count <= 78 - "Subject: ".count })
        let decoded = lines.map { line -> String in
            let word = line.trimmingCharacters(in: .whitespaces).dropFirst(10).dropLast(2)
            return String(decoding: Data(base64Encoded: String(word))!, as: UTF8.self)
        }.joined()
        #expect(decoded == "Votre code de connexion : 123456 — à bientôt, ça marche très bien ici")
    }

    @Test func lineBreaksInASubject_cannotStartAHeader() {
        let text = message(subject: "Hi\r\nBcc: victim@example.com")
        #expect(!text.contains("\r\nBcc:"))
        #expect(text.contains("Subject: Hi  Bcc: victim@example.com\r\n"))
    }

    @Test func nonASCIIBody_isQuotedPrintable() {
        let text = message(body: "Café = 1\nline two ")
        #expect(text.contains("Content-Transfer-Encoding: quoted-printable\r\n"))
        #expect(text.hasSuffix("\r\n\r\nCaf=C3=A9 =3D 1\r\nline two=20\r\n"))
    }

    @Test func longLines_areSoftBroken() {
        let lines = MailMessage.quotedPrintable(Substring(String(repeating: "é", count: 40)))
        #expect(lines.count == 4)
        #expect(lines.allSatisfy { $0.count <= 76 })
        #expect(lines.dropLast().allSatisfy { $0.hasSuffix("=") })
    }

    @Test func displayNames_areQuotedOrEncodedAsNeeded() {
        #expect(MailSender(name: "Posts, Inc.", address: "a@b.c").headerValue == "\"Posts, Inc.\" <a@b.c>")
        #expect(MailSender(name: "Zoë", address: "a@b.c").headerValue == "=?utf-8?B?Wm/Dqw==?= <a@b.c>")
        #expect(MailSender(name: nil, address: "a@b.c").headerValue == "a@b.c")
    }

    @Test func retries_backOffDoublingToFiveMinutes() {
        #expect((1...10).map(JobKind.mail.backoffSeconds(afterAttempt:)) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300])
        #expect(JobKind.mail.backoffSeconds(afterAttempt: 1000) == 300)
    }

    @Test func outcomes_followTheReplyClass() {
        #expect(SMTPOutcome.classify(curlCode: 0, replyCode: 250, message: "", cancelled: false) == .delivered)
        #expect(SMTPOutcome.classify(curlCode: 55, replyCode: 550, message: "RCPT failed", cancelled: false)
            == .rejected("RCPT failed (last reply 550)"))
        #expect(SMTPOutcome.classify(curlCode: 8, replyCode: 451, message: "x", cancelled: false) == .retry("x (last reply 451)"))
        #expect(SMTPOutcome.classify(curlCode: 7, replyCode: 0, message: "refused", cancelled: false) == .retry("refused"))
        #expect(SMTPOutcome.classify(curlCode: 64, replyCode: 250, message: "STARTTLS", cancelled: false).failed)
        #expect(SMTPOutcome.classify(curlCode: 67, replyCode: 535, message: "login", cancelled: false) == .retry("login (last reply 535)"))
        #expect(SMTPOutcome.classify(curlCode: 42, replyCode: 550, message: "stop", cancelled: true)
            == .retry("stopped while sending: stop (last reply 550)"))
    }
}
