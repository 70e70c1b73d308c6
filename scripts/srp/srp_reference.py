#!/usr/bin/env python3
"""proton-client's SRP (`proton.srp`) as the reference for Rampart's SRPTests.

Reads one JSON request a line on stdin, writes one JSON answer a line on stdout. Binary values are
base64 (standard alphabet); numbers little-endian, as proton.srp takes and returns them.

  {"op": "client", "impl": "default"|"py"|"ct", "modulus", "password", "salt", "B", "a"?}
      -> {"A", "M1", "M2", "impl"}       (a: 32 bytes; omitted = random, as a real login)
  {"op": "verifier", "modulus", "password", "salt"}   -> {"verifier"}
  {"op": "hash", "modulus", "password", "salt"}       -> {"x"}        (hash_password version 4)

"default" is `proton.srp.User` (the ctypes/OpenSSL implementation when libssl loads, else the
pure-Python one), exactly what proton-client's `Session.authenticate` uses.
Run: .venv/bin/python scripts/srp/srp_reference.py   (proton-client==0.5.1, bcrypt<5: scripts/deps/srp.pip)
"""
import base64
import json
import sys

import proton.srp
from proton.srp import _pysrp
from proton.srp.pmhash import pmhash
from proton.srp.util import hash_password

IMPLS = {"default": proton.srp.User, "py": _pysrp.User}
try:
    from proton.srp import _ctsrp
    IMPLS["ct"] = _ctsrp.User
except (ImportError, OSError):
    pass


def b64(data):
    return base64.b64encode(data).decode()


def unb64(text):
    return base64.b64decode(text)


for line in sys.stdin:
    if not line.strip():
        continue
    request = json.loads(line)
    op = request["op"]
    modulus = unb64(request["modulus"])
    salt = unb64(request["salt"])
    password = request["password"]
    if op == "client":
        cls = IMPLS[request.get("impl", "default")]
        bytes_a = unb64(request["a"]) if request.get("a") else None
        user = cls(password, modulus, bytes_a=bytes_a)
        proof = user.process_challenge(salt, unb64(request["B"]), 4)
        if proof is None:
            answer = {"error": "process_challenge refused the server ephemeral"}
        else:
            answer = {"A": b64(user.get_challenge()), "M1": b64(proof), "M2": b64(user.expected_server_proof),
                      "impl": cls.__module__}
    elif op == "verifier":
        user = proton.srp.User(password, modulus)
        _, verifier = user.compute_v(salt, 4)
        answer = {"verifier": b64(verifier)}
    elif op == "hash":
        answer = {"x": b64(hash_password(pmhash, password.encode(), salt, modulus, 4))}
    else:
        answer = {"error": "unknown op " + op}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
