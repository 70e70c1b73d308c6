#!/usr/bin/env bash
# Builds Go's reference peer (scripts/kt/tlog-peer, GOPATH mode against Debian's
# golang-golang-x-mod-dev; nothing is downloaded) and runs `rampart-dev bench keylog` against it:
#   scripts/kt/bench.sh [--leaves N] [--lookups L]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
export PATH="/opt/swift/usr/bin:$PATH"
scripts/setup.sh >&2
GOPATH_DIR="$(mktemp -d)"
trap 'rm -rf "$GOPATH_DIR"' EXIT
mkdir -p "$GOPATH_DIR/src/rampart.invalid/tlog-peer"
cp scripts/kt/tlog-peer/main.go scripts/kt/tlog-peer/go.mod "$GOPATH_DIR/src/rampart.invalid/tlog-peer/"
GO111MODULE=off GOPATH="$GOPATH_DIR:/usr/share/gocode" GOFLAGS= GOPROXY=off CGO_ENABLED=0 GOCACHE="$GOPATH_DIR/cache" \
    go build -o "$GOPATH_DIR/tlog-peer" rampart.invalid/tlog-peer
swift build -c release --product rampart-dev >&2
"$(swift build -c release --show-bin-path)/rampart-dev" bench keylog --go-peer "$GOPATH_DIR/tlog-peer" "$@"
