#!/usr/bin/env bash
# Runs every test of Rampart on a fresh machine: installs what is missing (scripts/setup.sh),
# starts the services the tests use (scripts/services/*.sh: a D-Bus session with
# gnome-keyring for Secret Service, swtpm for the TPM tests, ...), builds, runs `swift test`, builds
# the DocC catalogs (`scripts/docs.sh`, strict), then a short smoke run of every fuzz target
# (`scripts/fuzz.sh smoke`).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="/opt/swift/usr/bin:$PATH"

scripts/setup.sh

# Services: each script, sourced, starts its service in the background (idempotently) and
# exports what the tests read. Their processes are stopped when this script exits.
export RAMPART_SERVICES_DIR="${RAMPART_SERVICES_DIR:-$ROOT/.build-services}"
mkdir -p "$RAMPART_SERVICES_DIR"
RAMPART_SERVICE_PIDS=()
cleanup() {
    for pid in "${RAMPART_SERVICE_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
for service in scripts/services/*.sh; do
    [ -e "$service" ] || continue
    echo "test: starting service $(basename "$service" .sh)"
    # shellcheck disable=SC1090
    source "$service"
done

export HTML5LIB_TESTS="${HTML5LIB_TESTS:-$ROOT/../shared/testdata/html5lib-tests}"
export RAMPART_TRACKERS="${RAMPART_TRACKERS:-$ROOT/../shared/testdata/trackers}"
export RAMPART_PYTHON="${RAMPART_PYTHON:-$ROOT/.venv/bin/python3}"

swift build --build-tests
swift test "$@"

# The server suites a second time with the server's storage on PostgreSQL (scripts/services/postgres.sh
# started it; in CI a missing PostgreSQL fails these tests, it never skips them). Skipped when arguments
# select tests (`scripts/test.sh --filter X`) or with RAMPART_SKIP_POSTGRES_PASS=1.
if [ "$#" -eq 0 ] && [ "${RAMPART_SKIP_POSTGRES_PASS:-0}" != 1 ]; then
    echo "test: RampartServerTests again on PostgreSQL (RAMPART_SERVER_ENGINE=postgresql)"
    RAMPART_SERVER_ENGINE=postgresql swift test --skip-build --filter RampartServerTests
fi

# The DocC catalogs of every library product, strict: any DocC warning fails (scripts/docs.sh; it
# extracts the symbol graphs from the build above, no second build). Skipped when arguments select
# tests (`scripts/test.sh --filter X`) or with RAMPART_SKIP_DOCS=1.
if [ "$#" -eq 0 ] && [ "${RAMPART_SKIP_DOCS:-0}" != 1 ]; then
    if ! scripts/docs.sh; then
        echo "test: DOCS FAILED (DocC warnings above; DOCS_MODULES=\"<Module>\" scripts/docs.sh reruns one module)" >&2
        exit 1
    fi
fi

# Coverage-guided fuzzing: a short smoke run of every libFuzzer target, with ASan and per-input
# time and memory limits (scripts/fuzz.sh, docs/fuzzing.md); fails on any crash, hang or oracle
# violation. Skipped when arguments select tests (`scripts/test.sh --filter X`) or with
# RAMPART_SKIP_FUZZ=1.
if [ "$#" -eq 0 ] && [ "${RAMPART_SKIP_FUZZ:-0}" != 1 ]; then
    if ! scripts/fuzz.sh smoke; then
        echo "test: FUZZ SMOKE FOUND A PROBLEM (see .build-fuzz/logs and .build-fuzz/artifacts; docs/fuzzing.md)" >&2
        exit 1
    fi
fi
