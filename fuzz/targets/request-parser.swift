// libFuzzer target: the HTTP/1.1 request parser. Besides "never traps, never hangs", the
// oracle is that the parser's answer does not depend on how TCP split the bytes: the
// input fed whole and fed in pieces (sizes taken from its first byte) must give the same
// requests and bodies, and fail at the same point if they fail.
//
// Which fault a failure names may depend on the split: a request line is judged as soon as
// its line ends, so when a later line of the same head is also at fault (a bare LF, say),
// bytes that arrive together are reported by the later fault and bytes that arrive apart by
// the first (fuzzer finding; RequestParserRobustnessTests has it). Either way the client
// gets a 4xx and a closed connection.
@testable import HTTP

private enum Outcome: Equatable {
    case head(RequestHead)
    case body([UInt8])
    case end
    case failed
}

/// Events with consecutive body pieces joined (their cut points follow the pieces fed).
/// `bodyLimit`: set after each head, as the server does from the route.
private func outcomes<Pieces: Sequence>(of pieces: Pieces, bodyLimit: Int) -> [Outcome]
where Pieces.Element == ArraySlice<UInt8> {
    var parser = RequestParser()
    var result: [Outcome] = []
    var body: [UInt8] = []
    func flushBody() {
        if !body.isEmpty { result.append(.body(body)); body = [] }
    }
    for piece in pieces {
        parser.feed(piece)
        // Each event consumes input or ends a request: a bound well past that catches a
        // parser that loops without progress.
        var drained = false
        for _ in 0...(2 * (piece.count + 8)) {
            do {
                switch try parser.next() {
                case .needMore:
                    parser.releaseMemoryIfDrained()
                    drained = true
                case .head(let head):
                    flushBody()
                    result.append(.head(head))
                    parser.bodyLimit = bodyLimit
                    // What the router does with the target next.
                    if let query = head.query { _ = QueryParameters(parsing: query) }
                    for segment in head.path.split(separator: "/") { _ = PercentDecoding.decode(segment, plusAsSpace: false) }
                    continue
                case .body(let bytes):
                    if bytes.isEmpty { fatalError("the parser handed out an empty body piece") }
                    body += bytes
                    continue
                case .end: flushBody(); result.append(.end); continue
                }
            } catch {
                if !(400..<500).contains(error.status.code) { fatalError("the parser answered \(error.status.code)") }
                flushBody()
                result.append(.failed)
                return result
            }
            break
        }
        if !drained { fatalError("the parser gave more events than \(piece.count) bytes can make: it loops") }
    }
    flushBody()
    return result
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 1 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let pieceSize = Int(data[0] % 17) + 1
    let bodyLimit = Int(data[0]) * 64
    let whole = outcomes(of: [input[...]], bodyLimit: bodyLimit)
    let split = outcomes(of: stride(from: 0, to: input.count, by: pieceSize).map {
        input[$0..<min($0 + pieceSize, input.count)]
    }, bodyLimit: bodyLimit)
    // A request needs at least "X / HTTP/1.0" and a blank line: 16 bytes.
    if whole.count(where: { if case .head = $0 { true } else { false } }) > input.count / 16 + 1 {
        fatalError("the parser produced more requests than the bytes allow")
    }
    if whole != split {
        fatalError("the parser's answer depends on the split (\(pieceSize)-byte pieces):\n\(whole)\nvs\n\(split)")
    }
    return 0
}
