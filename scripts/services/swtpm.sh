# Starts a software TPM 2.0 (swtpm) for the HardwareKeys tests (source me with bash):
#   source scripts/services/swtpm.sh
# swtpm in socket mode on 127.0.0.1 (command port P, control port P+1), TPM state in
# $RAMPART_SWTPM_DIR, else $RAMPART_SERVICES_DIR/swtpm (set by scripts/test.sh, which also kills
# the pids this script appends to RAMPART_SERVICE_PIDS), else /tmp/rampart-swtpm-$UID.
# Command actually run (P = first free port from $RAMPART_SWTPM_PORT, default 2321):
#   swtpm socket --tpm2 --tpmstate dir=STATE --server type=tcp,port=P,bindaddr=127.0.0.1 \
#     --ctrl type=tcp,port=P+1,bindaddr=127.0.0.1 --flags not-need-init,startup-clear --daemon
# Idempotent: a second `source` with the same state folder reuses the running swtpm.
# Exports RAMPART_TPM_TCTI="swtpm:host=127.0.0.1,port=P" and RAMPART_SWTPM=1 (or =0 with a
# reason on stderr). Never fails the sourcing shell (safe under `set -euo pipefail`).
# `bash scripts/services/swtpm.sh stop [STATE]` stops it.

# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

rampart_swtpm_state() {
    rampart_service_state swtpm "${RAMPART_SWTPM_DIR:-}"
}

# Whether something listens on 127.0.0.1:$1.
rampart_swtpm_port_busy() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Whether the swtpm of state folder $1 wrote its pid and listens on port $2.
rampart_swtpm_listening() {
    [ -s "$1/swtpm.pid" ] && rampart_swtpm_port_busy "$2"
}

rampart_swtpm_start() {
    local state
    state="$(rampart_swtpm_state)"
    if ! command -v swtpm >/dev/null 2>&1; then
        echo "swtpm.sh: swtpm missing (apt-get install \$(cat scripts/deps/hardwarekeys.apt))" >&2
        export RAMPART_SWTPM=0
        return 1
    fi
    mkdir -p "$state/tpm" && chmod 700 "$state" "$state/tpm"
    local port=""
    if [ -f "$state/swtpm.pid" ] && [ -f "$state/port" ] && kill -0 "$(cat "$state/swtpm.pid")" 2>/dev/null; then
        port="$(cat "$state/port")"
    else
        port="${RAMPART_SWTPM_PORT:-2321}"
        local tries=0
        while rampart_swtpm_port_busy "$port" || rampart_swtpm_port_busy "$((port + 1))"; do
            port=$((port + 2))
            tries=$((tries + 1))
            if [ "$tries" -gt 50 ]; then
                echo "swtpm.sh: no free port pair from ${RAMPART_SWTPM_PORT:-2321}" >&2
                export RAMPART_SWTPM=0
                return 1
            fi
        done
        rm -f "$state/swtpm.pid"
        # The daemon keeps whatever descriptors it inherits; close them so that it holds no
        # pipe or socket of its caller (Foundation's Process, for one, learns that its child
        # exited when such a socket closes, and would wait for the daemon instead; a caller that
        # reads our stdout to EOF, as `$(...)` does, likewise).
        (
            for fd in /proc/$BASHPID/fd/*; do
                fd="${fd##*/}"
                case "$fd" in 0|1|2|255) ;; *) eval "exec $fd>&-" 2>/dev/null ;; esac
            done
            exec swtpm socket --tpm2 --tpmstate dir="$state/tpm" \
            --server type=tcp,port="$port",bindaddr=127.0.0.1 \
            --ctrl type=tcp,port="$((port + 1))",bindaddr=127.0.0.1 \
            --flags not-need-init,startup-clear \
            --pid file="$state/swtpm.pid" --log file="$state/swtpm.log" --daemon \
            </dev/null >/dev/null 2>&1
        ) || {
            echo "swtpm.sh: swtpm failed to start: $(tail -3 "$state/swtpm.log" 2>/dev/null)" >&2
            export RAMPART_SWTPM=0
            return 1
        }
        rampart_service_wait_for rampart_swtpm_listening "$state" "$port" || {
            echo "swtpm.sh: swtpm did not listen on port $port" >&2
            export RAMPART_SWTPM=0
            return 1
        }
        printf '%s\n' "$port" > "$state/port"
    fi
    rampart_service_register "$(cat "$state/swtpm.pid")"
    export RAMPART_TPM_TCTI="swtpm:host=127.0.0.1,port=$port"
    export RAMPART_SWTPM=1
    # A state folder kept from earlier runs may be in dictionary-attack lockout from their
    # wrong-PIN tests (3 failures, one forgiven every 1000 s): every run starts from a TPM that
    # counts from zero (a test TPM's lockout authorization is empty; tpm2-tools, hardwarekeys.apt).
    if command -v tpm2_dictionarylockout >/dev/null 2>&1; then
        tpm2_dictionarylockout --clear-lockout -T "$RAMPART_TPM_TCTI" >/dev/null 2>&1 || true
    fi
    return 0
}

rampart_swtpm_stop() {
    local state="${1:-$(rampart_swtpm_state)}"
    [ -f "$state/swtpm.pid" ] || return 0
    rampart_service_kill "$(cat "$state/swtpm.pid")"
    rm -f "$state/swtpm.pid" "$state/port"
    return 0
}

rampart_service_main swtpm "$@"
