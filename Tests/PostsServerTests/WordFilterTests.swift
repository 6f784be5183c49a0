import Testing
@testable import PostsServer

/// The matcher alone, on strings: no file, no server.
@Suite struct WordFilterTests {
    private let filter = WordFilter(entries: ["ass", "Badword", "hate speech", "straße", "fish", "88"])

    @Test func wholeWords_matchAnywhereInTheText() {
        for text in ["ass", "what an ass.", "ASS!", "(ass)", "an ass-hat", "bad_ass", "badword", "say 88 twice"] {
            #expect(filter.matches(text), "\(text)")
        }
    }

    @Test func wordsInsideOtherWords_doNotMatch() {
        for text in ["class", "passage", "assassin", "badwords", "a classy ass3t", "sass", "1988", "fishing", "",
                     "hate", "speech"] {
            #expect(!filter.matches(text), "\(text)")
        }
    }

    @Test func case_isIgnoredInEveryScript() {
        #expect(filter.matches("BADWORD"))
        #expect(filter.matches("BaDwOrD"))
        // Case folding, not lowercasing: the capital sharp s folds to "ss" as the small one does.
        #expect(filter.matches("STRASSE"))
        #expect(filter.matches("Straße"))
        #expect(filter.matches("STRAẞE"))
        #expect(WordFilter(entries: ["ΟΔΟΣ"]).matches("η οδος"))
    }

    @Test func compatibilityForms_areTheWordTheyStandFor() {
        #expect(filter.matches("ＢＡＤＷＯＲＤ"), "fullwidth")
        #expect(filter.matches("ﬁsh and chips"), "the fi ligature")
        #expect(filter.matches("𝐚𝐬𝐬"), "mathematical bold")
        #expect(filter.matches("⑧⑧"), "circled digits")
        #expect(WordFilter(entries: ["ｶﾀｶﾅ"]).matches("カタカナ"), "halfwidth katakana in the list")
        #expect(WordFilter(entries: ["café"]).matches("CAFE\u{301}"), "a combining accent")
    }

    @Test func invisibleCharacters_doNotSplitAWord() {
        #expect(filter.matches("bad\u{200B}word"))
        #expect(filter.matches("bad\u{AD}word"))
        #expect(!filter.matches("bad word"))
    }

    @Test func phrases_matchTheirWordsInOrder_withAnySeparators() {
        for text in ["no hate speech here", "HATE-SPEECH", "hate,   speech", "hate\nspeech", "hate…speech",
                     "hate hate speech"] {
            #expect(filter.matches(text), "\(text)")
        }
        for text in ["speech hate", "hate free speech", "hateful speech", "hate speeches"] {
            #expect(!filter.matches(text), "\(text)")
        }
    }

    @Test func overlappingPhrases_areFoundByTheAutomaton() {
        let phrases = WordFilter(entries: ["a b c d", "b c e", "c x"])
        #expect(phrases.matches("a b c e"), "a failed a b c d falls back to b c e")
        #expect(phrases.matches("a b c x"), "and further to c x")
        #expect(phrases.matches("z a b c d z"))
        #expect(!phrases.matches("a b c"))
        #expect(!phrases.matches("a b x c"))
    }

    @Test func entries_areCountedOnceAndEmptyOnesIgnored() {
        let counted = WordFilter(entries: ["Ass", "ass", "ＡＳＳ", "hate  speech", "hate-speech", "***", ""])
        #expect(counted.entryCount == 2)
        #expect(WordFilter.empty.isEmpty)
        #expect(!WordFilter.empty.matches("anything at all"))
    }

    @Test func words_areRunsOfLettersMarksAndDigits() {
        #expect(WordTokens.words(of: "Don't STOP—me_now 42x ｅｎｄ").map(String.init)
                == ["don", "t", "stop", "me", "now", "42x", "end"])
        #expect(WordTokens.words(of: "日本語 テキスト").map(String.init) == ["日本語", "テキスト"])
        #expect(WordTokens.words(of: "  ...  ").isEmpty)
    }

    /// Linear in the text: a body of 20,000 characters against many phrases sharing
    /// beginnings is checked quickly. A bound, not a benchmark: a quadratic matcher would
    /// take seconds here.
    @Test func longTexts_costLinearTime() {
        let entries = (0..<2_000).map { "w w w w w w w w x\($0)" } + (0..<2_000).map { "single\($0)" }
        let many = WordFilter(entries: entries)
        let text = String(repeating: "w ", count: 10_000)
        let clock = ContinuousClock()
        let elapsed = clock.measure { #expect(!many.matches(text)) }
        #expect(elapsed < .seconds(1), "\(elapsed)")
        #expect(many.matches(text + "x1999"))
    }
}
