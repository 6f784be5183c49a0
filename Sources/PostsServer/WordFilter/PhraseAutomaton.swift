/// The blocked phrases as an Aho–Corasick automaton whose alphabet is words: a text's words
/// are fed through it once, one step each (amortised), whatever the number of phrases, so
/// checking a text costs time linear in the text. A regex per phrase would cost the
/// number of phrases times the text, on every request.
struct PhraseAutomaton: Sendable {
    /// A state: the words of some phrase's beginning read so far.
    private struct Node: Sendable {
        var next: [Substring: Int] = [:]
        /// The state of the longest proper suffix of this one that is also a phrase's
        /// beginning: where to go on when no phrase continues with the next word.
        var fallback = 0
        /// Some phrase ends here (or in a suffix of here: "b c" ends inside "a b c").
        var completesPhrase = false
    }

    private var nodes = [Node()]
    private static let root = 0

    var isEmpty: Bool { nodes.count == 1 }

    /// `phrases`: each a sequence of normalised words (`WordTokens`); empty ones are ignored.
    init(phrases: [[Substring]]) {
        for phrase in phrases where !phrase.isEmpty {
            var state = Self.root
            for word in phrase {
                if let next = nodes[state].next[word] {
                    state = next
                } else {
                    nodes.append(Node())
                    nodes[state].next[word] = nodes.count - 1
                    state = nodes.count - 1
                }
            }
            nodes[state].completesPhrase = true
        }
        linkFallbacks()
    }

    /// Breadth first, so that a state's fallback (which is shallower) is linked before it.
    private mutating func linkFallbacks() {
        var queue = Array(nodes[Self.root].next.values)
        var head = 0
        while head < queue.count {
            let state = queue[head]
            head += 1
            for (word, child) in nodes[state].next {
                var candidate = nodes[state].fallback
                while candidate != Self.root, nodes[candidate].next[word] == nil {
                    candidate = nodes[candidate].fallback
                }
                // The queue never holds the root: a child of the root falls back to the root.
                let fallback = nodes[candidate].next[word] ?? Self.root
                nodes[child].fallback = fallback
                if nodes[fallback].completesPhrase { nodes[child].completesPhrase = true }
                queue.append(child)
            }
        }
    }

    /// The start state, before any word.
    var start: Int { Self.root }

    /// The state after `word`: the longest phrase beginning that the words read end with.
    func advance(_ state: Int, over word: Substring) -> Int {
        var state = state
        while true {
            if let next = nodes[state].next[word] { return next }
            if state == Self.root { return Self.root }
            state = nodes[state].fallback
        }
    }

    /// Whether the words read so far end with a whole phrase.
    func completesPhrase(_ state: Int) -> Bool {
        nodes[state].completesPhrase
    }
}
