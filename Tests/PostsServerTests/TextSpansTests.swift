import Testing
@testable import PostsServer

/// An edit's spans: the untouched fields' kept, the edited fields' replaced, listed by field
/// (title, summary, body) then by place.
@Suite struct TextSpansTests {
    private func tag(_ name: String, _ field: String, _ start: Int) -> Hashtag {
        Hashtag(name: name, field: field, start: start, end: start + name.utf8.count + 1)
    }

    @Test func anEditedField_replacesItsSpans_andKeepsTheOthers_inFieldOrder() {
        let old = [tag("a", "title", 0), tag("b", "summary", 4), tag("c", "body", 2), tag("d", "body", 9)]
        let parsed = [tag("e", "summary", 7), tag("f", "summary", 1)]
        let merged = TextSpans.merge(kept: old, parsed: parsed, editedFields: ["summary"])
        #expect(merged.map(\.name) == ["a", "f", "e", "c", "d"])
    }

    @Test func anEditedFieldWithNothingLeft_dropsItsSpans() {
        let old = [tag("a", "title", 0), tag("c", "body", 2)]
        let merged = TextSpans.merge(kept: old, parsed: [], editedFields: ["title", "body"])
        #expect(merged.isEmpty)
    }
}
