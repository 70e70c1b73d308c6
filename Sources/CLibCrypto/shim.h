#ifndef C_LIBCRYPTO_SHIM_H
#define C_LIBCRYPTO_SHIM_H
/* OpenSSL 3's libcrypto, for the SRP module's big-number arithmetic (BIGNUM, constant-time
 * Montgomery exponentiation) only. Build requirement: OpenSSL's development files, found through
 * pkg-config libcrypto. Debian/Ubuntu: apt-get install libssl-dev (scripts/deps/srp.apt). */
#if defined(__has_include)
#  if !__has_include(<openssl/bn.h>)
#    error "OpenSSL not found: install its development files (Debian: apt-get install libssl-dev; see scripts/deps/srp.apt) so that `pkg-config --cflags libcrypto` succeeds."
#  endif
#endif
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#endif
