#ifndef C_RAMPART_SHIMS_H
#define C_RAMPART_SHIMS_H
/* Small wrappers for system calls that the Swift Glibc module does not export. */
#include <stddef.h>

/* Marks the process non-dumpable (Linux PR_SET_DUMPABLE = 0). Returns 0 on success, -1 elsewhere. */
int rampart_set_nondumpable(void);
/* Sets an extended attribute on a path. Returns 0 on success, -1 on failure or where unsupported. */
int rampart_set_xattr(const char *path, const char *name, const char *value, size_t size);
/* Gets the uid of the peer of a connected Unix socket (SO_PEERCRED / getpeereid). -1 on failure. */
long long rampart_peer_uid(int fd);
/* Names the calling thread (pthread_setname_np; Linux takes at most 15 bytes). 0 on success,
   an errno value on failure, -1 where unsupported. */
int rampart_set_current_thread_name(const char *name);
/* Copies the calling thread's name into buffer (NUL-terminated). 0 on success. */
int rampart_current_thread_name(char *buffer, size_t size);

#endif
