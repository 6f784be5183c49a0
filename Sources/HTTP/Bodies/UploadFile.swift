import Locking
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One upload file's descriptor and the chunks waiting to be written to it. One writer job
/// at a time drains the chunks, in order; the descriptor is closed after the last of them,
/// before the body's backlog reports them written, so a body whose backlog is empty has
/// every finished file closed.
final class UploadFile: Sendable {
    private struct State: Sendable {
        var descriptor: Int32
        var chunks: [[UInt8]] = []
        /// A writer job is draining the chunks.
        var writing = false
        var closeWhenWritten = false
        var failed = false
    }

    private let state: ParkingLock<State>
    private let writes: UploadWrites

    init(descriptor: Int32, writes: UploadWrites) {
        state = ParkingLock(State(descriptor: descriptor))
        self.writes = writes
    }

    /// Queues the bytes; a writer job starts if none is draining this file.
    func append(_ bytes: [UInt8]) {
        writes.queued(bytes.count)
        let starts = state.withLock { state -> Bool in
            state.chunks.append(bytes)
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        if starts { UploadWrites.writers.submit { [self] _ in drain() } }
    }

    /// Closes the descriptor once every queued chunk is written: now, if none is queued.
    func close() {
        let descriptor = state.withLock { state -> Int32 in
            state.closeWhenWritten = true
            return state.writing ? -1 : Self.take(&state)
        }
        if descriptor >= 0 && systemClose(descriptor) != 0 { writes.done(0, failed: true) }
    }

    /// The file will not be kept: what is still queued is dropped, and the descriptor
    /// closes as soon as no job uses it.
    func abandon() {
        let (dropped, descriptor) = state.withLock { state -> (Int, Int32) in
            let dropped = state.chunks.reduce(0) { $0 + $1.count }
            state.chunks = []
            state.closeWhenWritten = true
            return (dropped, state.writing ? -1 : Self.take(&state))
        }
        if descriptor >= 0 { systemClose(descriptor) }
        if dropped > 0 { writes.done(dropped, failed: false) }
    }

    private func drain() {
        while true {
            let (chunks, descriptor, failedBefore) = state.withLock { state in
                let chunks = state.chunks
                state.chunks = []
                return (chunks, state.descriptor, state.failed)
            }
            var failed = failedBefore
            for chunk in chunks where !failed { failed = !Self.write(chunk, to: descriptor) }
            let written = chunks.reduce(0) { $0 + $1.count }
            // Looks for more before it reports: the last report comes after the close.
            let closing = state.withLock { state -> Int32? in
                state.failed = failed
                guard state.chunks.isEmpty else { return nil }
                state.writing = false
                return state.closeWhenWritten ? Self.take(&state) : -1
            }
            guard let closing else {
                writes.done(written, failed: failed)
                continue
            }
            if closing >= 0 && systemClose(closing) != 0 { failed = true }
            writes.done(written, failed: failed)
            return
        }
    }

    /// The descriptor, now no longer the file's (so nobody closes it twice).
    private static func take(_ state: inout State) -> Int32 {
        let descriptor = state.descriptor
        state.descriptor = -1
        return descriptor
    }

    private static func write(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
        guard descriptor >= 0 else { return false }
        return bytes.withUnsafeBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return true }
            var offset = 0
            while offset < buffer.count {
                let written = systemWrite(descriptor, base + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
    }
}
