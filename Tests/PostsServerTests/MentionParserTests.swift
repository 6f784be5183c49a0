import Testing
@testable import PostsServer

/// The pure parser: which `@`s start a mention, what the name is, and UTF-8 byte offsets.
@Suite struct MentionParserTests {
    private func parse(_ text: String) -> [MentionParser.Candidate] { MentionParser().candidates(in: text) }

    /// The bytes `start..<end` of the text, for the name `name`.
    private func slice(_ text: String, _ candidate: MentionParser.Candidate, _ name: String) -> String {
        String(decoding: Array(text.utf8)[candidate.start..<candidate.end(for: name)], as: UTF8.self)
    }

    @Test func plainMention_startsAtTheAtSign() {
        #expect(parse("@ash hello") == [.init(start: 0, names: ["ash"])])
        #expect(parse("hi @Ash_99, hi") == [.init(start: 3, names: ["Ash_99"])])
    }

    @Test func offsets_areUTF8Bytes_afterEmojiAndAccents() {
        // "é" is 2 bytes (precomposed), "👩‍👩‍👧" 18, "e\u{301}" 3: offsets count bytes, not characters.
        for prefix in ["café ", "👩‍👩‍👧 ", "e\u{301} ", "日本語 ", "🎉", "(", "«"] {
            let text = prefix + "@ash and @blair."
            let found = parse(text)
            #expect(found.count == 2, "\(prefix)")
            #expect(found.first?.start == prefix.utf8.count, "\(prefix)")
            #expect(found.map { slice(text, $0, $0.names.last!) } == ["@ash", "@blair"], "\(prefix)")
        }
        #expect(parse("café @ash")[0].start == 6)
    }

    @Test func emailsAndJoinedAts_areNoMentions() {
        #expect(parse("write to ash@example.com").isEmpty)
        #expect(parse("a@bcd").isEmpty)
        #expect(parse("é@ash").isEmpty)
        #expect(parse("e\u{301}@ash").isEmpty)
        #expect(parse("x.@ash @@ash site.org/@ash a-@ash a+@ash").isEmpty)
        #expect(parse("@ash@other.social").isEmpty)
        #expect(parse("@ashé @ash1٣").isEmpty)
    }

    @Test func atSignAtTheEnd_orAlone_isNothing() {
        #expect(parse("@").isEmpty)
        #expect(parse("hello @").isEmpty)
        #expect(parse("@ @ @").isEmpty)
        #expect(parse("").isEmpty)
    }

    @Test func repeatedNames_areEachAMention() {
        let found = parse("@ash @ash and @ASH")
        #expect(found.map(\.start) == [0, 5, 14])
        #expect(found.map(\.names) == [["ash"], ["ash"], ["ASH"]])
    }

    @Test func lengths_areUsernameLengths() {
        let thirty = String(repeating: "a", count: 30)
        #expect(parse("@\(thirty)") == [.init(start: 0, names: [thirty])])
        // Too long is no mention, not a mention of its first 30 characters.
        #expect(parse("@\(thirty)b").isEmpty)
        #expect(parse("@ab and @a").isEmpty)
    }

    @Test func trailingDots_giveTheShorterNameToo() {
        #expect(parse("thanks @ash.") == [.init(start: 7, names: ["ash.", "ash"])])
        #expect(parse("@ash... ok") == [.init(start: 0, names: ["ash...", "ash"])])
        #expect(parse("@first.last") == [.init(start: 0, names: ["first.last"])])
        #expect(parse("@a.") == [])
        let longDots = "@ash" + String(repeating: ".", count: 40)
        #expect(parse(longDots) == [.init(start: 0, names: ["ash"])])
    }

    @Test func candidates_areCapped() {
        let text = Array(repeating: "@abc", count: 200).joined(separator: " ")
        #expect(parse(text).count == MentionParser.maxCandidates)
    }
}
