import Images

/// The names of stored images, which only this server makes: 32 random hex digits and the
/// extension of their real format (`3f…a9.jpg`), and beside each its sizes
/// (`3f…a9-w320.jpg`; a GIF's sizes are PNGs). Nothing else in `UPLOAD_DIR` is ever served
/// or removed, so a name from a URL can never reach another file (`..`, slashes).
struct StoredImageName: Sendable, Equatable {
    /// The 32 hex digits.
    let base: String
    let format: ImageFormat

    /// An original's name; nil for anything else (a size's name included: sizes are asked
    /// for with `?width=`).
    init?(_ name: some StringProtocol) {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, Self.isBase(parts[0]),
              let format = ImageFormat.allCases.first(where: { $0.fileExtension == parts[1] && $0 == $0.stored }) else {
            return nil
        }
        self.base = String(parts[0])
        self.format = format
    }

    /// The name behind a URL this server made (`/uploads/<name>`); nil for any other URL.
    init?(url: String?) {
        guard let url, url.hasPrefix(Self.urlPrefix) else { return nil }
        self.init(url.dropFirst(Self.urlPrefix.count))
    }

    private init(base: String, format: ImageFormat) {
        self.base = base
        self.format = format
    }

    /// A new random name for an image written as `format`.
    static func random(_ format: ImageFormat) -> StoredImageName {
        var generator = SystemRandomNumberGenerator()
        let digits = (0..<16).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return (byte < 16 ? "0" : "") + String(byte, radix: 16)
        }.joined()
        return StoredImageName(base: digits, format: format)
    }

    static let urlPrefix = "/uploads/"

    var name: String { "\(base).\(format.fileExtension)" }
    var url: String { Self.urlPrefix + name }

    /// The file of its size `width` wide, in the format sizes are written in.
    func sizeName(width: Int) -> String { "\(base)-w\(width).\(format.still.fileExtension)" }

    /// Every file that belongs to it: itself and each size it may have.
    var allNames: [String] { [name] + ImageResizer.widths.sorted().map(sizeName(width:)) }

    /// A size's name, for `removeAll`: `<base>-w<digits>.<extension>`.
    static func isSizeName(_ name: some StringProtocol) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, ImageFormat.allCases.contains(where: { $0.fileExtension == parts[1] }) else { return false }
        let stem = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard stem.count == 2, isBase(stem[0]), stem[1].hasPrefix("w"), stem[1].count > 1 else { return false }
        return stem[1].dropFirst().allSatisfy(\.isASCII) && stem[1].dropFirst().allSatisfy(\.isNumber)
    }

    /// The format of a file this server stores, by its name: an original's, or a size's
    /// (a still: JPEG, PNG or WebP); nil for any other name. What a copy of the file is
    /// labelled with (`storage copy`).
    static func storedFormat(of name: some StringProtocol) -> ImageFormat? {
        if let original = StoredImageName(name) { return original.format }
        guard isSizeName(name), let fileExtension = name.split(separator: ".").last else { return nil }
        return ImageFormat.allCases.first { $0 == $0.still && $0.fileExtension == fileExtension }
    }

    private static func isBase(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
