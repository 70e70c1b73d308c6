#!/usr/bin/env python3
"""proton-client's client-side SRP login computation, timed, for `rampart-dev bench srp`.

  bench_proton.py MODULUS_B64 SALT_B64 SERVER_EPHEMERAL_B64 PASSWORD ITERATIONS

Times `proton.srp.User(password, N)` + `process_challenge(salt, B)` (bcrypt + x + A + S + proofs,
what `Session.authenticate` computes) and bcrypt alone; prints JSON medians in milliseconds.
"""
import base64
import json
import statistics
import sys
import time

import bcrypt
import proton.srp
from proton.srp.util import bcrypt_b64_encode

modulus, salt, server_ephemeral = (base64.b64decode(arg) for arg in sys.argv[1:4])
password = sys.argv[4]
iterations = int(sys.argv[5])

login, hashing = [], []
for _ in range(iterations):
    start = time.perf_counter()
    user = proton.srp.User(password, modulus)
    proof = user.process_challenge(salt, server_ephemeral, 4)
    login.append((time.perf_counter() - start) * 1000)
    assert proof is not None
    start = time.perf_counter()
    bcrypt.hashpw(password.encode(), b"$2y$10$" + bcrypt_b64_encode((salt + b"proton")[:16])[:22])
    hashing.append((time.perf_counter() - start) * 1000)
print(json.dumps({"login_ms": statistics.median(login), "bcrypt_ms": statistics.median(hashing),
                  "impl": proton.srp.User.__module__}))
