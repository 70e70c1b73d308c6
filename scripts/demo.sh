#!/usr/bin/env bash
# Runs Rampart's main job on a fresh machine: installs what is missing, builds, and runs
# `rampart demo` in a throwaway home folder.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="/opt/swift/usr/bin:$PATH"
scripts/setup.sh >&2
swift build --product rampart >&2
exec "$(swift build --show-bin-path)/rampart" demo "$@"
