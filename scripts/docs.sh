#!/usr/bin/env bash
# Builds the DocC site of every module that has a `Sources/<Module>/Documentation.docc` catalog.
#
#   scripts/docs.sh [OUTDIR]          # default OUTDIR: .build-docs/site (outside git)
#   DOCS_MODULES="RampartCore" scripts/docs.sh /tmp/site   # only these modules (while editing)
#   DOCS_STRICT=1 scripts/docs.sh     # warnings (e.g. an unresolved ``Symbol`` link) fail the run
#
# Steps per module: `swift build` of the target in its own scratch folder (.build-docs, so the
# shared .build is not touched) with the compiler emitting symbol graphs, then `docc convert` of
# the catalog with those graphs into a .doccarchive. The archives are merged into one site whose
# landing page links every module. Serve it over HTTP (DocC pages are a JavaScript app), e.g.
#   python3 -m http.server -d .build-docs/site 8000   → http://localhost:8000/documentation/
# Exits non-zero when a build or docc fails.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${1:-.build-docs/site}
case "$OUT" in /*) ;; *) OUT="$ROOT/$OUT" ;; esac
SCRATCH="$ROOT/.build-docs"
GRAPHS="$SCRATCH/symbol-graphs"   # kept between runs: an up-to-date module is not recompiled
ARCHIVES="$SCRATCH/archives"
export PATH="${SWIFT_BIN:-/opt/swift/usr/bin}:$PATH"
DOCC=${DOCC:-$(command -v docc || true)}
[ -x "$DOCC" ] || { echo "docs.sh: docc not found (set DOCC or SWIFT_BIN; it ships with the Swift toolchain)" >&2; exit 2; }

if [ -n "${DOCS_MODULES:-}" ]; then
    read -r -a MODULES <<<"$DOCS_MODULES"
else
    MODULES=()
    for catalog in Sources/*/Documentation.docc; do
        [ -d "$catalog" ] && MODULES+=("$(basename "$(dirname "$catalog")")")
    done
fi
[ ${#MODULES[@]} -gt 0 ] || { echo "docs.sh: no Sources/<Module>/Documentation.docc found" >&2; exit 2; }
for module in "${MODULES[@]}"; do
    [ -d "Sources/$module/Documentation.docc" ] || { echo "docs.sh: Sources/$module/Documentation.docc does not exist" >&2; exit 2; }
done

STRICT=()
[ "${DOCS_STRICT:-0}" = 1 ] && STRICT=(--warnings-as-errors)

mkdir -p "$GRAPHS" "$ARCHIVES"
start=$(date +%s)
archives=()
for module in "${MODULES[@]}"; do
    echo "== $module: symbol graphs"
    rm -f "$GRAPHS/$module.symbols.json" "$GRAPHS/$module@"*.symbols.json
    build() {
        swift build --scratch-path "$SCRATCH" --target "$module" \
            -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$GRAPHS"
    }
    build
    if [ ! -f "$GRAPHS/$module.symbols.json" ]; then
        # Up to date, so the compiler did not emit the module: have it emit the module again.
        rm -rf "$SCRATCH"/*/debug/Modules/"$module".swiftmodule
        build
    fi
    # Only this module's graphs (its own and its extensions of other modules' types).
    moduleGraphs="$SCRATCH/module-graphs/$module"
    rm -rf "$moduleGraphs" && mkdir -p "$moduleGraphs"
    shopt -s nullglob
    files=("$GRAPHS/$module.symbols.json" "$GRAPHS/$module@"*.symbols.json)
    shopt -u nullglob
    [ -f "$GRAPHS/$module.symbols.json" ] || {
        echo "docs.sh: the build wrote no $GRAPHS/$module.symbols.json; remove $SCRATCH and run again" >&2; exit 1; }
    cp "${files[@]}" "$moduleGraphs/"

    echo "== $module: docc convert"
    archive="$ARCHIVES/$module.doccarchive"
    rm -rf "$archive"
    log="$SCRATCH/docc-$module.log"
    if ! "$DOCC" convert "Sources/$module/Documentation.docc" \
        --additional-symbol-graph-dir "$moduleGraphs" \
        --output-path "$archive" \
        --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.rampart.$module" \
        "${STRICT[@]}" 2>&1 | tee "$log"; then
        echo "docs.sh: docc convert failed for $module (log: $log)" >&2; exit 1
    fi
    # docc reports a failure in its exit status; the pipe above keeps it (pipefail).
    warnings=$(grep -c "warning:" "$log" || true)
    echo "== $module: $warnings warning(s)"
    archives+=("$archive")
done

echo "== merging ${#archives[@]} module(s) into $OUT"
rm -rf "$OUT"
mkdir -p "$(dirname "$OUT")"
"$DOCC" merge "${archives[@]}" --output-path "$OUT" --synthesized-landing-page-name Rampart \
    --synthesized-landing-page-kind Package

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

seconds=$(( $(date +%s) - start ))
echo "docs.sh: site in $OUT ($(du -sh "$OUT" | cut -f1), ${#MODULES[@]} modules, ${seconds}s)"
