// libFuzzer target: the multipart/form-data parser, with the same oracle as the request
// parser's: never traps or hangs, and the parts it finds do not depend on how the body
// was split. The boundary is fixed; the corpus uses it.
@testable import HTTP

private enum Outcome: Equatable {
    case head(MultipartPartHead)
    case data([UInt8])
    case partEnd
    case end
    case failed(HTTPError)
    case finished
}

private func outcomes<Pieces: Sequence>(of pieces: Pieces) -> [Outcome] where Pieces.Element == ArraySlice<UInt8> {
    var parser = MultipartParser(boundary: "fuzz-boundary")
    var result: [Outcome] = []
    var content: [UInt8] = []
    func flushContent() {
        if !content.isEmpty { result.append(.data(content)); content = [] }
    }
    for piece in pieces {
        parser.feed(piece)
        var drained = false
        for _ in 0...(2 * (piece.count + 8)) {
            do {
                switch try parser.next() {
                case .needMore: drained = true
                case .partHead(let head): flushContent(); result.append(.head(head)); continue
                case .partData(let bytes):
                    if bytes.isEmpty { fatalError("the parser handed out an empty piece") }
                    content += bytes
                    continue
                case .partEnd: flushContent(); result.append(.partEnd); continue
                case .end: flushContent(); result.append(.end); continue
                }
            } catch {
                flushContent()
                result.append(.failed(error))
                return result
            }
            break
        }
        if !drained { fatalError("the parser gave more events than \(piece.count) bytes can make: it loops") }
        // Whatever it holds back is a delimiter's length or an unfinished part head.
        if parser.bufferedByteCount > 64 * 1024 { fatalError("the parser holds \(parser.bufferedByteCount) bytes") }
    }
    flushContent()
    do {
        try parser.finish()
        result.append(.finished)
    } catch {
        result.append(.failed(error))
    }
    return result
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMultipartParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard size > 1 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let pieceSize = Int(data[0] % 23) + 1
    let whole = outcomes(of: [input[...]])
    let split = outcomes(of: stride(from: 0, to: input.count, by: pieceSize).map {
        input[$0..<min($0 + pieceSize, input.count)]
    })
    if whole != split {
        fatalError("the multipart parser's answer depends on the split (\(pieceSize)-byte pieces):\n\(whole)\nvs\n\(split)")
    }
    return 0
}
