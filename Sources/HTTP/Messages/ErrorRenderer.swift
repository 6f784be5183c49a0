/// How the server turns an `HTTPError` into a response: the application's envelope and
/// its status → code table, supplied through `ServerConfiguration.errorRenderer`. The
/// server adds the error's own headers (`Retry-After`, `Allow`) to whatever it renders.
public struct ErrorRenderer: Sendable {
    public typealias Render = @Sendable (HTTPError) -> Response

    private let render: Render

    public init(_ render: @escaping Render) {
        self.render = render
    }

    public func response(for error: HTTPError) -> Response {
        var response = render(error)
        for field in error.headers { response.headers.add(field.name, field.value) }
        return response
    }

    /// For a server without an application's envelope: the status line's reason and the
    /// message as plain text (`404 Not Found: no such post`).
    public static let plainText = ErrorRenderer { error in
        let text = "\(error.status.code) \(error.status.reason): \(error.message)\n"
        return Response(status: error.status, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")]),
                        body: Array(text.utf8))
    }
}
