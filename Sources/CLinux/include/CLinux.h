#ifndef CLINUX_H
#define CLINUX_H
// epoll, eventfd, accept4, pipe2 and posix_spawn's closefrom are Linux- or GNU-specific and outside
// Glibc's Swift module map. The GNU-only calls are wrapped in CLinux.c so this header stays
// free of _GNU_SOURCE, whose different struct definitions would clash with the system
// modules Swift already has.
#include <spawn.h>
#include <sys/epoll.h>

struct sockaddr;

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC: one call instead of accept + two fcntl.
int clinux_accept_nonblocking(int fd, struct sockaddr *address, unsigned int *length);

/// pipe2 with O_NONBLOCK | O_CLOEXEC.
int clinux_pipe_nonblocking(int fds[2]);

/// eventfd with EFD_NONBLOCK | EFD_CLOEXEC: the event loop's wake-up counter.
int clinux_eventfd_nonblocking(void);

/// pipe2 with O_CLOEXEC only: blocking ends that no child process inherits.
int clinux_pipe_cloexec(int fds[2]);

/// Makes the spawned child close every descriptor from `lowest` up, whether or not it is
/// marked close-on-exec (posix_spawn_file_actions_addclosefrom_np, glibc 2.34).
int clinux_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest);

/// posix_spawnattr_init, plus a clean signal state for the child: nothing blocked and
/// SIGTERM, SIGINT and SIGPIPE at their defaults. A child otherwise inherits the mask of the
/// spawning thread, and Dispatch's threads block nearly every signal, so a server started
/// from one would never see its SIGTERM. Destroy with posix_spawnattr_destroy.
int clinux_spawnattr_init_clean_signals(posix_spawnattr_t *attributes);
#endif
