#ifndef C_RAMPART_AGENT_TEST_SUPPORT_H
#define C_RAMPART_AGENT_TEST_SUPPORT_H
/* Test support only: talks to a Unix socket from a child process running under another uid. */
#include <stddef.h>
#include <sys/types.h>

/* Forks; the child drops to (uid, gid) with setgroups/setgid/setuid, connects to the Unix socket
 * at `socket_path`, sends `request`, shuts down its sending side, reads the reply until EOF (at most `reply_capacity` bytes)
 * and passes it to the parent through a pipe. Only async-signal-safe calls run in the child.
 * Returns the child's exit code: 0 ok, 10 privilege drop failed, 11 socket(), 12 connect()
 * failed (its errno in *child_errno), 13 write failed; -1 if fork/pipe failed.
 * *reply_length gets the number of reply bytes received. */
int rampart_test_exchange_as_uid(uid_t uid, gid_t gid, const char *socket_path,
                                 const unsigned char *request, size_t request_length,
                                 unsigned char *reply, size_t reply_capacity, size_t *reply_length,
                                 int *child_errno);

#endif
