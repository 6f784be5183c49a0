import CLinux

/// Names the calling thread for `top -H`, gdb and perf. Foundation's `Thread.name` on
/// Linux drops a name set before `start()`, and even set from inside the thread it did not
/// always reach the kernel's record (a worker was seen under its creator's name): the
/// name goes to pthreads directly, from the thread itself.
public enum ThreadName {
    public static func set(_ name: String) {
        _ = clinux_set_thread_name(name)
    }

    /// The calling thread's name as the kernel has it.
    public static var current: String {
        var buffer = [CChar](repeating: 0, count: 64)
        guard clinux_thread_name(&buffer, buffer.count) == 0 else { return "" }
        return String(cString: buffer)
    }
}
