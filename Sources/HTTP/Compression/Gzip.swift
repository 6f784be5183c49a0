import CZlib

/// gzip (RFC 1952) by zlib's deflate, in one call from the answer's bytes into one buffer
/// sized by `deflateBound`: no second copy of the answer and no growing buffer.
public enum Gzip {
    /// Level 1 (Z_BEST_SPEED): answers are compressed on the worker that made them, per
    /// request, so the worker's time is what costs; JSON's repeated keys and values already
    /// shrink most of the way at level 1, and higher levels buy a few percent for several
    /// times the CPU.
    public static let level: Int32 = 1

    /// The gzip member of `bytes`; nil only if zlib fails (out of memory), when the caller
    /// sends the answer uncompressed.
    public static func compress(_ bytes: [UInt8], level: Int32 = level) -> [UInt8]? {
        var stream = z_stream()
        guard czlib_deflate_init_gzip(&stream, level) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        // deflateBound is exact for one Z_FINISH call: the output always fits.
        let bound = Int(deflateBound(&stream, uLong(bytes.count)))
        var failed = false
        let output = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            bytes.withUnsafeBufferPointer { input in
                // zlib's next_in is not const, but deflate never writes through it.
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.avail_in = uInt(input.count)
                stream.next_out = buffer.baseAddress
                stream.avail_out = uInt(buffer.count)
                failed = deflate(&stream, Z_FINISH) != Z_STREAM_END
                count = failed ? 0 : Int(stream.total_out)
            }
        }
        return failed ? nil : output
    }
}
