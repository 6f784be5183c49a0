import Testing
@testable import PostsServer

/// The pure parser: which `#`s start a tag, what the name is, and UTF-8 byte offsets.
@Suite struct HashtagParserTests {
    private func parse(_ text: String) -> [HashtagParser.Found] { HashtagParser().tags(in: text) }
    private func names(_ text: String) -> [String] { parse(text).map(\.name) }

    /// The bytes `start..<end` of the text: what a client cuts out with the offsets.
    private func slice(_ text: String, _ tag: HashtagParser.Found) -> String {
        String(decoding: Array(text.utf8)[tag.start..<tag.end], as: UTF8.self)
    }

    @Test func plainTag_startsAtTheHash_andEndsAfterTheName() {
        #expect(parse("#swift rocks") == [.init(start: 0, end: 6, name: "swift")])
        #expect(parse("hi #Swift_6, hi") == [.init(start: 3, end: 11, name: "Swift_6")])
    }

    @Test func offsets_areUTF8Bytes_afterEmojiAndAccents() {
        // "é" is 2 bytes (precomposed), "👩‍👩‍👧" 18, "e\u{301}" 3: offsets count bytes, not characters.
        for prefix in ["café ", "👩‍👩‍👧 ", "e\u{301} ", "日本語 ", "🎉", "(", "«", "\n"] {
            let text = prefix + "#one and #two."
            let found = parse(text)
            #expect(found.count == 2, "\(prefix)")
            #expect(found.first?.start == prefix.utf8.count, "\(prefix)")
            #expect(found.map { slice(text, $0) } == ["#one", "#two"], "\(prefix)")
        }
        #expect(parse("café #tag") == [.init(start: 6, end: 10, name: "tag")])
    }

    @Test func accentsAndCase_areKeptAsWritten() {
        // One tag for the database (it folds NFKC, accents and case); the parser only finds.
        #expect(parse("#Café #CAFE #cafe") == [
            .init(start: 0, end: 6, name: "Café"),
            .init(start: 7, end: 12, name: "CAFE"),
            .init(start: 13, end: 18, name: "cafe"),
        ])
        #expect(names("#Cafe\u{301}") == ["Cafe\u{301}"])
    }

    @Test func hashAlone_orAtTheEnd_isNothing() {
        #expect(parse("#").isEmpty)
        #expect(parse("hello #").isEmpty)
        #expect(parse("# # #").isEmpty)
        #expect(parse("#!").isEmpty)
        #expect(parse("#🎉").isEmpty)
        #expect(parse("").isEmpty)
    }

    @Test func nameEnds_atTheFirstNonWordCharacter() {
        #expect(parse("#a-b") == [.init(start: 0, end: 2, name: "a")])
        #expect(names("#tag. #tag, #tag! (#tag) #tag🎉 #a\u{200D}b") == ["tag", "tag", "tag", "tag", "tag", "a"])
    }

    @Test func joinedHashes_areNoTags() {
        #expect(parse("##x").isEmpty)
        #expect(parse("C# and F#").isEmpty)
        #expect(parse("C#x").isEmpty)
        #expect(parse("&#38;").isEmpty)
        #expect(parse("site.org/#top").isEmpty)
        #expect(parse("a.#b").isEmpty)
        #expect(parse("é#x e\u{301}#x 日#x 1#x _#x").isEmpty)
        // A `#` that cannot start a tag does not hide the next one.
        #expect(parse("C# #swift") == [.init(start: 3, end: 9, name: "swift")])
    }

    @Test func digitsOnly_isANumber_notATag() {
        #expect(parse("#1").isEmpty)
        #expect(parse("issue #42, #2026").isEmpty)
        // Digits of other scripts are digits too (Arabic-Indic, fullwidth).
        #expect(parse("#١٢٣ #１２").isEmpty)
        #expect(parse("#1a") == [.init(start: 0, end: 3, name: "1a")])
        #expect(names("#a1 #2024_recap #_") == ["a1", "2024_recap", "_"])
    }

    @Test func namesWithoutALetter_areNoTags() {
        // NFKC folds "²" and "①" to "2" and "1": a digits-only name under another spelling.
        #expect(parse("#² #①").isEmpty)
        // Marks alone fold to nothing at all (accents are removed): no name.
        #expect(parse("#\u{301} #\u{301}\u{302} #1\u{301}").isEmpty)
    }

    @Test func anyScript_isAName() {
        let texts = ["#東京", "#ラーメン", "#北京烤鸭", "#مرحبا", "#서울", "#Москва", "#Ἀθῆναι", "#हिन्दी", "#ไทย"]
        for text in texts {
            #expect(parse(text) == [.init(start: 0, end: text.utf8.count, name: String(text.dropFirst()))], "\(text)")
        }
        // A run of CJK ends where a space or punctuation does, not between characters.
        #expect(names("今日は#東京タワー、明日は #大阪。") == ["大阪"])
        #expect(names("見て #東京タワー、明日") == ["東京タワー"])
        #expect(names("#مرحبا_بالعالم و #서울 여행") == ["مرحبا_بالعالم", "서울"])
    }

    @Test func combiningMarks_belongToTheName() {
        // "e" + U+0301: 3 bytes, one character; the mark does not end the name.
        #expect(parse("#Cafe\u{301} x") == [.init(start: 0, end: 7, name: "Cafe\u{301}")])
        #expect(parse("#हिन्दी").first?.end == "#हिन्दी".utf8.count)
    }

    @Test func length_isAtMost100Scalars() {
        let hundred = String(repeating: "a", count: 100)
        #expect(parse("#\(hundred)") == [.init(start: 0, end: 101, name: hundred)])
        // Too long is no tag, not a tag of its first 100 characters.
        #expect(parse("#\(hundred)b").isEmpty)
        // Scalars are counted, not bytes: 100 three-byte scalars are a tag.
        let hundredKanji = String(repeating: "字", count: 100)
        #expect(parse("#\(hundredKanji)") == [.init(start: 0, end: 301, name: hundredKanji)])
        #expect(parse("#\(hundredKanji)字").isEmpty)
        // A precomposed "é" is one scalar, "e\u{301}" two.
        #expect(parse("#" + String(repeating: "é", count: 100)).count == 1)
        #expect(parse("#" + String(repeating: "e\u{301}", count: 51)).isEmpty)
    }

    @Test func tags_areCapped() {
        let text = Array(repeating: "#abc", count: 200).joined(separator: " ")
        #expect(parse(text).count == HashtagParser.maxTags)
        #expect(HashtagParser(maxTags: 2).tags(in: text).map(\.start) == [0, 5])
    }

    @Test func repeatedNames_areEachATag() {
        #expect(parse("#a #a #A").map(\.start) == [0, 3, 6])
    }

    @Test func invalidUTF8_neverCrashes_andReadsAsASymbol() {
        func parseBytes(_ bytes: [UInt8]) -> [HashtagParser.Found] {
            bytes.withUnsafeBufferPointer { HashtagParser().tags(in: $0) }
        }
        // A stray byte before the `#` is U+FFFD, a symbol: the tag stands.
        #expect(parseBytes([0xFF, 0x23, 0x61]) == [.init(start: 1, end: 3, name: "a")])
        #expect(parseBytes([0xC3, 0x23, 0x61]) == [.init(start: 1, end: 3, name: "a")])
        // One inside or after the name ends it.
        #expect(parseBytes([0x23, 0x61, 0xFF, 0x62]) == [.init(start: 0, end: 2, name: "a")])
        #expect(parseBytes([0x23, 0xFF]).isEmpty)
        // A truncated sequence at the end, lone continuation bytes, overlong and surrogate forms.
        for bytes: [UInt8] in [[0x23, 0xE6, 0x9D], [0x23, 0x80, 0x80], [0x23, 0xC0, 0xA3], [0x23, 0xED, 0xA0, 0x80],
                               [0x80, 0x23], [0xF4, 0x90, 0x80, 0x80, 0x23, 0x78], [0x23], [0xE6, 0x9D, 0xB1, 0x23]] {
            for found in parseBytes(bytes) {
                #expect(found.start < found.end && found.end <= bytes.count)
            }
        }
        // Every byte value in every position of a short text: no crash, offsets in bounds.
        for position in 0..<4 {
            for byte in UInt8.min...UInt8.max {
                var bytes = Array("#ab#".utf8)
                bytes[position] = byte
                for found in parseBytes(bytes) { #expect(found.end <= bytes.count && bytes[found.start] == 0x23) }
            }
        }
    }
}
