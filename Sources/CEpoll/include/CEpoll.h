#ifndef CEPOLL_H
#define CEPOLL_H
// epoll, accept4 and pipe2 are Linux-specific and outside Glibc's Swift module map. The
// GNU-only calls are wrapped in CEpoll.c so this header stays free of _GNU_SOURCE, whose
// different struct definitions would clash with the system modules Swift already has.
#include <sys/epoll.h>

struct sockaddr;

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC: one call instead of accept + two fcntl.
int cepoll_accept_nonblocking(int fd, struct sockaddr *address, unsigned int *length);

/// pipe2 with O_NONBLOCK | O_CLOEXEC.
int cepoll_pipe_nonblocking(int fds[2]);
#endif
