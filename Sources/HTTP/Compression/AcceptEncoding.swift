/// What a request's `Accept-Encoding` allows (RFC 9110 §12.5.3), reduced to the one
/// question the server asks: may this answer be gzip?
public enum AcceptEncoding {
    /// True when gzip is acceptable: named (or `x-gzip`) with a q-value above 0, or not
    /// named while `*` is, with a q-value above 0. `gzip;q=0` forbids it even beside `*`.
    /// Without the field the answer is identity: a client that says nothing may be one
    /// that cannot inflate (RFC 9110 allows any coding then, but nothing is gained by
    /// guessing).
    public static func allowsGzip(_ headers: HTTPHeaders) -> Bool {
        var gzip: Double?
        var any: Double?
        for element in headers.tokens(of: "Accept-Encoding") {
            let parts = element.split(separator: ";", omittingEmptySubsequences: false)
            let coding = parts[0].trimmingHTTPWhitespace()
            guard let quality = quality(parts.dropFirst()) else { continue }
            switch coding {
            case "gzip", "x-gzip": gzip = max(gzip ?? 0, quality)
            case "*": any = max(any ?? 0, quality)
            default: break
            }
        }
        return (gzip ?? any ?? 0) > 0
    }

    /// The element's q-value, 1 when it has none; nil when malformed (the element is then
    /// ignored rather than guessed at).
    static func quality(_ parameters: ArraySlice<Substring>) -> Double? {
        var quality = 1.0
        for parameter in parameters {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingHTTPWhitespace() == "q" else { continue }
            // tokens(of:) lowercased the field, so "Q=0" arrives as "q=0".
            guard let value = Double(pair[1].trimmingHTTPWhitespace()), (0...1).contains(value) else { return nil }
            quality = value
        }
        return quality
    }
}
