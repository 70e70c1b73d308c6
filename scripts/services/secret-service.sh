# Starts a private Secret Service for the Keychain tests (source me with bash):
#   source scripts/services/secret-service.sh
# - a private D-Bus session bus (never the user's own), and
# - gnome-keyring-daemon with only the `secrets` component, its login keyring created and
#   unlocked with a throw-away password, in a fresh data folder.
# Idempotent: a second `source` in the same state folder reuses the running bus and daemon.
# Exports DBUS_SESSION_BUS_ADDRESS, RAMPART_SECRET_SERVICE=1 (or =0 with a reason on stderr).
# State lives in $RAMPART_SECRET_SERVICE_DIR, else $RAMPART_SERVICES_DIR/secret-service (set by
# scripts/test.sh, which also kills the pids this script appends to RAMPART_SERVICE_PIDS), else
# /tmp/rampart-secret-service-$UID. Never fails the sourcing shell (safe under `set -euo pipefail`):
# on failure it prints why and exports RAMPART_SECRET_SERVICE=0.

# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

# Whether some process owns org.freedesktop.secrets on the bus at $1.
rampart_secret_service_owned() {
    DBUS_SESSION_BUS_ADDRESS="$1" dbus-send --session --dest=org.freedesktop.DBus --print-reply \
        /org/freedesktop/DBus org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null \
        | grep -q 'boolean true'
}

rampart_secret_service_state() {
    rampart_service_state secret-service "${RAMPART_SECRET_SERVICE_DIR:-}"
}

# The pid of the process owning org.freedesktop.secrets on the bus at $1.
rampart_secret_service_owner_pid() {
    DBUS_SESSION_BUS_ADDRESS="$1" dbus-send --session --dest=org.freedesktop.DBus --print-reply \
        /org/freedesktop/DBus org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets 2>/dev/null \
        | sed -n 's/.*uint32 //p'
}

rampart_secret_service_start() {
    local state
    state="$(rampart_secret_service_state)"
    local missing=""
    for tool in dbus-daemon gnome-keyring-daemon; do
        command -v "$tool" >/dev/null 2>&1 || missing="$missing $tool"
    done
    if [ -n "$missing" ]; then
        echo "secret-service.sh: missing$missing (apt-get install \$(cat scripts/deps/keychain.apt))" >&2
        export RAMPART_SECRET_SERVICE=0
        return 1
    fi
    mkdir -p "$state" && chmod 700 "$state"

    # 1. The private session bus (reused when its pid is alive).
    local address=""
    if [ -f "$state/bus.address" ] && [ -f "$state/bus.pid" ] && kill -0 "$(cat "$state/bus.pid")" 2>/dev/null; then
        address="$(cat "$state/bus.address")"
    else
        local out
        out="$(dbus-daemon --session --fork --nopidfile --print-address=1 --print-pid=1)" || {
            echo "secret-service.sh: dbus-daemon failed to start" >&2
            export RAMPART_SECRET_SERVICE=0
            return 1
        }
        address="$(printf '%s\n' "$out" | sed -n 1p)"
        printf '%s\n' "$out" | sed -n 2p > "$state/bus.pid"
        printf '%s\n' "$address" > "$state/bus.address"
    fi
    export DBUS_SESSION_BUS_ADDRESS="$address"

    # 2. gnome-keyring-daemon on that bus, with a fresh data folder so the login keyring is
    #    created (and unlocked) with the password given on stdin.
    if ! rampart_secret_service_owned "$address"; then
        mkdir -p "$state/data" "$state/runtime" && chmod 700 "$state/data" "$state/runtime"
        printf 'rampart-test-keyring\n' | \
            env XDG_DATA_HOME="$state/data" XDG_RUNTIME_DIR="$state/runtime" \
                DBUS_SESSION_BUS_ADDRESS="$address" \
                gnome-keyring-daemon --daemonize --unlock --components=secrets \
                >"$state/keyring.env" 2>"$state/keyring.log" || {
            echo "secret-service.sh: gnome-keyring-daemon failed: $(cat "$state/keyring.log")" >&2
            export RAMPART_SECRET_SERVICE=0
            return 1
        }
        # Wait until the daemon owns org.freedesktop.secrets on the bus.
        rampart_service_wait_for rampart_secret_service_owned "$address" || {
            echo "secret-service.sh: gnome-keyring-daemon did not claim org.freedesktop.secrets" >&2
            export RAMPART_SECRET_SERVICE=0
            return 1
        }
    fi
    # Let scripts/test.sh stop them when it exits.
    rampart_service_register "$(cat "$state/bus.pid")" "$(rampart_secret_service_owner_pid "$address")"
    export RAMPART_SECRET_SERVICE=1
    return 0
}

# Stops the bus and daemon of a state folder (default: the one above). Tests that start a
# service of their own (to lock it) call this when done.
rampart_secret_service_stop() {
    local state="${1:-$(rampart_secret_service_state)}"
    [ -f "$state/bus.address" ] || return 0
    local keyring bus=""
    keyring="$(rampart_secret_service_owner_pid "$(cat "$state/bus.address")")"
    [ -f "$state/bus.pid" ] && bus="$(cat "$state/bus.pid")"
    rampart_service_kill "$keyring" "$bus"
    rm -f "$state/bus.address" "$state/bus.pid"
    return 0
}

rampart_service_main secret_service "$@"
