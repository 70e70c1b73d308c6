# Shared by the service scripts in scripts/services (they source it; it is not a service itself,
# and scripts/test.sh only sources scripts/services/*.sh).

# The state folder of service $1: $2 when set (the service's own override variable), else
# $RAMPART_SERVICES_DIR/$1 (set by scripts/test.sh), else /tmp/rampart-$1-$UID.
rampart_service_state() {
    if [ -n "${2:-}" ]; then
        printf '%s' "$2"
    elif [ -n "${RAMPART_SERVICES_DIR:-}" ]; then
        printf '%s' "$RAMPART_SERVICES_DIR/$1"
    else
        printf '%s' "/tmp/rampart-$1-$(id -u)"
    fi
}

# Appends the given (non-empty) pids to RAMPART_SERVICE_PIDS when the sourcing shell keeps that
# list: scripts/test.sh stops them when it exits.
rampart_service_register() {
    declare -p RAMPART_SERVICE_PIDS >/dev/null 2>&1 || return 0
    local pid
    for pid in "$@"; do
        [ -n "$pid" ] && RAMPART_SERVICE_PIDS+=("$pid")
    done
    return 0
}

# Runs "$@" every 0.1 s until it succeeds; fails after 50 tries (about 5 s).
rampart_service_wait_for() {
    local tries=0
    until "$@"; do
        tries=$((tries + 1))
        [ "$tries" -gt 50 ] && return 1
        sleep 0.1
    done
    return 0
}

# Stops the given pids (empty ones are skipped): TERM first, then KILL for any still alive after
# 0.2 s (a process started with TERM blocked, as under a test runner's signal mask).
rampart_service_kill() {
    local pid
    for pid in "$@"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null; done
    sleep 0.2
    for pid in "$@"; do [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null; done
    return 0
}

# The entry of a service script: `stop [STATE]` stops service $1 (rampart_$1_stop), anything else
# starts it (rampart_$1_start) without ever failing the sourcing shell.
rampart_service_main() {
    local name="$1"
    shift
    if [ "${1:-}" = "stop" ]; then
        "rampart_${name}_stop" "${2:-}"
    else
        "rampart_${name}_start" || true
    fi
}
