#define _GNU_SOURCE
#include "CRampartShims.h"
#include <sys/types.h>
#include <sys/socket.h>
#include <unistd.h>
#include <pthread.h>
#if defined(__linux__)
#include <sys/prctl.h>
#include <sys/xattr.h>
#endif
#if defined(__APPLE__)
#include <sys/xattr.h>
#endif

int rampart_set_nondumpable(void) {
#if defined(__linux__)
    return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
#else
    return -1;
#endif
}

int rampart_set_xattr(const char *path, const char *name, const char *value, size_t size) {
#if defined(__linux__)
    return setxattr(path, name, value, size, 0);
#elif defined(__APPLE__)
    return setxattr(path, name, value, size, 0, 0);
#else
    return -1;
#endif
}

long long rampart_peer_uid(int fd) {
#if defined(__linux__)
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return -1;
    return (long long)cred.uid;
#elif defined(__APPLE__)
    uid_t uid; gid_t gid;
    if (getpeereid(fd, &uid, &gid) != 0) return -1;
    return (long long)uid;
#else
    return -1;
#endif
}

int rampart_set_current_thread_name(const char *name) {
#if defined(__linux__)
    return pthread_setname_np(pthread_self(), name);
#elif defined(__APPLE__)
    return pthread_setname_np(name);
#else
    return -1;
#endif
}

int rampart_current_thread_name(char *buffer, size_t size) {
#if defined(__linux__) || defined(__APPLE__)
    return pthread_getname_np(pthread_self(), buffer, size);
#else
    return -1;
#endif
}
