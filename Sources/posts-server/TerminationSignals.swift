import CLinux
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The pipe the signal handler reports to. Set once, before the handler is installed, and
/// only read after that.
nonisolated(unsafe) private var signalPipeReadEnd: Int32 = -1
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1
/// `haveArrived()`'s answer once it read a termination from the pipe (its one caller's thread only).
nonisolated(unsafe) private var terminationSeen = false

/// Async-signal-safe: write(2) and signal(2) only, errno kept for the interrupted thread.
/// The first SIGTERM or SIGINT asks for a graceful stop; the default action is restored so
/// that a second one (Ctrl-C again while a stop or a slow start drags on) ends the process
/// at once. SIGHUP keeps its handler: every one asks for a reload, and none may stop us
/// (its default action would).
private let reportSignal: @convention(c) (Int32) -> Void = { number in
    let interruptedErrno = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(signalPipeWriteEnd, &byte, 1)
    if number != SIGHUP { _ = signal(number, SIG_DFL) }
    errno = interruptedErrno
}

/// SIGTERM and SIGINT, caught from the start of a command and waited for once it serves;
/// SIGHUP, which reloads what can be reloaded (the blocked words) while waiting.
///
/// A plain handler writing to a pipe made up front, rather than a Dispatch signal source:
/// Dispatch registers its source lazily on another thread and needs a new descriptor for
/// it, so a server started under a low descriptor limit and flooded with connections before
/// that happened never saw its SIGTERM (seen in a test run). The pipe needs nothing when the
/// signal comes, serves whichever thread the kernel picks, and keeps a signal that arrives
/// before `wait()` instead of dying of it.
enum TerminationSignals {
    struct InstallFailure: Error, CustomStringConvertible {
        let description: String
    }

    private static let handled = [SIGTERM, SIGINT, SIGHUP]

    /// Call before anything that takes time, so an early Ctrl-C still shuts down cleanly.
    static func install() throws {
        guard signalPipeWriteEnd < 0 else { return }
        var fds: [Int32] = [-1, -1]
        guard clinux_pipe_cloexec(&fds) == 0 else {
            throw InstallFailure(description: "cannot create the signal pipe (errno \(errno))")
        }
        signalPipeReadEnd = fds[0]
        signalPipeWriteEnd = fds[1]
        // Whoever started us may have left them blocked (a child inherits the mask of the
        // thread that spawned it); threads started from here on inherit ours.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        for signalNumber in handled { sigaddset(&unblocked, signalNumber) }
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        for signalNumber in handled {
            var action = sigaction()
            #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = reportSignal
            #else
            action.__sigaction_u.__sa_handler = reportSignal
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            guard sigaction(signalNumber, &action, nil) == 0 else {
                throw InstallFailure(description: "cannot handle signal \(signalNumber) (errno \(errno))")
            }
        }
    }

    /// Whether SIGTERM or SIGINT has arrived, without waiting (SIGHUPs are passed over):
    /// for a command that stops between pieces of work. Stays true once it was.
    static func haveArrived() -> Bool {
        guard !terminationSeen else { return true }
        var descriptor = pollfd(fd: signalPipeReadEnd, events: Int16(POLLIN), revents: 0)
        while poll(&descriptor, 1, 0) > 0 {
            var byte: UInt8 = 0
            guard read(signalPipeReadEnd, &byte, 1) == 1 else { return false }
            if Int32(byte) != SIGHUP {
                terminationSeen = true
                return true
            }
        }
        return false
    }

    /// Blocks until SIGTERM or SIGINT has arrived (possibly already, before this call),
    /// calling `onHangUp` on this thread for each SIGHUP meanwhile (one that came during
    /// start-up too: the reload then reads what is already loaded, which is harmless).
    static func wait(onHangUp: () -> Void = {}) {
        while true {
            var byte: UInt8 = 0
            let count = read(signalPipeReadEnd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            guard count == 1, Int32(byte) == SIGHUP else { return }
            onHangUp()
        }
    }
}
