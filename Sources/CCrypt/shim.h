#ifndef C_CRYPT_SHIM_H
#define C_CRYPT_SHIM_H
/* libxcrypt's crypt_r (bcrypt "$2y$") for the Bcrypt module.
 * Build requirement: libxcrypt's development files. Debian/Ubuntu: apt-get install libcrypt-dev
 * (scripts/deps/srp.apt). */
#if defined(__has_include)
#  if !__has_include(<crypt.h>)
#    error "crypt.h not found: install libxcrypt's development files (Debian: apt-get install libcrypt-dev; see scripts/deps/srp.apt)."
#  endif
#endif
#include <crypt.h>
#endif
