#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora into OUT/<target>/ from the project's own test data.

Nothing here is copied into the repository: the seeds are generated on each run from
../shared/testdata/html5lib-tests (tree-construction inputs), Tests/MailSafetyTests/Resources/
xss-vectors.txt, Tests/MIMETests/Fixtures/*.eml, and small structured inputs built below (each
structured target reads a mode byte first; see the target's header comment).

Usage: Fuzz/make-seeds.py OUT [--html5lib DIR]
"""
import base64
import contextlib
import hashlib
import json
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(out, target, data):
    folder = os.path.join(out, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def html5lib_inputs(folder, limit=600):
    """The #data sections of the tree-construction tests, evenly sampled to `limit`."""
    inputs = []
    tc = os.path.join(folder, "tree-construction")
    if not os.path.isdir(tc):
        return inputs
    for name in sorted(os.listdir(tc)):
        if not name.endswith(".dat"):
            continue
        with open(os.path.join(tc, name), "rb") as f:
            lines = f.read().decode("utf-8", "surrogateescape").split("\n")
        i = 0
        while i < len(lines):
            if lines[i] == "#data":
                j = i + 1
                body = []
                while j < len(lines) and not lines[j].startswith("#errors"):
                    body.append(lines[j])
                    j += 1
                inputs.append("\n".join(body))
                i = j
            else:
                i += 1
    if len(inputs) > limit:
        step = len(inputs) / limit
        inputs = [inputs[int(k * step)] for k in range(limit)]
    return inputs


def xss_vectors():
    path = os.path.join(ROOT, "Tests/MailSafetyTests/Resources/xss-vectors.txt")
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            for k, v in (("{NL}", "\n"), ("{TAB}", "\t"), ("{CR}", "\r"), ("{NUL}", "\0"), ("{FF}", "\f")):
                line = line.replace(k, v)
            out.append(line)
    return out


CSS_SEEDS = [
    "color: red; background: url(https://t.example/p.gif)",
    "background-image: url('cid:part1@fuzz'); position: fixed; z-index: 99999",
    "width: expression(alert(1)); behavior: url(x.htc); -moz-binding: url(x.xml#y)",
    "@import url(https://t.example/x.css); p { color: red }",
    "@media screen and (max-width: 600px) { .a { color: blue !important } }",
    "@font-face { font-family: x; src: url(https://t.example/f.woff) format('woff') }",
    "body > p, html .x, :root #rampart-message a:hover { margin: 0 auto }",
    "background: image-set('https://t.example/a.png' 1x, 'b.png' 2x)",
    "\\65 xpression(alert(1)); color: \\72 ed",
    "a{color:rgb(1 2 3 / 50%);transform:translate(calc(1px + 2em))}",
    "--x: javascript:alert(1); content: 'javascript:'",
    "@supports (display: grid) { div { display: grid; grid-template-columns: repeat(3, minmax(0, 1fr)) } }",
    "p { background: url( \"data:image/png;base64,iVBORw0KGgo=\" ) }",
    "<!-- p { color: red } --> </style><script>alert(1)</script>",
]


def agent_frame(header, secret=b""):
    body = bytes([1]) + struct.pack(">I", len(header)) + header + secret
    return struct.pack(">I", len(body)) + body


def openpgp_seeds(out):
    """OpenPGP inputs by mode (see FuzzOpenPGP.swift): messages, keys and signatures made by gpg
    with the target's fixed key (read from its source), in a throwaway GNUPGHOME (fuzz_gpg). Without
    gpg only the structured modes get seeds."""
    write(out, "openpgp", bytes([6, 0, 24]) + b"a message to edit, 24 b." + bytes([1, 2, 0, 10, 0x10]))
    write(out, "openpgp", bytes([6, 1, 5]) + b"hello" + bytes([2, 1, 0, 40, 0, 3, 0, 0x80, 9]))
    write(out, "openpgp", bytes([7, 9]) + b"signed me" + bytes([1, 0, 0, 5, 1, 0]))
    write(out, "openpgp", bytes([1]) + b"-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEZZZZ\n=AAAA\n-----END PGP PUBLIC KEY BLOCK-----\n")
    with fuzz_gpg() as run:
        if run is None:
            return
        fuzz = "fuzz@rampart.invalid"
        text = b"Hello from gpg.\n- a dashed line\nFrom here\n"
        write(out, "openpgp", bytes([0]) + run("-u", fuzz, "-r", fuzz, "--sign", "--encrypt", "-z", "0", data=text))
        write(out, "openpgp", bytes([0]) + run("--armor", "-u", fuzz, "-r", fuzz, "--sign", "--encrypt", data=text))
        write(out, "openpgp", bytes([0]) + run("-u", "other@fuzz.invalid", "-r", fuzz, "--sign", "--encrypt",
                                               "--compress-algo", "zip", data=text * 20))
        write(out, "openpgp", bytes([0]) + run("-r", fuzz, "--encrypt", "--compress-algo", "bzip2", data=bytes(3000)))
        write(out, "openpgp", bytes([1]) + run("--armor", "--export", fuzz))
        write(out, "openpgp", bytes([1]) + run("--armor", "--export"))
        write(out, "openpgp", bytes([2]) + run("--export", "other@fuzz.invalid"))
        write(out, "openpgp", bytes([3]) + run("-u", fuzz, "--clearsign", data=text))
        signature = run("-u", fuzz, "--detach-sign", data=text)
        write(out, "openpgp", bytes([4]) + struct.pack(">H", len(text)) + text + signature)
        write(out, "openpgp", bytes([5]) + run("-u", fuzz, "--sign", data=text))
        write(out, "openpgp", bytes([5]) + run("-u", fuzz, "--sign", "--armor", "-z", "0", data=text))


@contextlib.contextmanager
def fuzz_gpg():
    """A throwaway GNUPGHOME with fuzz-openpgp's fixed key (and another signer) imported, removed
    when the `with` block ends. Gives run(*args, data=None), which runs gpg and returns its stdout,
    or None without gpg."""
    import re
    import shutil
    import subprocess
    import tempfile

    gpg = shutil.which("gpg")
    if gpg is None:
        yield None
        return
    source = os.path.join(ROOT, "Fuzz/Sources/FuzzSupport/FuzzKey.swift")
    with open(source, encoding="utf-8") as f:
        key = re.search(r"-----BEGIN PGP PRIVATE KEY BLOCK-----.*?-----END PGP PRIVATE KEY BLOCK-----", f.read(), re.S).group(0)
    home = tempfile.mkdtemp(prefix="rfz-")
    base = [gpg, "--homedir", home, "--batch", "--yes", "--no-tty", "--pinentry-mode", "loopback", "--passphrase", "fuzz",
            "--trust-model", "always"]

    def run(*args, data=None):
        return subprocess.run(base + list(args), input=data, capture_output=True, check=True).stdout

    try:
        run("--import", data=key.encode())
        run("--quick-gen-key", "Other Signer <other@fuzz.invalid>", "ed25519", "sign,cert", "never")
        yield run
    finally:
        subprocess.run(["gpgconf", "--homedir", home, "--kill", "all"], capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def rampart_modulus_base64():
    """The base64 of Rampart's SRP modulus (the text its server signs), read from SRPGroup.swift."""
    import re
    with open(os.path.join(ROOT, "Sources/SRP/SRPGroup.swift"), encoding="utf-8") as f:
        return re.search(r'let text = "([A-Za-z0-9+/=]+)"', f.read()).group(1)


def srp_seeds(out):
    """SRP inputs by mode (see FuzzSRP.swift): /auth/info answers whose modulus gpg signs with the
    fixed key (the modulus key of the target), structured edits, request bodies."""
    import base64
    modulus_b64 = rampart_modulus_base64()
    n = base64.b64decode(modulus_b64)
    b64 = lambda b: base64.b64encode(b).decode()
    b = bytes(range(1, 200)) + bytes(57)
    session = "0123456789abcdef0123456789abcdef"
    unsigned = {"Code": 1000, "Modulus": modulus_b64, "ServerEphemeral": b64(b), "Version": 4, "Salt": b64(b"saltsalt10"),
                "SRPSession": session}
    write(out, "srp", bytes([0]) + json.dumps(unsigned).encode())
    with fuzz_gpg() as run:
        if run is not None:
            fuzz = "fuzz@rampart.invalid"
            for signer, text, ephemeral in [(fuzz, modulus_b64, b), (fuzz, modulus_b64, n), (fuzz, modulus_b64, bytes(256)),
                                            ("other@fuzz.invalid", modulus_b64, b), (fuzz, b64(n[:255]), b),
                                            (fuzz, modulus_b64, b[:1])]:
                signed = run("-u", signer, "--clearsign", data=text.encode()).decode()
                answer = dict(unsigned, Modulus=signed, ServerEphemeral=b64(ephemeral))
                write(out, "srp", bytes([0]) + json.dumps(answer).encode())
            answer = dict(unsigned, Modulus=run("-u", fuzz, "--clearsign", data=modulus_b64.encode()).decode(), Version=2)
            write(out, "srp", bytes([0]) + json.dumps(answer).encode())
    # 1: signed text (0 pinned, 1 other key, 2 not a modulus), edits, version, salt, session, B shape.
    for choice in range(3):
        write(out, "srp", bytes([1, choice, 0, 4, 10]) + b"saltsalt10" + bytes([32]) + session.encode() + bytes([6, 0, 0x01, 0x00]) + bytes(range(1, 200)))
    write(out, "srp", bytes([1, 0, 1, 2, 0, 60, 0x41, 4, 10]) + b"saltsalt10" + bytes([3]) + b"abc" + bytes([0, 1]))
    # 2: B shapes (N, 0, N with zero bytes, N + d, N - d - 1, 2^2048 - 1, raw).
    for shape in range(7):
        write(out, "srp", bytes([2, shape, 3, 1]) + (struct.pack(">H", 256) + bytes(range(256)) if shape == 6 else b""))
    # 3: honest exchange edits (A, M1, both, A shaped); 4: M2 and B edits.
    for which in range(4):
        write(out, "srp", bytes([3, 7, which, 1, 0, 0, 0, 0x10]) + bytes([0, 2]))
    write(out, "srp", bytes([3, 9, 0, 1, 3, 0, 255, 1]))
    write(out, "srp", bytes([4, 5, 0, 1, 0, 0, 12, 0x80]))
    write(out, "srp", bytes([4, 5, 1, 1, 0, 0, 40, 0x01]))
    write(out, "srp", bytes([4, 5, 1, 1, 1, 0, 255, 0]))
    # 5: request bodies as the server reads them; 6: an honest body edited.
    auth = {"Username": "Alice", "ClientEphemeral": b64(b), "ClientProof": b64(bytes(256)), "SRPSession": session}
    write(out, "srp", bytes([5, 0]) + json.dumps(auth).encode())
    write(out, "srp", bytes([5, 0]) + json.dumps(dict(auth, ClientEphemeral=b64(n))).encode())
    change = {"ClientEphemeral": b64(b), "ClientProof": b64(bytes(256)), "SRPSession": session, "Salt": b64(b"saltsalt10"),
              "Verifier": b64(b), "EndOtherSessions": True}
    write(out, "srp", bytes([5, 1]) + json.dumps(change).encode())
    write(out, "srp", bytes([6, 0, 1, 0, 0, 30, 0x22]))
    write(out, "srp", bytes([6, 1, 1, 3, 0, 20, 5]))
    # 7: password-hash checks, group shapes, verifiers.
    write(out, "srp", bytes([7, 0, 4, 10]) + b"saltsalt10")
    write(out, "srp", bytes([7, 0, 2, 70]) + bytes(70))
    write(out, "srp", bytes([7, 1]) + n)
    write(out, "srp", bytes([7, 2, 6, 0]) + struct.pack(">H", 256) + b)


def pgpmime_seeds(out):
    """PGP/MIME inputs by mode (see FuzzPGPMIME.swift): real messages made with gpg for the fixed
    key (multipart/encrypted, multipart/signed, inline clear-signed and encrypted), armour blocks,
    edits of the messages the target composes, messages for it to compose."""
    plain = (b"From: Alice <alice@fuzz.invalid>\r\nTo: bob@fuzz.invalid\r\nSubject: plans\r\n"
             b"Date: Wed, 25 Nov 2026 14:00:00 +0000\r\nMIME-Version: 1.0\r\n")
    inner = (b"Content-Type: multipart/mixed; boundary=\"in\"\r\n\r\n--in\r\nContent-Type: text/plain; charset=utf-8\r\n"
             b"Content-Transfer-Encoding: quoted-printable\r\n\r\nHello,=0D\r\nFrom here: caf=C3=A9.\r\n--in\r\n"
             b"Content-Type: application/octet-stream; name=a.bin\r\nContent-Transfer-Encoding: base64\r\n\r\nAAECAw==\r\n--in--\r\n")
    write(out, "pgpmime", bytes([0]) + plain + inner)
    for choice in range(5):
        write(out, "pgpmime", bytes([1, choice, 0]))
        write(out, "pgpmime", bytes([1, choice, 2, 0, 1, 0, 200, 0x20, 3, 2, 0, 9]))
    write(out, "pgpmime", bytes([3, 0]) + bytes([0xC1, 0x0C]) + bytes(range(12)))
    write(out, "pgpmime", bytes([3, 1]) + bytes([0x88, 0x75, 0x04, 0x01, 0x16, 0x08]) + bytes(20))
    write(out, "pgpmime", bytes([4, 0, 5]) + b"hello" + struct.pack(">H", 12) + b"Hi Bob,\nBye.")
    # Found by this target (4b3f682): a signed body ending in DOS end-of-file bytes (0x1A) lost one.
    write(out, "pgpmime", bytes.fromhex("04000568656c6c6f000c486920426f624869201a1a1ae5e5e5e5e5e5e5e5e5e5eee5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e52e2c0a4279652e"))
    # Found by this target in the fresh-clone run of 2d69b4d: the same ending after a body the
    # composer quotes (invalid UTF-8), which the oracle's own parse trimmed as if it were a file.
    write(out, "pgpmime", bytes.fromhex("04000568656c6c6f000c48e5e5e5e5e5e5e5e5e5171a1a1a1a1a1a1ae5e5e5e5e5e5e540e5dee5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e52c2c0a4279652e"))
    write(out, "pgpmime", bytes([4, 3, 3]) + b"enc" + struct.pack(">H", 14) + b"caf\xc3\xa9 \r\nFrom x" + bytes([1, 0, 0, 80, 0x41]))
    with fuzz_gpg() as run:
        if run is None:
            return
        fuzz = "fuzz@rampart.invalid"
        text = b"Meet at 10.\n- a dashed line\nFrom here on\n"
        canonical = inner.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        encrypted = run("--armor", "-u", fuzz, "-r", fuzz, "--sign", "--encrypt", data=canonical)
        boundary = b"=_gpg_boundary"
        write(out, "pgpmime", bytes([0]) + plain + b"Content-Type: multipart/encrypted; protocol=\"application/pgp-encrypted\"; boundary=\""
              + boundary + b"\"\r\n\r\n--" + boundary + b"\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n\r\n--"
              + boundary + b"\r\nContent-Type: application/octet-stream\r\n\r\n" + encrypted + b"\r\n--" + boundary + b"--\r\n")
        signature = run("--armor", "-u", fuzz, "--textmode", "--digest-algo", "SHA256", "--detach-sign", data=canonical)
        write(out, "pgpmime", bytes([0]) + plain + b"Content-Type: multipart/signed; micalg=pgp-sha256; protocol=\"application/pgp-signature\"; boundary=\""
              + boundary + b"\"\r\n\r\n--" + boundary + b"\r\n" + canonical + b"\r\n--" + boundary
              + b"\r\nContent-Type: application/pgp-signature\r\n\r\n" + signature + b"\r\n--" + boundary + b"--\r\n")
        textual = plain + b"Content-Type: text/plain; charset=utf-8\r\n\r\n"
        write(out, "pgpmime", bytes([0]) + textual + run("-u", fuzz, "--clearsign", data=text))
        write(out, "pgpmime", bytes([0]) + textual + run("--armor", "-u", fuzz, "-r", fuzz, "--sign", "--encrypt", data=text))
        write(out, "pgpmime", bytes([0]) + textual + run("--armor", "-u", "other@fuzz.invalid", "--sign", data=text))
        write(out, "pgpmime", bytes([2]) + signature)
        write(out, "pgpmime", bytes([2]) + run("--armor", "--export", fuzz))


def bridge_and_log_seeds(out):
    """IMAP commands (with literals, LITERAL+, IDLE), SMTP sessions (with DATA and dot-stuffing),
    checkpoints and signed notes. The first byte of an IMAP or SMTP seed picks the chunk size."""
    imap = [
        b"a1 CAPABILITY\r\na2 LOGIN alice {2}\r\npw\r\na3 SELECT INBOX\r\n",
        b"a4 UID FETCH 1:* (FLAGS BODY.PEEK[HEADER.FIELDS (SUBJECT FROM)] ENVELOPE BODYSTRUCTURE)\r\n",
        b"a5 APPEND INBOX (\\Seen) {12+}\r\nSubject: x\r\n\r\na6 IDLE\r\nDONE\r\n",
        b"a7 UID SEARCH NOT DELETED SUBJECT \"hi\" SINCE 1-Jan-2026\r\na8 UID MOVE 1,3:5 Archive\r\n",
        b"a9 LOGIN {99999999}\r\n", b"b1 STORE 1 +FLAGS (\\Deleted)\r\nb2 UID EXPUNGE 1\r\nb3 LOGOUT\r\n",
        b"c1 ENABLE QRESYNC\r\nc2 SELECT INBOX (QRESYNC (67890007 20050715194045000 41,43:211,214:541 (1,10,100 1,7,13)))\r\n"
        b"c3 UID FETCH 300:500 (FLAGS) (CHANGEDSINCE 12345 VANISHED)\r\nc4 EXAMINE Sent (CONDSTORE QRESYNC (1 2))\r\n",
    ]
    for i, data in enumerate(imap):
        write(out, "imap", bytes([i * 3]) + data)
    smtp = [
        b"EHLO client\r\nAUTH PLAIN AGFsaWNlAHB3\r\nMAIL FROM:<alice@rampart.test> SIZE=100\r\nRCPT TO:<bob@example.org>\r\nDATA\r\n",
        b"EHLO c\r\nMAIL FROM:<a@b>\r\nRCPT TO:<c@d>\r\nDATA\r\nSubject: hi\r\n\r\n..starts with a dot\r\n.\r\nQUIT\r\n",
        b"EHLO c\r\nSTARTTLS\r\n", b"HELO x\r\n" + b"A" * 600 + b"\r\nNOOP\r\n",
    ]
    for i, data in enumerate(smtp):
        write(out, "smtp", bytes([i * 5]) + data)
    root = base64.b64encode(hashlib.sha256(b"root").digest()).decode()
    checkpoint = "rampart.test/keys\n37\n" + root + "\n"
    write(out, "tlog", checkpoint)
    write(out, "tlog", checkpoint + "\n\u2014 rampart.test/keys " + base64.b64encode(bytes(68)).decode() + "\n")
    write(out, "tlog", "rampart.test/keys+00000000+" + base64.b64encode(bytes([1]) + bytes(32)).decode())
    write(out, "tlog", bytes([0, 37, 0, 13]) + hashlib.sha256(b"a").digest() + hashlib.sha256(b"b").digest())
    leaf = "rampart-key-log/v1\nindex " + hashlib.sha256(b"ann").hexdigest() + "\ntime 1800000000\n"
    write(out, "tlog", leaf)
    write(out, "tlog", leaf + "key " + hashlib.sha256(b"k1").hexdigest() + "\nkey " + hashlib.sha256(b"k2").hexdigest() + "\n")


def signup_seeds(out):
    """Sign-up inputs by mode (see FuzzSignup.swift): usernames and addresses (look-alike letters of
    other scripts, full-width and zero-width characters, reserved names, case), JSON bodies, edits of
    the real request the target makes, fields replaced."""
    names = ["dana", "Dana.Fuzz", "a_b-c.d", "\u0430lice", "dana\u200b", "\uff44\uff41\uff4e\uff41", "admin", "Postmaster",
             "ab", "x" * 41, ".dana", "dana-", "d\u0061na", "DANA", "i\u0307nfo", "\u212aelvin", "stra\u00dfe"]
    for name in names:
        write(out, "signup", bytes([0]) + name.encode())
    for address in ["dana@rampart.test", "Dana@RAMPART.TEST", "dana@example.org", "admin@rampart.test", "d@na@rampart.test",
                    "\u0430@rampart.test", "@rampart.test", "dana@", "dana@rampart.test.", "a" * 65 + "@rampart.test"]:
        write(out, "signup", bytes([1]) + address.encode())
    body = {"Username": "dana", "DisplayName": "Dana", "Address": "dana@rampart.test", "Version": 4, "Salt": "AAAAAAAAAAAAAA==",
            "Verifier": base64.b64encode(bytes(255) + b"\x02").decode(), "KeySalt": base64.b64encode(bytes(16)).decode(),
            "PublicKey": "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----\n", "PrivateKey": "x",
            "AddressKey": {"Address": "dana@rampart.test", "PublicKey": "", "PrivateKey": "", "Token": "-----BEGIN PGP MESSAGE-----\n",
                           "Signature": "-----BEGIN PGP SIGNATURE-----\n"}}
    write(out, "signup", bytes([2]) + json.dumps(body).encode())
    write(out, "signup", bytes([2]) + b'{"Username":"\\u0430lice"}')
    for operation in range(5):
        write(out, "signup", bytes([3, operation, 0, 40, 8]) + b"\x01\x02\x03")
        write(out, "signup", bytes([3, operation, 2, 0, 60]) + b"ZZ")
    for field in range(12):
        write(out, "signup", bytes([4, field]) + b"dana@rampart.test")
    for field in range(5):
        write(out, "signup", bytes([5, field]) + b"-----BEGIN PGP MESSAGE-----\n\nwcBMA\n-----END PGP MESSAGE-----\n")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    html5lib = os.environ.get("HTML5LIB_TESTS", os.path.join(ROOT, "..", "shared", "testdata", "html5lib-tests"))
    if "--html5lib" in sys.argv:
        html5lib = sys.argv[sys.argv.index("--html5lib") + 1]

    trees = html5lib_inputs(html5lib)
    vectors = xss_vectors()

    # HTML5: html5lib inputs and the XSS vectors, as bytes.
    for text in trees + vectors:
        write(out, "html5", text)
    write(out, "html5", b"\xef\xbb\xbf<meta charset=windows-1252><p>caf\xe9")

    # Sanitizer: mode byte (remote block/allow, cid attachment, app scheme) + HTML.
    for i, text in enumerate(vectors + trees[::4]):
        write(out, "sanitizer", bytes([i % 8]) + text.encode("utf-8", "surrogateescape"))
    write(out, "sanitizer", b"\x02<img src=cid:part1@fuzz><a href=https://x.example/?utm_source=a>l</a>")

    # CSS: mode byte + CSS text (hand seeds and the CSS in the XSS vectors).
    css = list(CSS_SEEDS)
    for v in vectors:
        for marker in ("style=\"", "style='"):
            if marker in v:
                css.append(v.split(marker, 1)[1].split(marker[-1], 1)[0])
        if "<style>" in v.lower():
            css.append(v.lower().split("<style>", 1)[1].split("</style", 1)[0])
    for i, text in enumerate(css):
        write(out, "css", bytes([i % 8]) + text.encode("utf-8", "surrogateescape"))

    # MIME: the parser's fixtures; mbox: the fixtures as mbox entries (with quoting cases).
    fixtures = os.path.join(ROOT, "Tests/MIMETests/Fixtures")
    emls = []
    for name in sorted(os.listdir(fixtures)):
        with open(os.path.join(fixtures, name), "rb") as f:
            emls.append(f.read())
    for eml in emls:
        write(out, "mime", eml)
    for i in range(0, len(emls), 3):
        box = b""
        for eml in emls[i:i + 3]:
            box += b"From sender@example.com Thu Jan  1 00:00:00 1970\n" + eml.replace(b"\nFrom ", b"\n>From ") + b"\n\n"
        write(out, "mbox", box)
    write(out, "mbox", b"From a\n>From b\n>>From c\n\nFrom d\r\nSubject: x\r\n\r\nbody\r\n\r\n")

    # Push: raw bodies (a header with a P-256 key id), forged record layouts, round trips.
    key_id = bytes([4]) + bytes(range(64))
    write(out, "push", bytes([0]) + bytes(16) + struct.pack(">I", 4096) + bytes([65]) + key_id + bytes(40))
    write(out, "push", bytes([1]) + bytes(range(16)) + bytes([10, 0]) + b"hello\x02")
    write(out, "push", bytes([1]) + bytes(range(16)) + bytes([2, 0]) + b"ab\x01\x00\x00cd\x02")
    write(out, "push", bytes([2, 0, 30, 4]) + b"a notification body")

    # Vault: raw envelope headers; sealed-then-edited layouts.
    header = b"RVA1" + bytes([1, 0, 0, 0]) + struct.pack(">I", 16) + struct.pack(">Q", 40)
    write(out, "vault", bytes([0]) + header + bytes(40 + 3 * 28))
    write(out, "vault", bytes([0]) + b"RVA1" + bytes([1, 0, 0, 0]) + struct.pack(">I", 1) + struct.pack(">Q", 2**63 - 2))
    write(out, "vault", bytes([1, 16, 20]) + b"twenty bytes of text" + bytes([0]))
    write(out, "vault", bytes([3, 7, 30]) + bytes(range(30)) + bytes([1, 0, 0, 5, 0x80]))

    # Sealed values: raw envelopes and [String] contents; seal-then-edit.
    write(out, "sealed", bytes([0, 1, 1]) + bytes(8) + bytes(12 + 16))
    write(out, "sealed", bytes([0]) + struct.pack(">I", 2) + struct.pack(">I", 1) + b"a" + struct.pack(">I", 2) + b"bc")
    write(out, "sealed", bytes([1, 2, 3]) + b"abc" + bytes([1]) + b"d" + bytes([1, 0, 0, 9, 0x40]))
    write(out, "sealed", bytes([3, 1, 2]) + b"xy")

    # Keychain: raw item files and edits of the real ones.
    item = b"RKCI" + bytes([1, 2, 1, 0]) + bytes(32) + struct.pack(">H", 5) + bytes([0, 0, 1]) + b"a" + bytes([0, 0]) + bytes(12 + 16)
    write(out, "keychain", bytes([0]) + item)
    write(out, "keychain", bytes([1, 1, 0, 0, 45, 0xFF]))
    write(out, "keychain", bytes([3, 1, 1, 0, 10]))
    write(out, "keychain", bytes([1]))

    # Agent frames: requests and responses as the agent and its client write them.
    for header, secret in [
        (b'{"op":"ping"}', b""),
        (b'{"op":"unlock","user":"alice"}', b"123456"),
        (b'{"op":"status","user":"bob"}', b""),
        (b'{"ok":false,"error":{"code":"agent.wrongPIN","kind":"unauthorized","message":"x","attemptsLeft":2}}', b""),
        (b'{"ok":true,"status":{"userID":"a","hasMainKey":true,"unlocked":true,"activeProtectors":[],"failedAttempts":0,"maxFailedAttempts":10,"autolock":"never","keychainBackend":"file","agentProcessID":1}}', b""),
    ]:
        write(out, "agentwire", agent_frame(header, secret))
    write(out, "agentwire", agent_frame(b'{"op":"mainKey","user":"a"}', bytes(32)) + agent_frame(b'{"op":"lock"}'))

    # API: JSON request bodies by mode (see FuzzAPI.swift), binary pieces.
    requests = [
        {"username": "alice", "password": "correct horse"},
        {"refreshToken": "rrt_abc"},
        {"add": ["inbox"], "remove": ["unread"]},
        {"name": "Receipts"},
        {"to": ["bob@example.com"], "subject": "Hi", "html": "<p>x</p>",
         "attachments": [{"name": "a.txt", "mimeType": "text/plain", "data": "aGk=", "contentId": None}], "mime": "U3ViamVjdDogaGkNCg0KaGk="},
        {"id": "mi_" + "0" * 32, "time": 0, "labelIds": ["inbox"], "unread": True, "size": 10, "sealedBody": "Uk1IUA==",
         "sealedOriginal": "Uk1IUA==", "attachments": [{"id": "ai_" + "1" * 32, "name": "a", "mimeType": "x/y", "size": 1, "contentId": None, "sealedData": ""}]},
        {"ids": ["mi_" + "a" * 32]},
        {"sealedName": "AAAA", "parentId": None, "blockIds": ["b1"], "size": 3, "isFolder": False},
    ]
    for mode, body in enumerate(requests):
        write(out, "api", bytes([mode]) + json.dumps(body).encode())
    write(out, "api", bytes([8]) + b"RMHP\x01" + bytes(32 + 16 + 4))
    write(out, "api", bytes([9]) + b"RMOR\x01\x02" + bytes(16) + b"From x\n")
    write(out, "api", bytes([10]) + b"sealed body")
    write(out, "api", bytes([11]) + emls[0])

    # OpenPGP: gpg-made messages, keys and signatures for the fixed key of fuzz-openpgp.
    openpgp_seeds(out)

    # SRP: /auth/info answers (modulus signed by gpg with the fixed key), edits, request bodies.
    srp_seeds(out)

    # PGP/MIME: gpg-made PGP/MIME and inline messages for the fixed key, armour, compose inputs.
    pgpmime_seeds(out)

    # The bridge's protocols and the key-transparency log's texts.
    bridge_and_log_seeds(out)
    signup_seeds(out)


if __name__ == "__main__":
    main()
