import Foundation
import Locking

/// Standard output, written by one thread of its own. Loggers only append their line to a
/// buffer under a short lock (no system call while holding it, so request threads never
/// queue behind a slow terminal or pipe); the writer wakes at once and writes whatever has
/// gathered, so lines still appear as they happen, whole and in order. When standard output
/// does not keep up (a blocked pipe), the buffer stops at its capacity: further lines are
/// dropped and counted, and a line saying how many follows once output flows again.
public enum StandardOutput {
    private static let pending = ParkingLock(PendingLines(capacity: 4 * 1024 * 1024))
    private static let wake = DispatchSemaphore(value: 0)
    private static let idle = DispatchSemaphore(value: 0)
    /// Starts the writer thread on first use.
    private static let writer: Void = {
        let thread = Thread { StandardOutput.drainForever() }
        thread.name = "log-writer"
        thread.start()
    }()

    static func write(_ line: [UInt8], format: LineLogHandler.Format) {
        _ = writer
        let wasEmpty = pending.withLock { $0.append(line, format: format) }
        if wasEmpty { wake.signal() }
    }

    /// Waits (up to two seconds) until every line logged so far is written: call before exiting.
    public static func flush() {
        _ = writer
        let deadline = DispatchTime.now() + 2
        while pending.withLock({ !$0.isDrained }) && DispatchTime.now() < deadline {
            wake.signal()
            _ = idle.wait(timeout: .now() + .milliseconds(20))
        }
    }

    private static func drainForever() {
        while true {
            wake.wait()
            while true {
                // A moment's pause lets a busy server's lines gather into one write instead
                // of a wake-up and a system call per line; a line still appears within 1 ms.
                usleep(1_000)
                let batch = pending.withLock { $0.take() }
                if batch.isEmpty { break }
                writeAll(batch)
                pending.withLock { $0.finishedWriting() }
            }
            idle.signal()
        }
    }

    private static func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(1, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

/// The lines waiting for standard output, at most `capacity` bytes of them.
struct PendingLines {
    let capacity: Int
    private var bytes: [UInt8] = []
    private var writing = false
    private var dropped = 0
    private var format = LineLogHandler.Format.text

    init(capacity: Int) { self.capacity = capacity }

    /// Queues a line, or drops and counts it when the buffer is full. Returns whether the
    /// writer was idle (and needs waking).
    mutating func append(_ line: [UInt8], format: LineLogHandler.Format) -> Bool {
        self.format = format
        let wasIdle = bytes.isEmpty && !writing
        guard bytes.count + line.count <= capacity else {
            dropped += 1
            return wasIdle
        }
        bytes += line
        return wasIdle
    }

    /// What to write now: the lines, then a word about those dropped, if any were.
    mutating func take() -> [UInt8] {
        var batch = bytes
        bytes = []
        if dropped > 0 {
            batch += LogLine.make(format: format, level: "warning", message: "log lines dropped",
                                  fields: [.number("count", String(dropped)),
                                           LogField("reason", "standard output did not keep up")])
            dropped = 0
        }
        writing = !batch.isEmpty
        return batch
    }

    mutating func finishedWriting() { writing = false }

    var isDrained: Bool { bytes.isEmpty && !writing && dropped == 0 }
}
