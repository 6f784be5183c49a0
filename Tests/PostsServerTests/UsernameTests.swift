import Testing
@testable import PostsServer

@Suite struct UsernameTests {
    private func base(_ email: String) throws -> String { Username.base(for: try EmailAddress(email)) }

    @Test func base_isTheLocalPartReducedAndPadded() throws {
        #expect(try base("Ash@example.com") == "ash")
        #expect(try base("first.last+tag@example.com") == "first.lasttag")
        #expect(try base("a@example.com") == "a__")
        #expect(try base("über_user@example.com") == "ber_user")
        #expect(try base("日本@example.com") == "user")
        #expect(try base("\(String(repeating: "x", count: 40))@example.com").count == 24)
    }

    @Test func candidates_numberTheBase() {
        #expect(Username.candidates(from: "ash", count: 4) == ["ash", "ash2", "ash3", "ash4"])
    }

    @Test func chosenNames_followTheRules() throws {
        for good in ["ash", "a.b_c", "abc123", String(repeating: "z", count: 30)] {
            #expect(try Username.validate(good) == good)
        }
        for bad in ["ab", "Ash", "a-b", "a b", "", String(repeating: "z", count: 31), "émile"] {
            #expect(throws: (any Error).self, "\(bad)") { try Username.validate(bad) }
        }
    }

    @Test func emails_areTrimmedLowercasedAndChecked() throws {
        #expect(try EmailAddress("  Ash@Example.COM ").value == "ash@example.com")
        for bad in ["", "ash", "@example.com", "ash@", "a b@example.com", "a@b@c", "ash@.example.com", "ash@example.com."] {
            #expect(throws: (any Error).self, "\(bad)") { try EmailAddress(bad) }
        }
    }
}
