import HTTP

/// `GET /api/openapi.yaml`: the document that describes every route, compiled into the
/// binary so a container or a copied executable serves the one it was built with.
enum OpenAPIRoutes {
    private static let document: Response = {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/yaml")
        return Response(status: .ok, headers: headers, body: PackageResources.openapi_yaml)
    }()

    static func register(on routes: inout RouteTable) {
        routes.get("/api/openapi.yaml", access: .open) { _, _ in document }
    }
}
