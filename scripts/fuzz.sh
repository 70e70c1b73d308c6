#!/usr/bin/env bash
# Builds Rampart's libFuzzer targets (Fuzz/, with AddressSanitizer) and runs them.
#
#   scripts/fuzz.sh                  every target, 60 s each
#   scripts/fuzz.sh TARGET [SECONDS] one target (html5, sanitizer, css, mime, mbox, push, vault,
#                                    sealed, keychain, agentwire, api, openpgp, srp, pgpmime, imap, smtp, tlog, signup),
#                                    60 s by default
#   scripts/fuzz.sh all [SECONDS]    every target, SECONDS each
#   scripts/fuzz.sh smoke [SECONDS]  every target, 15 s each (what scripts/test.sh runs on CI)
#   scripts/fuzz.sh build            only build
#   scripts/fuzz.sh list             the target names
#
# Each input gets a time limit (-timeout, FUZZ_TIMEOUT, 10 s) and the process a memory limit
# (-rss_limit_mb / -malloc_limit_mb, FUZZ_RSS_MB, 2048): a hang or a blow-up is a finding like a
# crash. The seeds are generated from the project's test data by Fuzz/make-seeds.py; the
# corpus libFuzzer grows is kept in .build-fuzz/corpus/TARGET (reused by later runs), a failing
# input is written to .build-fuzz/artifacts/TARGET/. Exits non-zero on any crash, hang, memory
# blow-up or oracle violation. FUZZ_RUNS=N stops each target after N executions (long runs:
# `FUZZ_RUNS=1000000 FUZZ_NICE=19 scripts/fuzz.sh all 3600`); FUZZ_CORPUS=DIR keeps the corpora
# elsewhere; FUZZ_LOGS=DIR the logs; FUZZ_TMP=DIR the files targets write (e.g. /dev/shm for the
# keychain target); FUZZ_SEED=N fixes libFuzzer's seed (smoke: 1); FUZZ_NO_BUILD=1 runs the binaries
# already built. See docs/fuzzing.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export PATH="/opt/swift/usr/bin:$PATH"

TARGETS=(html5 sanitizer css mime mbox push vault sealed keychain agentwire api openpgp srp pgpmime imap smtp tlog signup)
SCRATCH="${FUZZ_SCRATCH:-$ROOT/.build-fuzz}"
TIMEOUT="${FUZZ_TIMEOUT:-10}"
RSS_MB="${FUZZ_RSS_MB:-2048}"
NICE="${FUZZ_NICE:-10}"

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; }

dict_for() {
    case "$1" in
        html5|sanitizer) echo "Fuzz/dict/html.dict" ;;
        css) echo "Fuzz/dict/css.dict" ;;
        mime|mbox) echo "Fuzz/dict/mime.dict" ;;
        api|agentwire|srp|signup) echo "Fuzz/dict/json.dict" ;;
        pgpmime) echo "Fuzz/dict/mime.dict" ;;
        *) echo "" ;;
    esac
}

max_len_for() {
    case "$1" in
        html5|sanitizer|css|mime|mbox|pgpmime) echo 16384 ;;
        *) echo 4096 ;;
    esac
}

build() {
    echo "fuzz: building the fuzz targets (release, -sanitize=fuzzer,address) in $SCRATCH"
    local start=$SECONDS
    nice -n "$NICE" swift build -c release --package-path Fuzz --scratch-path "$SCRATCH" \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library
    BIN="$(swift build -c release --package-path Fuzz --scratch-path "$SCRATCH" --show-bin-path)"
    echo "fuzz: built in $((SECONDS - start)) s"
}

# Seeds go to a folder of this run's own (SEEDS), so that two runs side by side (one per core)
# never remove each other's seeds.
SEEDS="$SCRATCH/seeds.$$"
seeds() {
    rm -rf "$SEEDS"
    trap 'rm -rf "$SEEDS"' EXIT
    local python="${RAMPART_PYTHON:-}"
    [ -x "$python" ] || python="$(command -v python3)"
    "$python" Fuzz/make-seeds.py "$SEEDS"
}

# run TARGET SECONDS: runs one target; prints a summary line; returns non-zero on a finding.
run() {
    local target="$1" seconds="$2"
    local corpus="${FUZZ_CORPUS:-$SCRATCH/corpus}/$target" artifacts="$SCRATCH/artifacts/$target" log="${FUZZ_LOGS:-$SCRATCH/logs}/$target.log"
    # Artifacts are kept (never removed at the start of a run): another run of the same target
    # must not delete the input of a finding before it is read.
    local scratch_tmp="${FUZZ_TMP:-$SCRATCH/tmp}"
    mkdir -p "$corpus" "$artifacts" "$(dirname "$log")" "$scratch_tmp"
    local args=("$corpus" "$SEEDS/$target"
        -max_total_time="$seconds" -timeout="$TIMEOUT" -rss_limit_mb="$RSS_MB" -malloc_limit_mb="$RSS_MB"
        -max_len="$(max_len_for "$target")" -print_final_stats=1 -detect_leaks=0
        -artifact_prefix="$artifacts/")
    # FUZZ_RUNS: stop after that many executions (or SECONDS, whichever comes first).
    [ -n "${FUZZ_RUNS:-}" ] && args+=(-runs="$FUZZ_RUNS")
    # FUZZ_SEED: libFuzzer's random seed (the smoke run uses 1, so that CI explores the same
    # inputs on every run instead of failing at random; long runs leave it random).
    [ -n "${FUZZ_SEED:-}" ] && args+=(-seed="$FUZZ_SEED")
    local dict
    dict="$(dict_for "$target")"
    [ -n "$dict" ] && args+=(-dict="$dict")
    echo "fuzz: $target for ${seconds} s (log: ${log#"$ROOT"/})"
    local status=0
    # SWIFT_BACKTRACE: leave a trap to ASan and libFuzzer (the Swift backtracer gets in their way).
    SWIFT_BACKTRACE=enable=no RAMPART_FUZZ_TMP="$scratch_tmp" ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:handle_abort=1}" \
        nice -n "$NICE" "$BIN/fuzz-$target" "${args[@]}" >"$log" 2>&1 || status=$?
    local execs cov ft
    execs="$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | awk '{print $2}')"
    cov="$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')"
    ft="$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | awk '{print $2}')"
    printf 'fuzz: %-10s %s  executions %s  coverage %s edges, %s features  corpus %s files\n' \
        "$target" "$([ "$status" -eq 0 ] && echo ok || echo FAILED)" "${execs:-?}" "${cov:-?}" "${ft:-?}" \
        "$(find "$corpus" -type f | wc -l)"
    if [ "$status" -ne 0 ]; then
        echo "fuzz: $target found a problem (exit status $status); the input is in ${artifacts#"$ROOT"/}/:"
        grep -E 'ERROR: libFuzzer|ERROR: AddressSanitizer|ORACLE VIOLATION|Fatal error|deadly signal|out-of-memory|timeout after' "$log" | head -5 || true
        grep -A12 'ORACLE VIOLATION' "$log" | head -14 || true
        ls -1t "$artifacts" | head -3
        return 1
    fi
}

command="${1:-all}"
case "$command" in
    -h|--help|help) usage; exit 0 ;;
    list) printf '%s\n' "${TARGETS[@]}"; exit 0 ;;
    build) build; exit 0 ;;
    # The smoke run is deterministic: seed 1 and at most 25,000 executions a target (or the
    # seconds, whichever comes first), so CI explores the same inputs on a fast or slow machine.
    smoke) selected=("${TARGETS[@]}"); seconds="${2:-${FUZZ_SMOKE_SECONDS:-15}}"; export FUZZ_SEED="${FUZZ_SEED:-1}"
           export FUZZ_RUNS="${FUZZ_RUNS:-25000}" ;;
    all) selected=("${TARGETS[@]}"); seconds="${2:-60}" ;;
    *)
        if [[ " ${TARGETS[*]} " != *" $command "* ]]; then
            echo "fuzz: unknown target '$command' (targets: ${TARGETS[*]})" >&2
            exit 2
        fi
        selected=("$command"); seconds="${2:-60}" ;;
esac

total_start=$SECONDS
if [ "${FUZZ_NO_BUILD:-0}" = 1 ]; then
    # Run the binaries built earlier (e.g. while other work leaves the tree unbuildable).
    BIN="$(swift build -c release --package-path Fuzz --scratch-path "$SCRATCH" --show-bin-path)"
else
    build
fi
seeds
failed=()
for target in "${selected[@]}"; do
    run "$target" "$seconds" || failed+=("$target")
done
echo "fuzz: ${#selected[@]} target(s) in $((SECONDS - total_start)) s including the build"
if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz: FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: no crash, hang or oracle violation"
