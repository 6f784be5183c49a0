/// Something found at a place in one of a post's text fields: a mention or a hashtag.
protocol TextSpan {
    var field: String { get }
    var start: Int { get }
}

extension Mention: TextSpan {}
extension Hashtag: TextSpan {}

/// A post's spans after an edit: those of the fields the edit left alone are kept as they
/// were (a mention of a user renamed since stays theirs), those of the edited fields are
/// the ones parsed again; listed by field in `fieldOrder`, then by place.
enum TextSpans {
    /// A post's text fields, in the order their mentions and tags are listed.
    static let fieldOrder = ["title", "summary", "body"]

    static func merge<Span: TextSpan>(kept old: [Span], parsed: [Span], editedFields: Set<String>) -> [Span] {
        let order = fieldOrder
        let rank = { (span: Span) in order.firstIndex(of: span.field) ?? order.count }
        return (old.filter { !editedFields.contains($0.field) } + parsed).sorted {
            $0.field == $1.field ? $0.start < $1.start : rank($0) < rank($1)
        }
    }
}
