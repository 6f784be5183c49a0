#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// How a write tells its own instance's feed that it has just committed a change, so that
/// local subscribers need not wait for the next poll (other instances still find it by
/// polling). A pipe: the feed waits on it beside its database socket. Only a hint: the
/// feed reads what is deliverable either way, so a lost or extra nudge changes nothing.
final class ChangeNudge: Sendable {
    private let readEnd: Int32
    private let writeEnd: Int32
    /// Nudges are wasted when nobody on this instance listens.
    let listening = Atomic<Bool>(false)

    init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        if readEnd >= 0 { close(readEnd) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    /// After a write that recorded a change has committed. Never blocks: a full pipe
    /// already holds a nudge.
    func changed() {
        guard writeEnd >= 0, listening.load(ordering: .relaxed) else { return }
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// What the feed waits on; nil when the pipe could not be made (it then only polls).
    var descriptor: Int32? { readEnd >= 0 ? readEnd : nil }

    /// Empties the pipe: the nudges so far are taken.
    func take() {
        guard readEnd >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }
}
