#!/usr/bin/env python3
"""Sanitize a JSON array of HTML messages with nh3 (ammonia) and print the seconds of each round
as JSON. Baseline for `rampart-dev bench sanitize`.

Two configurations:
  default        nh3's defaults: it drops <style> and style attributes (less work than Rampart,
                 which sanitizes CSS), keeps its own tag/attribute allowlist.
  --keep-style   nh3's allowlist plus `style` and `class` on every element, style filtered
                 through a property allowlist (filter_style_properties), closer to Rampart's job.
The cleaner is built once (nh3.Cleaner when available), so per-message set-up is not counted.
Usage: .venv/bin/python3 bench-nh3.py messages.json ROUNDS [--keep-style] [--serve]
       .venv/bin/python3 bench-nh3.py - 1 [--keep-style] --stdin

With --stdin (the whole-process comparison of `bench sanitize`, next to `rampart-dev sanitize`):
sanitizes standard input (UTF-8) as one message, writes the result to standard output and exits.

With --serve the script does not time ROUNDS rounds on its own: it prints {"ready": bytes} and
then, for every line "round" read on standard input, sanitizes the corpus once and prints that
round's seconds on a line of its own (until end of input or "quit"). `rampart-dev bench
sanitize` uses it to interleave nh3's rounds with its own, so that both sides of each pair of
rounds run in the same seconds of the machine's time.
"""
import json
import os
import sys
import time

import nh3

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_serve import serve_rounds  # noqa: E402 (scripts/bench_serve.py)

rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
keep_style = "--keep-style" in sys.argv[3:]
serve = "--serve" in sys.argv[3:]
stdin_mode = "--stdin" in sys.argv[3:]

if keep_style:
    attributes = {tag: set(names) for tag, names in nh3.ALLOWED_ATTRIBUTES.items()}
    attributes["*"] = attributes.get("*", set()) | {"style", "class"}
    for tag in ("table", "td", "th", "tr", "img"):
        attributes[tag] = attributes.get(tag, set()) | {"width", "height", "align", "valign", "bgcolor", "border", "cellpadding", "cellspacing"}
    properties = {"color", "background-color", "background", "font-family", "font-size", "font-weight", "line-height",
                  "margin", "padding", "border", "border-collapse", "text-align", "text-decoration", "display",
                  "width", "max-width", "height", "vertical-align", "border-radius"}
    options = dict(attributes=attributes, filter_style_properties=properties)
else:
    options = {}

if hasattr(nh3, "Cleaner"):
    clean = nh3.Cleaner(**options).clean
else:
    clean = lambda html: nh3.clean(html, **options)

if stdin_mode:
    sys.stdout.buffer.write(clean(sys.stdin.buffer.read().decode("utf-8")).encode("utf-8"))
    sys.stdout.buffer.write(b"\n")
    sys.exit(0)

messages = json.load(open(sys.argv[1], encoding="utf-8"))
total = sum(len(m.encode("utf-8")) for m in messages)

if serve:
    print(json.dumps({"ready": total}), flush=True)
    serve_rounds(clean, messages)
    sys.exit(0)

runs = []
for _ in range(rounds):
    start = time.perf_counter()
    for m in messages:
        clean(m)
    runs.append(time.perf_counter() - start)
runs_sorted = sorted(runs)
median = runs_sorted[len(runs) // 2] if len(runs) % 2 else (runs_sorted[len(runs) // 2 - 1] + runs_sorted[len(runs) // 2]) / 2
print(json.dumps({"bytes": total, "runs": runs, "seconds": median, "mbPerSecond": total / median / 1e6,
                  "configuration": "keep-style" if keep_style else "default",
                  "version": getattr(nh3, "__version__", "?")}))
