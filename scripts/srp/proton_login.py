#!/usr/bin/env python3
"""Logs in to a Rampart server with proton-client's own code: `proton.api.Session.authenticate`
(POST /auth/info, gpg-verified signed modulus, `proton.srp.User`, POST /auth, server proof check),
unchanged except for the two constants that name Proton's modulus key, which point at the
server's modulus key instead (the one its server.json pins).

  proton_login.py --url https://127.0.0.1:PORT --ca CA.pem --modulus-key KEY.asc --fingerprint HEX
                  --username NAME --password PW [--count N] [--expect-failure]

Prints one JSON line: {"logins": ok, "failures": [...], "shortA": n, "shortS": n, "shortB": n}
(short = a value whose little-endian encoding proton.srp sent or hashed without its high zero byte).
Needs gpg on the PATH; uses a private GNUPGHOME. Exit status 0 when every login did what was expected.
"""
import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

parser = argparse.ArgumentParser()
for name in ("url", "ca", "modulus-key", "fingerprint", "username", "password"):
    parser.add_argument("--" + name, required=True)
parser.add_argument("--count", type=int, default=1)
parser.add_argument("--expect-failure", action="store_true")
parser.add_argument("--short-a-every", type=int, default=0,
                    help="every Nth login draws its secret a until A has a zero high byte (sent 255 bytes long)")
args = parser.parse_args()

home = tempfile.mkdtemp(prefix="rampart-proton-gpg-")
os.chmod(home, 0o700)
os.environ["GNUPGHOME"] = home


@atexit.register
def _remove_home():
    # python-gnupg starts a gpg-agent for the home; without this each run left one running.
    subprocess.run(["gpgconf", "--homedir", home, "--kill", "all"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shutil.rmtree(home, ignore_errors=True)

import proton.api  # noqa: E402
from proton.api import ProtonError, Session  # noqa: E402
from proton.exceptions import ConnectionTimeOutError  # noqa: E402
from proton.srp import User  # noqa: E402

with open(args.modulus_key) as handle:
    proton.api.SRP_MODULUS_KEY = handle.read()
proton.api.SRP_MODULUS_KEY_FINGERPRINT = args.fingerprint.lower()

stats = {"shortA": 0, "shortS": 0, "shortB": 0}


login_index = [0]


def short_secret(modulus):
    """A 32-byte secret a whose A = 2^a mod N has a zero high byte (about 1 in 200 draws)."""
    n = int.from_bytes(modulus, "little")
    while True:
        a = os.urandom(32)
        if pow(2, int.from_bytes(a, "little"), n).bit_length() <= 2040:
            return a


class CountingUser(User):
    """proton.srp.User, counting the encodings it used (and, with --short-a-every, choosing a)."""

    def __init__(self, password, n_bin, *rest, **options):
        if args.short_a_every and login_index[0] % args.short_a_every == 0 and "bytes_a" not in options:
            options["bytes_a"] = short_secret(n_bin)
        super().__init__(password, n_bin, *rest, **options)

    def process_challenge(self, bytes_s, bytes_server_challenge, version=4):
        proof = super().process_challenge(bytes_s, bytes_server_challenge, version)
        if len(self.get_challenge()) < 256:
            stats["shortA"] += 1
        if self.K is not None and len(self.K) < 256:
            stats["shortS"] += 1
        if len(bytes_server_challenge.rstrip(b"\0")) < 256:
            stats["shortB"] += 1
        return proof


proton.api.PmsrpUser = CountingUser

# A generous read timeout: under a loaded CI machine (2 cores running the whole suite) a first
# answer has taken over 30 s, proton-client's default. Only transport timeouts are retried
# (once, counted in "retries"); every SRP answer is taken as it comes.
session = Session(args.url, TLSPinning=False, timeout=(15, 120))
# Trust exactly the server's own CA (requests would otherwise take REQUESTS_CA_BUNDLE from the
# environment over this setting).
session.s.trust_env = False
session.s.verify = args.ca
ok = 0
retries = 0
failures = []
for index in range(args.count):
    login_index[0] = index
    session._session_data = {}
    session.s.headers.pop("Authorization", None)
    session.s.headers.pop("x-pm-uid", None)
    try:
        try:
            scope = session.authenticate(args.username, args.password)
        except ConnectionTimeOutError:
            retries += 1
            session._session_data = {}
            scope = session.authenticate(args.username, args.password)
        if not session.UID or not session.AccessToken or "full" not in scope:
            failures.append({"index": index, "error": "no session in the answer"})
        else:
            ok += 1
    except ProtonError as error:
        failures.append({"index": index, "code": error.code, "error": error.error})
    except Exception as error:  # noqa: BLE001 - reported to the Swift test
        failures.append({"index": index, "error": "%s: %s" % (type(error).__name__, error)})

print(json.dumps({"logins": ok, "failures": failures[:5], "failureCount": len(failures), "retries": retries, **stats}))
if args.expect_failure:
    sys.exit(0 if ok == 0 else 1)
sys.exit(0 if ok == args.count else 1)
