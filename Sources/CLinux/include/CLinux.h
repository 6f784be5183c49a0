#ifndef CLINUX_H
#define CLINUX_H
// The system calls Swift cannot make the same way on Linux and Darwin: Linux- or GNU-only
// calls (epoll, eventfd, accept4, pipe2, posix_spawn's closefrom) and their Darwin
// equivalents behind one name each, plus the constants whose Swift import differs (Glibc's
// module makes some of them enums, Darwin's plain ints). The GNU-only calls are wrapped in
// CLinux.c so this header stays free of _GNU_SOURCE, whose different struct definitions
// would clash with the system modules Swift already has.
#include <spawn.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#ifdef __linux__
#include <sys/epoll.h>
#endif

struct sockaddr;

/// SOCK_STREAM and RLIMIT_NOFILE as plain ints on every platform.
static inline int clinux_sock_stream(void) { return SOCK_STREAM; }
static inline int clinux_rlimit_nofile(void) { return RLIMIT_NOFILE; }

/// The flags for send(2) that keep a vanished peer from raising SIGPIPE: MSG_NOSIGNAL on
/// Linux; none on Darwin, where the sockets made here carry SO_NOSIGPIPE instead.
static inline int clinux_send_flags(void) {
#ifdef MSG_NOSIGNAL
    return MSG_NOSIGNAL;
#else
    return 0;
#endif
}

/// A stream socket, non-blocking and close-on-exec (and SO_NOSIGPIPE on Darwin).
int clinux_socket_nonblocking(int family);

/// A blocking stream socket, close-on-exec (and SO_NOSIGPIPE on Darwin): for clients.
int clinux_socket_blocking(int family);

/// accept, the new socket non-blocking and close-on-exec (accept4 on Linux: one call
/// instead of accept and two fcntl; SO_NOSIGPIPE on Darwin).
int clinux_accept_nonblocking(int fd, struct sockaddr *address, unsigned int *length);

/// pipe with O_NONBLOCK | O_CLOEXEC on both ends.
int clinux_pipe_nonblocking(int fds[2]);

/// pipe with O_CLOEXEC only: blocking ends that no child process inherits.
int clinux_pipe_cloexec(int fds[2]);

/// Sends up to `count` bytes of `file` from `*offset` to `socket` in the kernel, advancing
/// `*offset` by what went out. Returns that count; 0 at the end of the file; -1 with errno
/// (EAGAIN when the socket is full and nothing went).
ssize_t clinux_sendfile(int socket, int file, long long *offset, size_t count);

/// Makes the spawned child close every descriptor from `lowest` up, whether or not it is
/// marked close-on-exec (posix_spawn_file_actions_addclosefrom_np, glibc 2.34; on Darwin
/// the descriptors below `lowest` are kept by name and POSIX_SPAWN_CLOEXEC_DEFAULT, set
/// by clinux_spawnattr_init_clean_signals, closes the rest).
int clinux_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

/// posix_spawnattr_init, plus a clean signal state for the child: nothing blocked and
/// SIGTERM, SIGINT and SIGPIPE at their defaults. A child otherwise inherits the mask of the
/// spawning thread, and Dispatch's threads block nearly every signal, so a server started
/// from one would never see its SIGTERM. Destroy with posix_spawnattr_destroy.
int clinux_spawnattr_init_clean_signals(posix_spawnattr_t *attributes);

/// A copy of this process's environment, for posix_spawn (Darwin has no `environ` for
/// libraries): NULL-terminated, each string and the array malloc'd; free it with
/// clinux_environment_free. Copied under the lock `clinux_setenv_default` takes, so a
/// library setting a variable on another thread (libvips' start) cannot free the array a
/// child is being started with (execve then fails with EFAULT).
char **clinux_environment_copy(void);
void clinux_environment_free(char **environment);

/// setenv(name, value, 0) under the lock above: sets the variable unless it is set.
int clinux_setenv_default(const char *name, const char *value);

#ifdef __linux__
/// eventfd with EFD_NONBLOCK | EFD_CLOEXEC: the epoll loop's wake-up counter.
int clinux_eventfd_nonblocking(void);
#endif
/// Names the calling thread (at most 15 bytes are kept on Linux), and reads its name:
/// pthread_setname_np and pthread_getname_np differ between glibc and Darwin.
int clinux_set_thread_name(const char *name);
int clinux_thread_name(char *buffer, size_t length);
/// glibc's allocator kept from mapping and unmapping a request's buffers (see the server's
/// `AllocatorTuning`): blocks up to `mmap_threshold` bytes come from the heaps, which keep
/// up to `trim_threshold` bytes of free top. Nothing on other C libraries.
void clinux_tune_allocator(int mmap_threshold, int trim_threshold);

#endif
