import Foundation

/// A PNG's chunks as their headers declare them, checked before libpng sees the file.
/// libpng allocates a text chunk's declared length before reading it: a 783-byte upload
/// declaring a 1.7 GB `tEXt` chunk made the server allocate 1.7 GB (found by the
/// `image-upload` fuzz target). No chunk can be longer than what is left of the file, so
/// one that claims to be is refused before any decoding.
enum PNGChunks {
    /// Whether every chunk from the signature up to `IEND` (or the end of the bytes) fits
    /// in the bytes that follow its header.
    static func fit(_ bytes: some RandomAccessCollection<UInt8>) -> Bool {
        var offset = 8  // the signature
        while offset + 8 <= bytes.count {
            let length = (0..<4).reduce(0) { $0 << 8 | Int(bytes[bytes.index(bytes.startIndex, offsetBy: offset + $1)]) }
            // Length, type, data, CRC.
            guard length <= bytes.count - offset - 12 else { return false }
            let type = (4..<8).map { bytes[bytes.index(bytes.startIndex, offsetBy: offset + $0)] }
            if type == Array("IEND".utf8) { return true }
            offset += 12 + length
        }
        return true
    }

    /// The same for a file, mapped rather than read.
    static func fit(file path: String) -> Bool {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else { return false }
        return fit(data)
    }
}
