#ifndef C_LIB_SECRET_SHIM_H
#define C_LIB_SECRET_SHIM_H
/* libsecret (the Secret Service client used by GNOME and KDE) for the Keychain module.
 * Build requirement: the libsecret-1 development files, found through pkg-config.
 * Debian/Ubuntu: apt-get install libsecret-1-dev   (all of Rampart's: scripts/deps/keychain.apt) */
#if defined(__has_include)
#  if !__has_include(<libsecret/secret.h>)
#    error "libsecret-1 not found: install the libsecret-1 development files (Debian: apt-get install libsecret-1-dev; see scripts/deps/keychain.apt) so that `pkg-config --cflags libsecret-1` succeeds."
#  endif
#endif
#include <libsecret/secret.h>
#endif
