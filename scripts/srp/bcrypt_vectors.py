#!/usr/bin/env python3
"""Reference bcrypt hashes for Rampart's BcryptTests, computed with Python's `bcrypt` package
(bcrypt<5, as proton-client uses it) and Proton's own bcrypt-base64 salt encoding
(`proton.srp.util.bcrypt_b64_encode`).

Input on stdin, one vector a line: `<password hex> <salt hex (16 bytes)> <cost>`.
Output, one line each: the 60-character `$2y$` hash string.
Run: .venv/bin/python scripts/srp/bcrypt_vectors.py < vectors.txt
"""
import sys

import bcrypt
from proton.srp.util import bcrypt_b64_encode

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    password_hex, salt_hex, cost = line.split()
    password = bytes.fromhex(password_hex)
    salt = bytes.fromhex(salt_hex)
    setting = b"$2y$%02d$" % int(cost) + bcrypt_b64_encode(salt)[:22]
    print(bcrypt.hashpw(password, setting).decode())
