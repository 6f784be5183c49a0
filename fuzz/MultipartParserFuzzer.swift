// libFuzzer entry point for the multipart/form-data parser. Built by fuzz/run.sh from the
// parser's source files, like the request parser's harness.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMultipartParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let control = bytes.first else { return 0 }
    var parser = MultipartParser(boundary: "fuzz-boundary")
    // The first byte picks how the rest is split, so the fuzzer explores every split too.
    let piece = max(1, Int(control % 17))
    var offset = 1
    var events = 0
    feeding: while offset < bytes.count {
        let end = min(bytes.count, offset + piece)
        parser.feed(bytes[offset..<end])
        offset = end
        while true {
            let event: MultipartParser.Event
            do {
                event = try parser.next()
            } catch {
                return 0
            }
            switch event {
            case .needMore:
                continue feeding
            case .partData(let piece):
                precondition(!piece.isEmpty, "the parser handed out an empty piece")
            case .partHead, .partEnd, .end:
                events += 1
                precondition(events <= bytes.count + 1, "the parser produced more events than bytes allow")
            }
            // Whatever it holds back is a delimiter's length or an unfinished part head.
            precondition(parser.bufferedByteCount <= 64 * 1024, "the parser holds \(parser.bufferedByteCount) bytes")
        }
    }
    _ = try? parser.finish()
    return 0
}
