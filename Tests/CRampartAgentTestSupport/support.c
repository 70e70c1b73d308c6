#define _GNU_SOURCE
#include "CRampartAgentTestSupport.h"
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

int rampart_test_exchange_as_uid(uid_t uid, gid_t gid, const char *socket_path,
                                 const unsigned char *request, size_t request_length,
                                 unsigned char *reply, size_t reply_capacity, size_t *reply_length,
                                 int *child_errno) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof(address));
    address.sun_family = AF_UNIX;
    size_t path_length = strlen(socket_path);
    if (path_length >= sizeof(address.sun_path)) return -1;
    memcpy(address.sun_path, socket_path, path_length);
    int data_pipe[2], errno_pipe[2];
    if (pipe2(data_pipe, O_CLOEXEC) != 0) return -1;
    if (pipe2(errno_pipe, O_CLOEXEC) != 0) { close(data_pipe[0]); close(data_pipe[1]); return -1; }
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(data_pipe[0]);
        close(errno_pipe[0]);
        int code = 0;
        int err = 0;
        if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0) { code = 10; err = errno; goto done; }
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) { code = 11; err = errno; goto done; }
        if (connect(fd, (struct sockaddr *)&address, sizeof(address)) != 0) { code = 12; err = errno; goto done; }
        size_t sent = 0;
        while (sent < request_length) {
            ssize_t n = send(fd, request + sent, request_length - sent, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EINTR) continue;
                /* The peer may answer (a refusal) and close before reading the request: read it. */
                if (errno == EPIPE || errno == ECONNRESET) break;
                code = 13; err = errno; goto done;
            }
            sent += (size_t)n;
        }
        shutdown(fd, SHUT_WR);
        unsigned char buffer[4096];
        for (;;) {
            ssize_t n = read(fd, buffer, sizeof(buffer));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            ssize_t off = 0;
            while (off < n) {
                ssize_t w = write(data_pipe[1], buffer + off, (size_t)(n - off));
                if (w <= 0) break;
                off += w;
            }
        }
    done:
        (void)!write(errno_pipe[1], &err, sizeof(err));
        _exit(code);
    }
    close(data_pipe[1]);
    close(errno_pipe[1]);
    size_t total = 0;
    for (;;) {
        unsigned char sink[4096];
        unsigned char *target = total < reply_capacity ? reply + total : sink;
        size_t room = total < reply_capacity ? reply_capacity - total : sizeof(sink);
        ssize_t n = read(data_pipe[0], target, room);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        if (target != sink) total += (size_t)n;
    }
    close(data_pipe[0]);
    int err = 0;
    if (read(errno_pipe[0], &err, sizeof(err)) != (ssize_t)sizeof(err)) err = 0;
    close(errno_pipe[0]);
    if (child_errno) *child_errno = err;
    if (reply_length) *reply_length = total;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) { if (errno != EINTR) return -1; }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
