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

#endif
