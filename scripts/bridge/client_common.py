"""What the real-client scripts of the IMAP and SMTP server tests share: the loopback host, the
socket timeout, the check, and the command line (MODE PORT [CAFILE])."""
import sys

HOST = "127.0.0.1"
TIMEOUT = 60  # generous: the full test suite loads both cores (chromium, servers, peers)


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def main(modes):
    """Runs MODE against PORT (modes: MODE -> function of the port, and of CAFILE when given) and
    prints "ok MODE"; a failed check raises."""
    mode, port = sys.argv[1], int(sys.argv[2])
    modes[mode](port, *sys.argv[3:])
    print("ok", mode)
