import Testing
@testable import HTTP

/// One way of cutting a body into the pieces a socket might deliver.
enum Split: CustomStringConvertible, Sendable {
    case whole
    case pieces(of: Int)
    case twoPieces(at: Int)
    /// Sizes from 1 to 100 drawn from a SplitMix64 with this seed.
    case random(seed: UInt64)

    /// Every split each test body is fed in.
    static let all: [Split] = [.whole, .pieces(of: 1), .pieces(of: 2), .pieces(of: 3), .pieces(of: 7)]
        + (1...6).map { .random(seed: 0x6D75_6C74_6900 + $0) }

    var description: String {
        switch self {
        case .whole: "whole"
        case .pieces(let size): "pieces of \(size) bytes"
        case .twoPieces(let cut): "two pieces cut at \(cut)"
        case .random(let seed): "random pieces, SplitMix64 seed 0x\(String(seed, radix: 16))"
        }
    }

    func cut(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        var generator = SplitMix64(state: 0)
        var size: () -> Int = { bytes.count }
        switch self {
        case .whole: break
        case .pieces(let fixed): size = { fixed }
        case .twoPieces(let cut): return [bytes[..<min(cut, bytes.count)], bytes[min(cut, bytes.count)...]]
        case .random(let seed):
            generator.state = seed
            size = { Int.random(in: 1...100, using: &generator) }
        }
        var pieces: [ArraySlice<UInt8>] = []
        var offset = 0
        repeat {
            let end = min(offset + max(size(), 1), bytes.count)
            pieces.append(bytes[offset..<end])
            offset = end
        } while offset < bytes.count
        return pieces
    }
}

/// A part as a consumer would collect it.
struct CollectedPart: Equatable, CustomStringConvertible {
    var head: MultipartPartHead
    var content: [UInt8]

    var text: String { String(decoding: content, as: UTF8.self) }
    var description: String { "\(head.name): \(content.count) bytes" }
}

/// Every event up to `.needMore`; a parser that never asks for more is reported, not waited for.
func drain(
    _ parser: inout MultipartParser, context: String = "", sourceLocation: SourceLocation = #_sourceLocation
) throws(HTTPError) -> [MultipartParser.Event] {
    var events: [MultipartParser.Event] = []
    while true {
        let event = try parser.next()
        if event == .needMore { return events }
        events.append(event)
        if events.count > 100_000 {
            Issue.record("the parser is looping: \(events.suffix(3)) \(context)", sourceLocation: sourceLocation)
            return events
        }
    }
}

/// Feeds `body` in the split's pieces and collects the parts, checking that the events come
/// in the order a consumer relies on. Throws what `next()` or `finish()` throws.
func collectParts(
    _ body: [UInt8], boundary: String = "boundary", split: Split = .whole,
    limits: MultipartParser.Limits = MultipartParser.Limits()
) throws(HTTPError) -> [CollectedPart] {
    var parser = MultipartParser(boundary: boundary, limits: limits)
    var parts: [CollectedPart] = []
    var inPart = false
    var ended = false
    for piece in split.cut(body) {
        parser.feed(piece)
        for event in try drain(&parser, context: "(\(split))") {
            let inOrder: Bool
            switch event {
            case .needMore, .end:
                inOrder = !inPart && !ended
                ended = true
            case .partHead(let head):
                inOrder = !inPart && !ended
                inPart = true
                parts.append(CollectedPart(head: head, content: []))
            case .partData(let data):
                inOrder = inPart && !data.isEmpty
                if let last = parts.indices.last { parts[last].content += data }
            case .partEnd:
                inOrder = inPart
                inPart = false
            }
            #expect(inOrder, "\(event) out of order (\(split))")
        }
    }
    try parser.finish()
    #expect(ended, "finish() accepted a body without .end (\(split))")
    return parts
}

/// The parts of `body`, which must be the same in every split.
func expectParts(
    _ body: [UInt8], boundary: String = "boundary", splits: [Split] = Split.all,
    limits: MultipartParser.Limits = MultipartParser.Limits(), sourceLocation: SourceLocation = #_sourceLocation
) -> [CollectedPart] {
    var first: [CollectedPart]?
    for split in splits {
        do {
            let parts = try collectParts(body, boundary: boundary, split: split, limits: limits)
            if let first, first != parts {
                Issue.record("\(split): \(parts) ≠ \(first)", sourceLocation: sourceLocation)
            }
            first = first ?? parts
        } catch {
            Issue.record("\(split): \(error.status.code) \(error.message)", sourceLocation: sourceLocation)
        }
    }
    return first ?? []
}

/// The error `body` gets, which must be the same in every split; nil if it parses.
func expectFailure(
    _ body: [UInt8], boundary: String = "boundary", splits: [Split] = Split.all,
    limits: MultipartParser.Limits = MultipartParser.Limits(), sourceLocation: SourceLocation = #_sourceLocation
) -> HTTPError? {
    var errors: [HTTPError?] = []
    for split in splits {
        do {
            _ = try collectParts(body, boundary: boundary, split: split, limits: limits)
            errors.append(nil)
        } catch {
            errors.append(error)
        }
        if errors.last != errors.first {
            Issue.record("\(split): \(String(describing: errors.last)) ≠ \(splits[0]): \(String(describing: errors.first))",
                         sourceLocation: sourceLocation)
        }
    }
    return errors.first ?? nil
}

/// A text field's part: its head lines, then its content.
func field(_ name: String, _ value: String) -> (head: String, content: [UInt8]) {
    ("Content-Disposition: form-data; name=\"\(name)\"\r\n", Array(value.utf8))
}

/// A body of these parts, each head given as its header lines with their CRLFs.
func multipartBody(
    _ parts: [(head: String, content: [UInt8])], boundary: String = "boundary",
    preamble: String? = nil, epilogue: String = ""
) -> [UInt8] {
    var body = Array((preamble.map { $0 + "\r\n" } ?? "").utf8)
    for part in parts {
        body += Array("--\(boundary)\r\n\(part.head)\r\n".utf8) + part.content + Array("\r\n".utf8)
    }
    return body + Array("--\(boundary)--\(epilogue)".utf8)
}
