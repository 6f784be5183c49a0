/// API.md's word filter: whether a text contains a blocked word or phrase, as whole words,
/// ignoring case and Unicode compatibility forms. A value built once per list (at start and
/// on each reload), then only read: the list is normalised once, into a set of single words
/// and an automaton of phrases, and a text is normalised and cut into words once, each word
/// looked up once. Nothing here is a regex, and nothing grows with the list per request.
struct WordFilter: Sendable {
    private let words: Set<Substring>
    private let phrases: PhraseAutomaton
    /// Distinct words and phrases, as the log reports them; entries without a letter or
    /// digit (`***`) block nothing and are not counted.
    let entryCount: Int

    static let empty = WordFilter(entries: [])

    /// `entries`: words or phrases as a list file gives them (`BlockedWordsFile.entries`).
    /// A phrase's words may be separated by any spaces or punctuation, in the list as in a
    /// text: `"hate  speech"`, `hate-speech` and `hate, speech` are one phrase.
    init(entries: [String]) {
        var words = Set<Substring>()
        var phrases = Set<[Substring]>()
        for entry in entries {
            let entryWords = WordTokens.words(of: entry)
            switch entryWords.count {
            case 0: continue
            case 1: words.insert(entryWords[0])
            default: phrases.insert(entryWords)
            }
        }
        self.words = words
        // A phrase holding a blocked word is matched by that word already.
        let needed = phrases.filter { phrase in !phrase.contains(where: words.contains) }
        self.phrases = PhraseAutomaton(phrases: Array(needed))
        entryCount = words.count + phrases.count
    }

    var isEmpty: Bool { words.isEmpty && phrases.isEmpty }

    /// Whether `text` holds a blocked word, or a blocked phrase's words one after another.
    func matches(_ text: String) -> Bool {
        if isEmpty || text.isEmpty { return false }
        var state = phrases.start
        let usesPhrases = !phrases.isEmpty
        return WordTokens.first(in: WordTokens.normalized(text)) { word in
            if words.contains(word) { return true }
            guard usesPhrases else { return false }
            state = phrases.advance(state, over: word)
            return phrases.completesPhrase(state)
        }
    }
}
