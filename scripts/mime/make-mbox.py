#!/usr/bin/env python3
"""Generates an mbox for `rampart-dev bench mime`.

Usage: make-mbox.py OUT [--messages N] [--size-mb M] [--seed S]

Writes N messages (default 10000) of about M MiB in total (default 200): a mix of plain text,
text+HTML alternatives, inline cid images (multipart/related), attachments (PDF-like, images,
CSV, zip), quoted-printable and base64 bodies, several charsets, forwarded message/rfc822 parts.
Bodies contain "From " lines, so the file exercises mboxrd quoting (`>From `).
"""
import argparse
import datetime
import random
from email import policy
from email.message import EmailMessage
from email.utils import format_datetime

ap = argparse.ArgumentParser()
ap.add_argument("out")
ap.add_argument("--messages", type=int, default=10000)
ap.add_argument("--size-mb", type=float, default=200)
ap.add_argument("--seed", type=int, default=1)
args = ap.parse_args()
rng = random.Random(args.seed)
target = int(args.size_mb * 1024 * 1024)

WORDS = ("lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut "
         "labore et dolore magna aliqua Grüße café naïve Привет 你好 From").split()
CHARSETS = ["utf-8", "iso-8859-1", "utf-8", "windows-1252", "utf-8", "koi8-r"]


def words(n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def paragraph(nbytes):
    lines = []
    size = 0
    while size < nbytes:
        line = words(rng.randint(6, 14))
        if rng.random() < 0.05:
            line = "From " + line
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines) + "\n"


def rand_bytes(n):
    return rng.randbytes(n)


def make(i, budget):
    m = EmailMessage()
    m["From"] = f"Sender {i % 97} <sender{i % 97}@example.org>"
    m["To"] = f"rcpt{i % 13}@example.com, \"Team, Ops\" <ops@example.com>"
    if i % 3 == 0:
        m["Cc"] = "=?utf-8?q?J=C3=BCrgen?= <j@example.de>"
    m["Subject"] = f"Message {i}: " + words(rng.randint(2, 8))
    m["Date"] = format_datetime(datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
                                + datetime.timedelta(minutes=i))
    m["Message-ID"] = f"<bench.{i}@example.org>"
    kind = i % 6
    text_size = rng.randint(budget // 10, budget // 5)
    text = paragraph(text_size)
    cs = CHARSETS[i % len(CHARSETS)]
    if cs == "koi8-r":
        text = text.replace("Grüße", "Grusse").replace("café", "cafe").replace("naïve", "naive").replace("你好", "ni hao")
    elif cs != "utf-8":
        text = text.replace("Привет", "Privet").replace("你好", "ni hao")
    m.set_content(text, charset=cs, cte="quoted-printable" if i % 2 else "base64")
    if kind in (1, 2, 4):
        m.add_alternative("<html><body>" + "".join(f"<p>{l}</p>" for l in text.splitlines()[:50]) +
                          (f'<img src="cid:img{i}@example.org">' if kind == 2 else "") + "</body></html>\n",
                          subtype="html")
        if kind == 2:
            m.get_payload()[1].add_related(rand_bytes(rng.randint(500, 3000)), maintype="image", subtype="png",
                                           cid=f"<img{i}@example.org>", filename="logo.png")
    # Four of six kinds carry attachments (base64: 4/3 larger); they make up the budget.
    remaining = int((budget - text_size * 2.6) * 6 / 4 / 1.37)
    if kind in (0, 2, 3, 5) and remaining > 500:
        n = rng.randint(1, 3)
        for k in range(n):
            size = max(100, int(remaining / n))
            t = rng.choice([("application", "pdf", "report.pdf"), ("image", "jpeg", "photo.jpg"),
                            ("application", "zip", "archive.zip")])
            m.add_attachment(rand_bytes(size), maintype=t[0], subtype=t[1], filename=f"{k}-{t[2]}")
        if kind == 3:
            m.add_attachment("a,b,c\n" + "1,2,3\n" * 50, subtype="csv", filename="data.csv")
    if kind == 5:
        inner = EmailMessage()
        inner["Subject"] = "forwarded"
        inner["From"] = "inner@example.org"
        inner.set_content(paragraph(500))
        m.add_attachment(inner)
    return m.as_bytes(policy=policy.default)


with open(args.out, "wb") as f:
    written = 0
    for i in range(args.messages):
        budget = max(2000, (target - written) // (args.messages - i))
        data = make(i, budget)
        written += len(data) + 60
        f.write(b"From bench@example.org Mon Jan  1 00:00:00 2024\n")
        for line in data.splitlines(keepends=True):
            stripped = line.lstrip(b">")
            if stripped.startswith(b"From "):
                line = b">" + line
            f.write(line)
        if not data.endswith(b"\n"):
            f.write(b"\n")
        f.write(b"\n")
