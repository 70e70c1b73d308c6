#!/usr/bin/env bash
# Builds the DocC site of every library product: one `Sources/<Module>/Documentation.docc` catalog
# per module (`Tests/RampartTestSupport/Documentation.docc` for the test support product). Strict: any docc warning (an unresolved ``Symbol`` or <doc:Article> link, a Topics
# entry that names nothing, a doc comment's parameter that does not exist) fails the run.
#
#   scripts/docs.sh [OUTDIR]          # default OUTDIR: .build/docs/site (outside git)
#   DOCS_MODULES="RampartCore" scripts/docs.sh /tmp/site   # only these modules (while editing)
#   DOCS_STRICT=0 scripts/docs.sh     # report warnings but do not fail on them (while editing)
#   DOCS_JOBS=1 scripts/docs.sh       # docc conversions at a time (default: the number of cores)
#
# Steps: `swift package dump-symbol-graph` in the shared .build (an incremental build: right after
# `swift build` it compiles nothing, then extracts every module's public symbol graph from the
# built .swiftmodule files), then per module `docc convert` of its catalog with that module's
# graphs, then `docc merge` of the archives into one site whose landing page links every module.
# No second build folder. Serve the site over HTTP (DocC pages are a JavaScript app), e.g.
#   python3 -m http.server -d .build/docs/site 8000   → http://localhost:8000/documentation/
# Exits non-zero when the build, a docc run or a warning fails.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-.build/docs/site}
case "$OUT" in /*) ;; *) OUT="$ROOT/$OUT" ;; esac
WORK="$ROOT/.build/docs"
ARCHIVES="$WORK/archives"
export PATH="${SWIFT_BIN:-/opt/swift/usr/bin}:$PATH"
DOCC=${DOCC:-$(command -v docc || true)}
[ -x "$DOCC" ] || { echo "docs.sh: docc not found (set DOCC or SWIFT_BIN; it ships with the Swift toolchain)" >&2; exit 2; }

if [ -n "${DOCS_MODULES:-}" ]; then
    read -r -a MODULES <<<"$DOCS_MODULES"
else
    MODULES=()
    # Library products live in Sources/, except the test support product (Tests/RampartTestSupport).
    for catalog in Sources/*/Documentation.docc Tests/*/Documentation.docc; do
        [ -d "$catalog" ] && MODULES+=("$(basename "$(dirname "$catalog")")")
    done
fi
[ ${#MODULES[@]} -gt 0 ] || { echo "docs.sh: no Sources/<Module>/Documentation.docc found" >&2; exit 2; }
# The catalog of a module: Sources/<Module>/Documentation.docc, else Tests/<Module>/Documentation.docc.
catalogOf() {
    if [ -d "Sources/$1/Documentation.docc" ]; then echo "Sources/$1/Documentation.docc"; else echo "Tests/$1/Documentation.docc"; fi
}
for module in "${MODULES[@]}"; do
    [ -d "$(catalogOf "$module")" ] || { echo "docs.sh: Sources/$module/Documentation.docc does not exist" >&2; exit 2; }
done

STRICT=(--warnings-as-errors)
[ "${DOCS_STRICT:-1}" = 0 ] && STRICT=()

start=$(date +%s)
mkdir -p "$WORK" "$ARCHIVES"

echo "== symbol graphs (swift package dump-symbol-graph, in .build)"
dumpLog="$WORK/dump-symbol-graph.log"
dumpStatus=0
swift package dump-symbol-graph --minimum-access-level public >"$dumpLog" 2>&1 || dumpStatus=$?
# After `swift build --build-tests` SwiftPM also tries the synthesized test-runner modules
# (RampartPackageTests, RampartPackageDiscoveredTests), which have no module to extract from, and
# exits non-zero after writing every other graph. Any other error fails the run.
otherErrors=$(grep "error:" "$dumpLog" | grep -vE "Failed to emit symbol graph for '[A-Za-z]+Package(Discovered)?Tests'" || true)
if [ -n "$otherErrors" ] || { [ "$dumpStatus" -ne 0 ] && ! grep -q "Failed to emit symbol graph for" "$dumpLog"; }; then
    tail -40 "$dumpLog" >&2
    echo "docs.sh: swift package dump-symbol-graph failed (log: $dumpLog)" >&2; exit 1
fi
# SwiftPM prints where it wrote the graphs ("Files written to <dir>"); fall back to a search.
GRAPHS=$(sed -n 's/^Files written to //p' "$dumpLog" | tail -1)
[ -n "$GRAPHS" ] && [ -d "$GRAPHS" ] || GRAPHS=$(dirname "$(ls -t .build/*/symbolgraph/*.symbols.json 2>/dev/null | head -1)")
[ -d "$GRAPHS" ] || { echo "docs.sh: no symbol graphs found under .build (log: $dumpLog)" >&2; exit 1; }
graphsReady=$(date +%s)

# One module: its graphs (its own and its extensions of other modules' types), then docc convert.
# Writes the docc output to docc-<module>.log and its exit status to docc-<module>.status.
convert() {
    local module=$1
    local moduleGraphs="$WORK/module-graphs/$module"
    rm -rf "$moduleGraphs" && mkdir -p "$moduleGraphs"
    local files
    shopt -s nullglob
    files=("$GRAPHS/$module.symbols.json" "$GRAPHS/$module@"*.symbols.json)
    shopt -u nullglob
    if [ ! -f "$GRAPHS/$module.symbols.json" ]; then
        echo "docs.sh: no $GRAPHS/$module.symbols.json (is $module a library target?)" >"$WORK/docc-$module.log"
        echo 2 >"$WORK/docc-$module.status"; return
    fi
    cp "${files[@]}" "$moduleGraphs/"
    rm -rf "$ARCHIVES/$module.doccarchive"
    local status=0
    "$DOCC" convert "$(catalogOf "$module")" \
        --additional-symbol-graph-dir "$moduleGraphs" \
        --output-path "$ARCHIVES/$module.doccarchive" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.rampart.$module" \
        "${STRICT[@]}" >"$WORK/docc-$module.log" 2>&1 || status=$?
    echo "$status" >"$WORK/docc-$module.status"
}

# DOCS_JOBS conversions at a time (default: the number of cores; docc is mostly one thread).
JOBS=${DOCS_JOBS:-$(nproc 2>/dev/null || echo 2)}
running=0
for module in "${MODULES[@]}"; do
    rm -f "$WORK/docc-$module.status"
    convert "$module" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then wait -n || true; running=$((running - 1)); fi
done
wait

failed=()
total_warnings=0
archives=()
for module in "${MODULES[@]}"; do
    log="$WORK/docc-$module.log"
    status=$(cat "$WORK/docc-$module.status" 2>/dev/null || echo 1)
    # Count warnings ourselves too: with --warnings-as-errors docc reports them as errors.
    warnings=$(grep -cE "(warning|error):" "$log" || true)
    total_warnings=$((total_warnings + warnings))
    if [ "$status" -ne 0 ] || { [ "${DOCS_STRICT:-1}" != 0 ] && [ "$warnings" -gt 0 ]; }; then
        grep -E -A3 "(warning|error):" "$log" | head -80 >&2 || tail -20 "$log" >&2
        echo "== $module: FAILED ($warnings warning(s)/error(s), docc status $status; log: $log)" >&2
        failed+=("$module")
        continue
    fi
    echo "== $module: docc convert, $warnings warning(s)"
    archives+=("$ARCHIVES/$module.doccarchive")
done

if [ ${#failed[@]} -gt 0 ]; then
    echo "docs.sh: ${#failed[@]} module(s) failed: ${failed[*]} (fix the warnings above; DOCS_MODULES=\"${failed[*]}\" scripts/docs.sh reruns only them)" >&2
    exit 1
fi

echo "== merging ${#archives[@]} module(s) into $OUT"
rm -rf "$OUT"
mkdir -p "$(dirname "$OUT")"
"$DOCC" merge "${archives[@]}" --output-path "$OUT" --synthesized-landing-page-name Rampart \
    --synthesized-landing-page-kind Package >"$WORK/docc-merge.log" 2>&1 || {
    cat "$WORK/docc-merge.log" >&2; echo "docs.sh: docc merge failed" >&2; exit 1; }

# A plain page at the root that links every module (works without JavaScript too).
{
    echo '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Rampart documentation</title>'
    echo '<meta http-equiv="refresh" content="0; url=documentation/"></head><body>'
    echo '<h1>Rampart documentation</h1><p><a href="documentation/">All modules</a></p><ul>'
    for module in "${MODULES[@]}"; do
        slug=$(echo "$module" | tr '[:upper:]' '[:lower:]')
        echo "<li><a href=\"documentation/$slug/\">$module</a></li>"
    done
    echo '</ul></body></html>'
} >"$OUT/modules.html"

end=$(date +%s)
echo "docs.sh: site in $OUT ($(du -sh "$OUT" | cut -f1), ${#MODULES[@]} modules, $total_warnings warning(s);" \
     "symbol graphs $((graphsReady - start))s, docc $((end - graphsReady))s, total $((end - start))s)"
