// libFuzzer entry point for the HTTP request parser (and the query/percent decoding the
// router applies to what it yields). Built by fuzz/run.sh straight from the parser's
// source files: SwiftPM cannot link a libFuzzer executable target.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let control = bytes.first else { return 0 }
    var parser = RequestParser()
    // The first byte picks how the rest is split, so the fuzzer explores every split too.
    let piece = max(1, Int(control % 17))
    var offset = 1
    var events = 0
    feeding: while offset < bytes.count {
        let end = min(bytes.count, offset + piece)
        parser.feed(bytes[offset..<end])
        offset = end
        while true {
            let event: RequestParser.Event
            do {
                event = try parser.next()
            } catch {
                break feeding
            }
            switch event {
            case .needMore:
                continue feeding
            case .head(let head):
                events += 1
                // A request needs at least "X / HTTP/1.0" and a blank line: 16 bytes.
                precondition(events <= bytes.count / 16 + 1, "the parser produced more requests than bytes allow")
                parser.bodyLimit = Int(control) * 64
                _ = head.path
                if let query = head.query { _ = QueryParameters(parsing: query) }
                for segment in head.path.split(separator: "/") { _ = PercentDecoding.decode(segment, plusAsSpace: false) }
            case .body(let piece):
                precondition(!piece.isEmpty, "the parser handed out an empty body piece")
            case .end:
                break
            }
        }
    }
    return 0
}
