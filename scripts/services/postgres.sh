# Starts a PostgreSQL 15 of Rampart's own for the server tests on PostgreSQL (source me with bash):
#   source scripts/services/postgres.sh
# Installs nothing: scripts/deps/postgres.apt (postgresql) is installed by scripts/setup.sh.
# A cluster of its own (initdb) in $RAMPART_POSTGRES_DIR, else $RAMPART_SERVICES_DIR/postgres (set
# by scripts/test.sh, which also stops the pid this script appends to RAMPART_SERVICE_PIDS), else
# /tmp/rampart-postgres-$UID. It listens on a Unix socket only (no TCP port), in a folder of its
# own, with SCRAM password authentication; the superuser `rampart` owns a database `rampart`.
# PostgreSQL refuses to run as root: as root the cluster runs as the `postgres` system user (the
# package makes it) in /tmp/rampart-postgres-<hash of the state folder>, which that user can reach.
# Idempotent: a second `source` reuses the running cluster.
# Exports RAMPART_POSTGRES_URL=postgresql://rampart:PASSWORD@/rampart?host=SOCKET_FOLDER&port=PORT
# and RAMPART_POSTGRES=1 (or =0 with a reason on stderr). Never fails the sourcing shell.
# `bash scripts/services/postgres.sh stop [STATE]` stops it.

# shellcheck source=lib/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"

rampart_postgres_state() {
    rampart_service_state postgres "${RAMPART_POSTGRES_DIR:-}"
}

# The cluster's home: the state folder, or as root a folder in /tmp the postgres user can reach.
rampart_postgres_home() {
    if [ "$(id -u)" -eq 0 ]; then
        printf '/tmp/rampart-postgres-%s' "$(printf '%s' "$1" | cksum | cut -d' ' -f1)"
    else
        printf '%s' "$1"
    fi
}

# Runs "$@" as the cluster's owner.
rampart_postgres_as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

rampart_postgres_bin() {
    local dir
    for dir in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && { printf '%s' "$dir"; return 0; }
    done
    return 1
}

rampart_postgres_ready() {
    "$1/pg_isready" -q -h "$2" -p "$3" -d rampart -U rampart >/dev/null 2>&1
}

rampart_postgres_start() {
    local state home bin port=55432
    state="$(rampart_postgres_state)"
    if ! bin="$(rampart_postgres_bin)"; then
        echo "postgres.sh: PostgreSQL missing (apt-get install \$(cat scripts/deps/postgres.apt))" >&2
        export RAMPART_POSTGRES=0
        return 1
    fi
    home="$(rampart_postgres_home "$state")"
    mkdir -p "$state" && chmod 700 "$state"
    if [ ! -d "$home" ]; then
        mkdir -p "$home" && chmod 700 "$home"
        [ "$(id -u)" -eq 0 ] && chown postgres:postgres "$home"
    fi
    if [ ! -s "$home/password" ] || [ ! -f "$home/data/PG_VERSION" ]; then
        rampart_postgres_as_owner rm -rf "$home/data" "$home/socket"
        # A new password for each new cluster; only its owner (and root) can read it.
        rampart_postgres_as_owner sh -c "umask 077; head -c 18 /dev/urandom | base64 | tr '+/' '-_' > '$home/password'"
        rampart_postgres_as_owner "$bin/initdb" -D "$home/data" -U rampart --pwfile="$home/password" \
            --auth=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$state/initdb.log" 2>&1 || {
            echo "postgres.sh: initdb failed: $(tail -3 "$state/initdb.log")" >&2
            export RAMPART_POSTGRES=0
            return 1
        }
    fi
    rampart_postgres_as_owner mkdir -p "$home/socket"
    rampart_postgres_as_owner chmod 700 "$home/socket"
    local password
    password="$(cat "$home/password")"
    if ! rampart_postgres_ready "$bin" "$home/socket" "$port"; then
        # Closes inherited descriptors (see swtpm.sh): the server must hold no pipe of its caller.
        (
            for fd in /proc/$BASHPID/fd/*; do
                fd="${fd##*/}"
                case "$fd" in 0|1|2|255) ;; *) eval "exec $fd>&-" 2>/dev/null ;; esac
            done
            rampart_postgres_as_owner "$bin/pg_ctl" -D "$home/data" -l "$home/postgres.log" -w -t 30 \
                -o "-c listen_addresses='' -c unix_socket_directories='$home/socket' -p $port -c max_connections=200" \
                start </dev/null >/dev/null 2>&1
        ) || {
            echo "postgres.sh: PostgreSQL failed to start: $(tail -3 "$home/postgres.log" 2>/dev/null)" >&2
            export RAMPART_POSTGRES=0
            return 1
        }
        rampart_service_wait_for rampart_postgres_ready "$bin" "$home/socket" "$port" || {
            echo "postgres.sh: PostgreSQL did not answer on $home/socket" >&2
            export RAMPART_POSTGRES=0
            return 1
        }
    fi
    if ! PGPASSWORD="$password" "$bin/psql" -h "$home/socket" -p "$port" -U rampart -d postgres -tAc \
        "SELECT 1 FROM pg_database WHERE datname = 'rampart'" 2>/dev/null | grep -q 1; then
        PGPASSWORD="$password" "$bin/createdb" -h "$home/socket" -p "$port" -U rampart rampart >/dev/null 2>&1 || {
            echo "postgres.sh: the database rampart cannot be created" >&2
            export RAMPART_POSTGRES=0
            return 1
        }
    fi
    printf '%s\n' "$home" > "$state/home"
    rampart_service_register "$(head -1 "$home/data/postmaster.pid" 2>/dev/null)"
    export RAMPART_POSTGRES_URL="postgresql://rampart:$password@/rampart?host=$home/socket&port=$port"
    export RAMPART_POSTGRES=1
    return 0
}

rampart_postgres_stop() {
    local state="${1:-$(rampart_postgres_state)}" home bin
    home="$(cat "$state/home" 2>/dev/null || rampart_postgres_home "$state")"
    [ -f "$home/data/postmaster.pid" ] || return 0
    bin="$(rampart_postgres_bin)" || return 0
    rampart_postgres_as_owner "$bin/pg_ctl" -D "$home/data" -m fast -w stop >/dev/null 2>&1 || true
    return 0
}

rampart_service_main postgres "$@"
