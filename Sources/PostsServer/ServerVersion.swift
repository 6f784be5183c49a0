/// The version of this server: what `posts-server --version` prints and `/api/instance`
/// answers. It is openapi.yaml's `info.version` (a test keeps the two equal); a release
/// raises both.
public enum ServerVersion {
    public static let current = "0.1.0"
}
