#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include "CLinux.h"

int clinux_accept_nonblocking(int fd, struct sockaddr *address, unsigned int *length) {
    return accept4(fd, address, (socklen_t *)length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int clinux_pipe_nonblocking(int fds[2]) {
    return pipe2(fds, O_NONBLOCK | O_CLOEXEC);
}

int clinux_eventfd_nonblocking(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

int clinux_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}

int clinux_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}

int clinux_spawnattr_init_clean_signals(posix_spawnattr_t *attributes) {
    int status = posix_spawnattr_init(attributes);
    if (status != 0) return status;
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGPIPE);
    if ((status = posix_spawnattr_setsigmask(attributes, &none)) != 0
        || (status = posix_spawnattr_setsigdefault(attributes, &defaults)) != 0
        || (status = posix_spawnattr_setflags(attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) != 0) {
        posix_spawnattr_destroy(attributes);
    }
    return status;
}
