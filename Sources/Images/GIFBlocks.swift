import Foundation

/// A GIF's blocks as their headers declare them, checked before libvips sees the file.
/// libvips' GIF decoder (libnsgif) takes a file cut short, as a flaky phone connection
/// leaves it, for a shorter animation: the frames after the cut are silently dropped and
/// the cut one is shown part grey. A cut almost always falls inside a block (image data
/// comes in sub-blocks of at most 255 bytes), so a file whose last block does not end
/// within its bytes is refused. One that ends between blocks without the trailer is let
/// through, as browsers show it.
enum GIFBlocks {
    /// Whether every block from the logical screen descriptor on ends within the bytes.
    static func complete(_ bytes: some RandomAccessCollection<UInt8>) -> Bool {
        func byte(_ offset: Int) -> Int { Int(bytes[bytes.index(bytes.startIndex, offsetBy: offset)]) }
        /// A colour table's length from a packed field: 3 × 2^(size + 1) bytes, if present.
        func colourTable(_ packed: Int) -> Int { packed & 0x80 == 0 ? 0 : 3 << ((packed & 0x07) + 1) }
        /// The offset after a run of data sub-blocks and their 0 terminator; nil if cut.
        func afterSubBlocks(_ start: Int) -> Int? {
            var offset = start
            while offset < bytes.count {
                let size = byte(offset)
                offset += 1 + size
                if size == 0 { return offset }
            }
            return nil
        }
        // Header (6) and logical screen descriptor (7), then the global colour table.
        guard bytes.count >= 13 else { return false }
        var offset = 13 + colourTable(byte(10))
        while true {
            if offset == bytes.count { return true }
            if offset > bytes.count { return false }
            switch byte(offset) {
            case 0x3B:  // the trailer
                return true
            case 0x21:  // an extension: its label, then sub-blocks
                guard let next = afterSubBlocks(offset + 2) else { return false }
                offset = next
            case 0x2C:  // an image: its descriptor (10), colour table, LZW code size, sub-blocks
                guard offset + 10 <= bytes.count else { return false }
                guard let next = afterSubBlocks(offset + 10 + colourTable(byte(offset + 9)) + 1) else { return false }
                offset = next
            default:  // not a block: where decoders stop reading
                return true
            }
        }
    }

    /// The same for a file, mapped rather than read.
    static func complete(file path: String) -> Bool {
        guard let data = try? Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped) else { return false }
        return complete(data)
    }
}
