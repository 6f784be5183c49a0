import CZlib

/// zlib's inflate with the gzip wrapper: what a client does with `Content-Encoding: gzip`.
/// nil unless `bytes` is exactly one whole gzip member (of at most 8 MiB inflated).
public func gunzip(_ bytes: [UInt8]) -> [UInt8]? {
    var stream = z_stream()
    guard czlib_inflate_init_gzip(&stream) == Z_OK else { return nil }
    defer { inflateEnd(&stream) }
    var input = bytes
    var output = [UInt8](repeating: 0, count: 8 << 20)
    let result = input.withUnsafeMutableBufferPointer { inBuffer in
        output.withUnsafeMutableBufferPointer { outBuffer in
            stream.next_in = inBuffer.baseAddress
            stream.avail_in = uInt(inBuffer.count)
            stream.next_out = outBuffer.baseAddress
            stream.avail_out = uInt(outBuffer.count)
            return inflate(&stream, Z_FINISH)
        }
    }
    guard result == Z_STREAM_END, stream.avail_in == 0 else { return nil }
    return Array(output.prefix(Int(stream.total_out)))
}
