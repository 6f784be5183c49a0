#ifdef __linux__
#define _GNU_SOURCE
#include <malloc.h>
#include <sys/eventfd.h>
#include <sys/sendfile.h>
#else
#include <crt_externs.h>
#include <sys/uio.h>
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <unistd.h>
#include "CLinux.h"

#ifndef __linux__
/// Darwin: the flags Linux sets in the call that makes the descriptor. Nothing else runs
/// posix_spawn between the two calls here except other threads of ours, whose children
/// close what they do not name (POSIX_SPAWN_CLOEXEC_DEFAULT).
static int clinux_set_flags(int fd, int nonblocking) {
    if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) return -1;
    if (nonblocking && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) return -1;
    return 0;
}

static int clinux_finish_socket(int fd, int nonblocking) {
    int on = 1;
    if (fd < 0) return fd;
    if (clinux_set_flags(fd, nonblocking) != 0
        || setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, sizeof on) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int clinux_pipe_with(int fds[2], int nonblocking) {
    if (pipe(fds) != 0) return -1;
    if (clinux_set_flags(fds[0], nonblocking) != 0 || clinux_set_flags(fds[1], nonblocking) != 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    return 0;
}
#endif

int clinux_socket_nonblocking(int family) {
#ifdef __linux__
    return socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
#else
    return clinux_finish_socket(socket(family, SOCK_STREAM, 0), 1);
#endif
}

int clinux_socket_blocking(int family) {
#ifdef __linux__
    return socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
#else
    return clinux_finish_socket(socket(family, SOCK_STREAM, 0), 0);
#endif
}

int clinux_accept_nonblocking(int fd, struct sockaddr *address, unsigned int *length) {
#ifdef __linux__
    return accept4(fd, address, (socklen_t *)length, SOCK_NONBLOCK | SOCK_CLOEXEC);
#else
    return clinux_finish_socket(accept(fd, address, (socklen_t *)length), 1);
#endif
}

int clinux_pipe_nonblocking(int fds[2]) {
#ifdef __linux__
    return pipe2(fds, O_NONBLOCK | O_CLOEXEC);
#else
    return clinux_pipe_with(fds, 1);
#endif
}

int clinux_pipe_cloexec(int fds[2]) {
#ifdef __linux__
    return pipe2(fds, O_CLOEXEC);
#else
    return clinux_pipe_with(fds, 0);
#endif
}

ssize_t clinux_sendfile(int socket, int file, long long *offset, size_t count) {
#ifdef __linux__
    off_t position = (off_t)*offset;
    ssize_t sent = sendfile(socket, file, &position, count);
    if (sent > 0) *offset = position;
    return sent;
#else
    // Darwin's sendfile takes the file first, and reports what it sent through `length`,
    // also when it fails with EAGAIN after sending part.
    off_t length = (off_t)count;
    int status = sendfile(file, socket, (off_t)*offset, &length, NULL, 0);
    if (length > 0) {
        *offset += length;
        return (ssize_t)length;
    }
    return status == 0 ? 0 : -1;
#endif
}

int clinux_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
#ifdef __linux__
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
#else
    for (int fd = 0; fd < lowest; fd++) {
        int status = posix_spawn_file_actions_addinherit_np(actions, fd);
        if (status != 0) return status;
    }
    return 0;
#endif
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
    short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
#ifndef __linux__
    flags |= POSIX_SPAWN_CLOEXEC_DEFAULT;
#endif
    if ((status = posix_spawnattr_setsigmask(attributes, &none)) != 0
        || (status = posix_spawnattr_setsigdefault(attributes, &defaults)) != 0
        || (status = posix_spawnattr_setflags(attributes, flags)) != 0) {
        posix_spawnattr_destroy(attributes);
    }
    return status;
}

static pthread_mutex_t environment_lock = PTHREAD_MUTEX_INITIALIZER;

static char **current_environment(void) {
#ifdef __linux__
    extern char **environ;
    return environ;
#else
    return *_NSGetEnviron();
#endif
}

char **clinux_environment_copy(void) {
    pthread_mutex_lock(&environment_lock);
    char **environment = current_environment();
    size_t count = 0;
    while (environment[count] != NULL) count++;
    char **copy = calloc(count + 1, sizeof(char *));
    for (size_t index = 0; copy != NULL && index < count; index++) copy[index] = strdup(environment[index]);
    pthread_mutex_unlock(&environment_lock);
    return copy;
}

void clinux_environment_free(char **environment) {
    if (environment == NULL) return;
    for (size_t index = 0; environment[index] != NULL; index++) free(environment[index]);
    free(environment);
}

int clinux_setenv_default(const char *name, const char *value) {
    pthread_mutex_lock(&environment_lock);
    int status = setenv(name, value, 0);
    pthread_mutex_unlock(&environment_lock);
    return status;
}

#ifdef __linux__
int clinux_eventfd_nonblocking(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}
#endif

int clinux_set_thread_name(const char *name) {
#ifdef __linux__
    char kept[16];
    strncpy(kept, name, sizeof kept - 1);
    kept[sizeof kept - 1] = '\0';
    return pthread_setname_np(pthread_self(), kept);
#else
    return pthread_setname_np(name);
#endif
}

int clinux_thread_name(char *buffer, size_t length) {
    return pthread_getname_np(pthread_self(), buffer, length);
}

void clinux_tune_allocator(int mmap_threshold, int trim_threshold) {
#if defined(__linux__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    mallopt(M_MMAP_THRESHOLD, mmap_threshold);
    mallopt(M_TRIM_THRESHOLD, trim_threshold);
#else
    (void)mmap_threshold;
    (void)trim_threshold;
#endif
}
