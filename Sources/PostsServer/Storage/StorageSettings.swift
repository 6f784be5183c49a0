import Foundation

/// `STORAGE_URL`, `S3_ACCESS_KEY_ID`, `S3_SECRET_ACCESS_KEY` and `S3_PUBLIC_URL` (API.md
/// "Storage for many instances"), parsed without I/O. Its description shows no secret.
public struct StorageSettings: Sendable, Equatable, CustomStringConvertible {
    public var location: StorageLocation
    public var accessKeyID: String?
    public var secretAccessKey: String?
    /// `S3_PUBLIC_URL` without its trailing slash.
    public var publicURL: String?

    public var description: String {
        switch location {
        case .file(let directory): "file://\(directory)"
        case .s3(let bucket): "\(bucket)"
        }
    }

    /// nil when `STORAGE_URL` is unset: the files stay in `UPLOAD_DIR`. An error naming the
    /// variable for a malformed URL, a bucket without both credentials, or a public URL
    /// that is not http(s) or is given for a folder (a folder has no public address).
    public static func parse(url: String?, accessKeyID: String?, secretAccessKey: String?,
                             publicURL: String?) throws(Configuration.Invalid) -> StorageSettings? {
        guard let url else {
            guard publicURL == nil else { throw Configuration.Invalid(description: "S3_PUBLIC_URL needs an s3:// STORAGE_URL") }
            return nil
        }
        let location: StorageLocation
        do {
            location = try StorageLocation(parsing: url)
        } catch {
            throw Configuration.Invalid(description: error.description)
        }
        if location.isS3 && (accessKeyID == nil || secretAccessKey == nil) {
            throw Configuration.Invalid(description: "S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required with an s3:// STORAGE_URL")
        }
        if let publicURL {
            guard location.isS3 else { throw Configuration.Invalid(description: "S3_PUBLIC_URL needs an s3:// STORAGE_URL") }
            guard let components = URLComponents(string: publicURL), ["http", "https"].contains(components.scheme ?? ""),
                  components.host?.isEmpty == false, components.query == nil, components.fragment == nil else {
                throw Configuration.Invalid(description: "S3_PUBLIC_URL must be an http(s) URL with no query, not \"\(publicURL)\"")
            }
        }
        return StorageSettings(location: location, accessKeyID: accessKeyID, secretAccessKey: secretAccessKey,
                               publicURL: publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 })
    }

    /// The store these settings name; `uploadDirectory` when there are none.
    static func makeStore(_ settings: StorageSettings?, uploadDirectory: String,
                          metrics: StorageMetrics) throws -> any ObjectStore {
        switch settings?.location {
        case nil: return try FileObjectStore(directory: uploadDirectory)
        case .file(let directory): return try FileObjectStore(directory: directory)
        case .s3(let location):
            let credentials = S3Client.Credentials(accessKeyID: settings?.accessKeyID ?? "",
                                                   secretAccessKey: settings?.secretAccessKey ?? "")
            return S3ObjectStore(client: S3Client(location: location, credentials: credentials, metrics: metrics),
                                 publicBase: settings?.publicURL)
        }
    }
}
