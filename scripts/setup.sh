#!/usr/bin/env bash
# Installs everything Rampart's build and tests need, idempotently:
#   - Debian packages listed one per line in scripts/deps/*.apt (only the missing ones);
#   - PyPI packages (pinned) listed in scripts/deps/*.pip, into .venv/ at the package root.
# Safe to run again and again; does nothing when everything is present.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# --- Debian packages -------------------------------------------------------------------------
mapfile -t wanted < <(cat scripts/deps/*.apt 2>/dev/null | sed 's/#.*//' | tr -s ' \t' '\n' | grep -v '^$' | sort -u)
missing=()
for package in "${wanted[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "setup: Debian packages present (${#wanted[@]})"
fi

# --- PyPI packages (interop tests and baselines) ----------------------------------------------
if ls scripts/deps/*.pip >/dev/null 2>&1; then
    requirements="$(cat scripts/deps/*.pip | sed 's/#.*//' | grep -v '^[[:space:]]*$' | sort -u)"
    if [ -n "$requirements" ]; then
        if [ ! -x .venv/bin/python3 ]; then
            echo "setup: creating .venv"
            python3 -m venv .venv
        fi
        stamp=".venv/.rampart-requirements"
        if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$requirements" ]; then
            echo "setup: installing PyPI packages: $(echo "$requirements" | tr '\n' ' ')"
            echo "$requirements" > .venv/requirements.txt
            .venv/bin/python3 -m pip install -q --disable-pip-version-check -r .venv/requirements.txt
            echo "$requirements" > "$stamp"
        else
            echo "setup: PyPI packages present"
        fi
    fi
fi

# --- Swift toolchain ------------------------------------------------------------------------------
if ! command -v swift >/dev/null 2>&1 && [ -x /opt/swift/usr/bin/swift ]; then
    echo "setup: Swift is at /opt/swift/usr/bin (the scripts add it to PATH)"
fi
