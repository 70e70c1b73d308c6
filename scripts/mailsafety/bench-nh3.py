#!/usr/bin/env python3
"""Sanitize a JSON array of HTML messages with nh3 (ammonia) and print seconds and MB/s as JSON.

Baseline for `rampart bench sanitize`. nh3 is configured close to Rampart's job: its default
allowlist, plus `style` attributes kept through its CSS filter is not available, so it runs
with defaults (it drops <style> and style attributes: less work than Rampart does).
Usage: .venv/bin/python3 bench-nh3.py messages.json ROUNDS
"""
import json
import sys
import time

import nh3

messages = json.load(open(sys.argv[1], encoding="utf-8"))
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
total = sum(len(m.encode("utf-8")) for m in messages)
best = None
for _ in range(rounds):
    start = time.perf_counter()
    for m in messages:
        nh3.clean(m)
    elapsed = time.perf_counter() - start
    best = elapsed if best is None else min(best, elapsed)
print(json.dumps({"bytes": total, "seconds": best, "mbPerSecond": total / best / 1e6, "version": getattr(nh3, "__version__", "?")}))
