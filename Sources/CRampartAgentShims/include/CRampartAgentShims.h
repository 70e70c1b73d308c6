#ifndef C_RAMPART_AGENT_SHIMS_H
#define C_RAMPART_AGENT_SHIMS_H
/* System calls the agent needs that Swift's Glibc module does not expose conveniently. */
#include <sys/types.h>

/* Starts `path` with `argv` (NULL-terminated) and the current environment as a detached process:
 * a new session (POSIX_SPAWN_SETSID, so closing the terminal does not send it SIGHUP), standard
 * input from /dev/null, standard output and error appended to `log_path` (created 0600; /dev/null
 * when NULL), and no other inherited file descriptor. Stores the child's pid in `pid`.
 * Returns 0 or an errno value. */
int rampart_agent_spawn_detached(const char *path, char *const argv[], const char *log_path, pid_t *pid);

/* waitpid(pid, WNOHANG): returns 1 and the raw status if the child has exited, 0 if it runs,
 * -1 on error (e.g. not our child). */
int rampart_agent_child_exited(pid_t pid, int *status);

#endif
