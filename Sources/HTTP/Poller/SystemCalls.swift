#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The C library's calls under names nothing of ours shadows. Inside a type with a method
// called `read`, `write`, `open` or `listen`, the bare name means the method, and the
// module-qualified `Glibc.read` does not compile on Darwin; at file scope the bare names
// reach the C library on both.

func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    read(fd, buffer, count)
}

func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, bytes, count)
}

func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
    open(path, flags)
}

func systemListen(_ fd: Int32, _ backlog: Int32) -> Int32 {
    listen(fd, backlog)
}

@discardableResult
func systemClose(_ fd: Int32) -> Int32 {
    close(fd)
}

/// The calling thread's errno, for default arguments where a property named `errno` hides it.
var systemErrno: Int32 { errno }
