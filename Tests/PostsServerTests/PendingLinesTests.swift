import Testing
@testable import PostsServer

/// The log's buffer when standard output stops taking lines: bounded, and honest about it.
@Suite struct PendingLinesTests {
    private let line = Array("2026-11-23T10:00:00.000Z info request status=200\n".utf8)

    @Test func linesPastTheCapacity_areDroppedAndCounted() {
        var pending = PendingLines(capacity: line.count * 3)
        let woke = pending.append(line, format: .text)
        #expect(woke)
        for _ in 0..<9 { _ = pending.append(line, format: .text) }
        let batch = String(decoding: pending.take(), as: UTF8.self)
        #expect(batch.components(separatedBy: "status=200").count - 1 == 3)
        #expect(batch.contains("warning log lines dropped count=7"))
        pending.finishedWriting()
        #expect(pending.isDrained)
    }

    @Test func theDropNotice_followsTheLogFormat() {
        var pending = PendingLines(capacity: 0)
        _ = pending.append(line, format: .json)
        let notice = String(decoding: pending.take(), as: UTF8.self)
        #expect(notice.hasPrefix("{") && notice.contains(#""count":1,"#))
    }

    @Test func afterADrain_linesAreTakenAgain() {
        var pending = PendingLines(capacity: line.count)
        _ = pending.append(line, format: .text)
        _ = pending.take()
        pending.finishedWriting()
        let woke = pending.append(line, format: .text)
        #expect(woke)
        let batch = pending.take()
        #expect(batch == line)
    }
}
