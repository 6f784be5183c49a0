import HTTP

/// The answer of a page about one post (its children, comments or likers): API.md's
/// `{"status":"success","post_id":…, <the page's members>, "next_cursor":…}`; 404 when the
/// service found no such post.
enum PostPageAnswer {
    static func make<Page>(_ postID: Int64, _ page: Page?, nextCursor: (Page) -> String?,
                           members: (Page, inout JSONObject) -> Void) throws(APIError) -> Response {
        guard let page else { throw APIError.notFound("no such post") }
        var answer = JSONObject.success()
        answer.add("post_id", postID)
        members(page, &answer)
        answer.add("next_cursor", nextCursor(page))
        return answer.response()
    }
}
