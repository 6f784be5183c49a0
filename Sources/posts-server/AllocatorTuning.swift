import CLinux
import Foundation

/// glibc's allocator, set for a server whose every request makes and frees buffers of tens
/// to hundreds of kilobytes (a page of posts: its rows from libpq, its JSON, the answer).
///
/// By default glibc maps such a block fresh and unmaps it on free once its adaptive mmap
/// threshold says so, and gives a heap's free top back to the system past 128 kB: each
/// request then faults its pages in again, and each unmap interrupts the other core to
/// flush its TLB (perf under recent50: page faults, `smp_call_function_many_cond` and
/// `native_write_msr`, 12% of the server's CPU). Blocks up to 4 MB now come from the heaps,
/// and a heap keeps up to 16 MB of free top: memory stays at the peak the load reached and
/// is reused. Measured with glibc's environment variables first, same database, back to
/// back: recent50 2,430-2,543 -> 3,078-3,135 req/s, post_by_id 12,455-13,452 -> 14,610.
/// Variables the operator sets (`MALLOC_MMAP_THRESHOLD_`, `MALLOC_TRIM_THRESHOLD_`) win.
enum AllocatorTuning {
    static func apply() {
        let environment = ProcessInfo.processInfo.environment
        guard environment["MALLOC_MMAP_THRESHOLD_"] == nil, environment["MALLOC_TRIM_THRESHOLD_"] == nil else { return }
        clinux_tune_allocator(4 << 20, 16 << 20)
    }
}
