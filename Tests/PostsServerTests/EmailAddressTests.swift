import Testing
@testable import PostsServer

@Suite struct EmailAddressTests {
    @Test func plausibleMailboxes_areKept_lowercasedAndTrimmed() throws {
        #expect(try EmailAddress(" Ash@Example.COM\r\n").value == "ash@example.com")
        for good in ["a@b", "first.last+tag@sub.example.co.uk", "o'brien@example.ie", "zoë@exämple.de", "x_y-z@1.2.3.4"] {
            #expect(throws: Never.self, "\(good)") { try EmailAddress(good) }
        }
    }

    @Test func headerInjection_andSecondRecipients_areRefused() {
        let attempts = [
            "a@b.c\r\nBcc: v@x.y", "a@b.c\nBcc: v@x.y", "a@b.c\rBcc: v@x.y", "a@b.c>\r\nRCPT TO:<v@x.y", "<a@b.c>",
            "a@b.c, v@x.y", "a@b.c,v@x.y", "a@b.c;v@x.y", "a b@c.d", "a@b.c v@x.y", "a\t@b.c", "a@b\u{0}.c", "a@b.c\u{7F}",
            "a\u{85}@b.c", "a\u{2028}@b.c", "a\u{200B}@b.c", "\"a\"@b.c", "a\\@b.c", "a(x)@b.c", "a@[1.2.3.4]", "a:b@c.d",
            "a@b@c.d", "@b.c", "a@", "a@.b", "a@b.", "", String(repeating: "a", count: 65) + "@b.c",
            "a@" + String(repeating: "b", count: 253),
        ]
        for text in attempts {
            #expect(throws: APIError.self, "\(text.debugDescription)") { try EmailAddress(text) }
            #expect(!EmailAddress.isPlausibleMailbox(text), "\(text.debugDescription)")
        }
    }

    @Test func the254ByteLimit_countsBytes() throws {
        let local = String(repeating: "a", count: 64)
        let fits = local + "@" + String(repeating: "b", count: 254 - 65)
        #expect(fits.utf8.count == 254)
        #expect(throws: Never.self) { try EmailAddress(fits) }
        #expect(throws: APIError.self) { try EmailAddress(fits + "b") }
        // Characters are not bytes: 127 two-byte letters are 254 bytes and then some.
        #expect(throws: APIError.self) { try EmailAddress("a@" + String(repeating: "é", count: 127)) }
    }
}
