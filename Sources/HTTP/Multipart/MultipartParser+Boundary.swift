/// The boundary parameter: where it comes from and what RFC 2046 §5.1.1 lets it be.
extension MultipartParser {
    /// The boundary of a `multipart/form-data` Content-Type value, quoted or not; nil when
    /// the media type is another, or the boundary is missing, repeated or not a valid one.
    public static func boundary(fromContentType contentType: String) -> String? {
        guard let parsed = HeaderParameters(parsing: contentType),
              parsed.value.lowercased() == "multipart/form-data",
              let boundary = parsed["boundary"], isValidBoundary(boundary)
        else { return nil }
        return boundary
    }

    /// 1 to 70 bchars, not ending in a space: longer would let a client make us hold back
    /// more of every part, and other bytes are what a sender may not use.
    static func isValidBoundary(_ boundary: String) -> Bool {
        let bytes = boundary.utf8
        guard (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " ") else { return false }
        return bytes.allSatisfy(boundaryBytes.contains)
    }

    /// RFC 2046 bchars.
    private static let boundaryBytes = ByteSet(alphanumericsAnd: "'()+_,-./:=? ")
}
