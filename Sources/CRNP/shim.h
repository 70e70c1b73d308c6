#ifndef C_RNP_SHIM_H
#define C_RNP_SHIM_H
/* RNP (the OpenPGP C library Thunderbird uses) for the OpenPGP module.
 * Build requirement: the librnp development files, found through pkg-config (`librnp`).
 * Debian/Ubuntu: apt-get install librnp-dev   (all of Rampart's: scripts/deps/openpgp.apt) */
#if defined(__has_include)
#  if !__has_include(<rnp/rnp.h>)
#    error "librnp not found: install the RNP development files (Debian: apt-get install librnp-dev; see scripts/deps/openpgp.apt) so that `pkg-config --cflags librnp` succeeds."
#  endif
#endif
#include <rnp/rnp.h>
#include <rnp/rnp_err.h>
#endif
