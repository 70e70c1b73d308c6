"""The served-baseline protocol of `rampart-dev bench` (scripts/html5/bench-parsers.py,
scripts/mailsafety/bench-nh3.py): once the baseline has printed its ready line, every line
"round" read on standard input runs one timed pass over the inputs and prints that pass's seconds
on a line of its own; any other line, or the end of input, stops."""
import sys
import time


def serve_rounds(work, inputs):
    """Runs `work` on every item of `inputs` once per "round" line of standard input, printing
    each pass's seconds."""
    for line in sys.stdin:
        if line.strip() != "round":
            break
        start = time.perf_counter()
        for item in inputs:
            work(item)
        print(repr(time.perf_counter() - start), flush=True)
