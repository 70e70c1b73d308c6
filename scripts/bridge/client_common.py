"""What the real-client scripts of the IMAP and SMTP server tests share: the loopback host, the
socket timeout, the check, and the command line (MODE PORT [CAFILE]). `main` also says on stderr
how long the run took inside the script and which steps (time up to each check) were slowest,
so a slow run in the test shows whether the time went to the server's answers or elsewhere."""
import sys
import time

_STARTED = time.monotonic()
_steps = []  # (seconds since the previous check, check number)

HOST = "127.0.0.1"
TIMEOUT = 60  # generous: the full test suite loads both cores (chromium, servers, peers)


def check(condition, what):
    now = time.monotonic()
    _steps.append((now - (_STARTED + sum(step for step, _ in _steps)), len(_steps) + 1))
    if not condition:
        raise AssertionError(what)


def timing(mode):
    """One line: the script's time from its imports to now, the number of checks, the slowest steps."""
    total = time.monotonic() - _STARTED
    slowest = ", ".join(f"check {n} {step:.2f} s" for step, n in sorted(_steps, reverse=True)[:3])
    return f"timing {mode}: {total:.2f} s in the script, {len(_steps)} checks; slowest: {slowest or 'none'}"


def main(modes):
    """Runs MODE against PORT (modes: MODE -> function of the port, and of CAFILE when given) and
    prints "ok MODE"; a failed check raises."""
    mode, port = sys.argv[1], int(sys.argv[2])
    try:
        modes[mode](port, *sys.argv[3:])
    finally:
        print(timing(mode), file=sys.stderr)
    print("ok", mode)
