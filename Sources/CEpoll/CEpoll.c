#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#include "CEpoll.h"

int cepoll_accept_nonblocking(int fd, struct sockaddr *address, unsigned int *length) {
    return accept4(fd, address, (socklen_t *)length, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

int cepoll_pipe_nonblocking(int fds[2]) {
    return pipe2(fds, O_NONBLOCK | O_CLOEXEC);
}
