import HTTP

/// `GET /api/instance`: the operator's name, contact and terms, the server's version and
/// features. Open to all (an app shows it before anyone signs in), and the same answer for
/// the whole run: rendered once at start, served on the event loop like `/api/ping`.
enum InstanceRoutes {
    static func register(on routes: inout RouteTable, configuration: Configuration, webPushPublicKey: String?) {
        let response = answer(for: configuration, webPushPublicKey: webPushPublicKey)
        routes.get("/api/instance", access: .open, runsOnEventLoop: true) { _, _ in response }
    }

    static func answer(for configuration: Configuration, webPushPublicKey: String? = nil) -> Response {
        let information = configuration.instance
        var object = JSONObject.success()
        object.add("name", information.name)
        object.add("contact_email", information.contactEmail)
        object.add("terms_url", information.termsURL)
        object.add("privacy_url", information.privacyURL)
        object.add("version", ServerVersion.current)
        object.add("features", InstanceInformation.features(of: configuration))
        // How one signs in: email codes always, then each OIDC_PROVIDERS name.
        object.add("sign_in", ["email"] + configuration.oidcProviders.map(\.name))
        // What a page passes to `pushManager.subscribe` as `applicationServerKey`.
        if let webPushPublicKey { object.add("webpush_public_key", webPushPublicKey) }
        return object.response()
    }
}
