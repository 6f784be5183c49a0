import HTTP

extension Created {
    /// API.md's 201 `{"status":"success","<key>":<resource>}`, or the first answer again
    /// byte for byte (`IdempotentRequest.record` stored it in the same form).
    func response(as key: String) -> Response {
        switch self {
        case .created(let resource):
            var answer = JSONObject.success()
            answer.addRaw(key, resource)
            return answer.response(status: .created)
        case .replayed(let first):
            return Response.json(first.body, status: HTTPStatus(first.status, first.status == 201 ? "Created" : "OK"))
        }
    }
}
