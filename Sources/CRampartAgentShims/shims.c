#define _GNU_SOURCE
#include "CRampartAgentShims.h"
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int rampart_agent_spawn_detached(const char *path, char *const argv[], const char *log_path, pid_t *pid) {
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t actions;
    int rc = posix_spawnattr_init(&attr);
    if (rc != 0) return rc;
    rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) { posix_spawnattr_destroy(&attr); return rc; }
    short flags = 0;
#if defined(POSIX_SPAWN_SETSID)
    flags |= POSIX_SPAWN_SETSID;
#endif
    if (rc == 0) rc = posix_spawnattr_setflags(&attr, flags);
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    const char *out = log_path ? log_path : "/dev/null";
    if (rc == 0) rc = posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (rc == 0) rc = posix_spawn_file_actions_adddup2(&actions, 1, 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
    if (rc == 0) rc = posix_spawn(pid, path, &actions, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return rc;
}

int rampart_agent_child_exited(pid_t pid, int *status) {
    int raw = 0;
    pid_t got = waitpid(pid, &raw, WNOHANG);
    if (got == 0) return 0;
    if (got < 0) return -1;
    if (status) *status = raw;
    return 1;
}
