#!/usr/bin/env python3
"""Generates the differential-test corpus with Python's email package.

Usage: make-corpus.py OUTDIR   (writes NNN-name.eml files; deterministic)

Covers: every transfer encoding (7bit, 8bit, quoted-printable, base64, binary-ish 8bit), every
charset the MIME library promises (UTF-8, US-ASCII, ISO-8859-1..16, Windows-1250..1258, KOI8-R,
KOI8-U, ISO-2022-JP, GB2312, GBK, GB18030, Big5, Shift_JIS, EUC-JP, EUC-KR), RFC 2047 headers,
RFC 2231 file names, nested multiparts, message/rfc822, multipart/related + alternative + mixed,
inline cid images, CRLF and LF line endings.
"""
import os
import sys
import random
from email import policy, encoders
from email.message import EmailMessage, Message
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.mime.base import MIMEBase
from email.mime.message import MIMEMessage
from email.header import Header
from email.utils import format_datetime, formataddr
import datetime
import unicodedata

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
rng = random.Random(20261125)
counter = [0]


def write(name, msg, crlf=False):
    counter[0] += 1
    pol = policy.SMTP if crlf else policy.default
    data = msg.as_bytes(policy=pol) if isinstance(msg, EmailMessage) else msg.as_bytes(policy=pol)
    with open(os.path.join(OUT, f"{counter[0]:03d}-{name}.eml"), "wb") as f:
        f.write(data)


def base_headers(msg, i, subject="Test message"):
    msg["From"] = formataddr(("Alice Example", f"alice{i}@example.org"))
    msg["To"] = f"Bob <bob@example.com>, carol{i}@example.net"
    msg["Subject"] = subject
    dt = datetime.datetime(2020 + i % 6, 1 + i % 12, 1 + i % 28, i % 24, (i * 7) % 60, (i * 13) % 60,
                           tzinfo=datetime.timezone(datetime.timedelta(hours=(i % 25) - 12)))
    msg["Date"] = format_datetime(dt)
    msg["Message-ID"] = f"<msg{i}.{rng.randrange(10**9)}@example.org>"


SAMPLES = {
    "utf-8": "Grüße, Καλημέρα, Привет, 你好, こんにちは, 안녕하세요 — €",
    "us-ascii": "Plain ASCII text, nothing special here.",
    "iso-8859-1": "Café au lait, naïve façade, ¡Olé! ÿ",
    "iso-8859-2": "Zażółć gęślą jaźń, Dobrý den, Čeština",
    "iso-8859-3": "Ħaġar Qim, Ġgantija, ċ ħ ġ ż",
    "iso-8859-4": "Ąčę ėį šųū ž, Latvian ļ ņ ŗ",
    "iso-8859-5": "Съешь же ещё этих мягких французских булок",
    "iso-8859-6": "مرحبا بالعالم",
    "iso-8859-7": "Καλημέρα κόσμε, Ελληνικά",
    "iso-8859-8": "שלום עולם",
    "iso-8859-9": "Türkçe: ğüşıöç İĞÜŞÖÇ",
    "iso-8859-10": "Sámi: ŋ ŧ đ ā ē ī",
    "iso-8859-11": "สวัสดีชาวโลก",
    "iso-8859-13": "Lietuvių kalba: ąčęėįšųūž, Latviešu: ļņ",
    "iso-8859-14": "Cymraeg: ŵ ŷ ẁ ẃ ẅ ỳ",
    "iso-8859-15": "Euro € œ Œ š Š ž Ž Ÿ",
    "iso-8859-16": "Română: ș ț ă â î Ș Ț",
    "windows-1250": "Příliš žluťoučký kůň úpěl ďábelské ódy",
    "windows-1251": "Широкая электрификация южных губерний",
    "windows-1252": "“Smart quotes” — and … ellipsis, € sign",
    "windows-1253": "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία",
    "windows-1254": "Pijamalı hasta yağız şoföre çabucak güvendi",
    "windows-1255": "דג סקרן שט בים מאוכזב",
    "windows-1256": "نص حكيم له سر قاطع",
    "windows-1257": "Įlinkdama fechtuotojo špaga",
    "windows-1258": "Ti\u00ea\u0301ng Vi\u00ea\u0323t co\u0301 d\u00e2\u0301u, \u0111\u01b0\u01a1\u0300ng",
    "koi8-r": "Съешь же ещё этих мягких французских булок, да выпей чаю",
    "koi8-u": "Чуєш їх, доцю, га? Кумедна ж ти, прощайся без ґольфів!",
    "iso-2022-jp": "こんにちは世界、日本語のメールです。",
    "gb2312": "你好，世界。这是中文邮件。",
    "gbk": "你好，世界。這是中文郵件（繁體字 GBK）。",
    "gb18030": "你好，世界。𠀀 GB18030 四字节。",
    "big5": "你好，世界。這是繁體中文郵件。",
    "shift_jis": "こんにちは世界、シフトJISのメールです。",
    "euc-jp": "こんにちは世界、EUC-JPのメールです。",
    "euc-kr": "안녕하세요 세계, 한국어 메일입니다.",
}

i = 0
# 1. Every charset x a transfer encoding, plain text single part.
for cs, text in SAMPLES.items():
    for cte in (["7bit"] if cs in ("us-ascii", "iso-2022-jp") else ["8bit", "quoted-printable", "base64"]):
        i += 1
        body = (text + "\nSecond line with some more words.\n") * 3
        msg = Message(policy=policy.compat32)
        msg["MIME-Version"] = "1.0"
        msg["Content-Type"] = f'text/plain; charset="{cs}"'
        msg["Content-Transfer-Encoding"] = cte
        try:
            raw = body.encode(cs)
        except UnicodeEncodeError:
            body = unicodedata.normalize("NFD", body)
            raw = body.encode(cs)
        if cte == "base64":
            payload = encoders._bencode(raw).decode("ascii")
        elif cte == "quoted-printable":
            import quopri
            payload = quopri.encodestring(raw).decode("ascii")
        else:
            payload = raw.decode("ascii", "surrogateescape")
        msg.set_payload(payload)
        out = EmailMessage(policy=policy.default)
        base_headers(out, i, subject=str(Header(f"{cs}: " + text[:20], "utf-8")))
        for k, v in msg.items():
            out[k] = v
        out.set_payload(payload)
        write(f"charset-{cs}-{cte}", out, crlf=(i % 3 == 0))

# 2. RFC 2047 subjects in several charsets and both encodings.
for cs in ["utf-8", "iso-8859-1", "iso-8859-2", "koi8-r", "iso-2022-jp", "gb2312", "big5", "euc-kr", "shift_jis", "windows-1251"]:
    for enc in ("b", "q"):
        i += 1
        text = SAMPLES[cs][:30]
        try:
            text.encode(cs)
        except UnicodeEncodeError:
            text = unicodedata.normalize("NFD", text)
        m = EmailMessage()
        base_headers(m, i)
        del m["Subject"]
        h = Header(text, cs)
        raw = h.encode()
        if enc == "q":
            from email import charset as _c
            c = _c.Charset(cs)
            c.header_encoding = _c.QP
            raw = Header(text, c).encode()
        del m["From"]
        m["Subject"] = raw.replace("\n", "")
        m["From"] = Header(SAMPLES["utf-8"][:6], "utf-8").encode().replace("\n", "") + " <x@example.org>"
        m.set_content("Subject test.\n")
        write(f"rfc2047-{cs}-{enc}", m)

# 3. multipart/alternative, related, mixed combos with attachments.
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + bytes(range(256))


def rich(i, *, alt=True, related=True, attach=True, crlf=False, name_cs=None, nested_msg=False, qp=False):
    m = EmailMessage()
    base_headers(m, i, subject=f"Rich {i}: Grüße 📎")
    m["Cc"] = '"Doe, Jane" <jane@example.com>, =?utf-8?q?J=C3=BCrgen?= <j@example.de>'
    text = f"Hello {i},\nthis is the plain text part. Grüße!\n" + ("long line " * 30) + "\n"
    html = f"<html><body><p>Hello {i}</p><img src=\"cid:img{i}@example.org\"></body></html>\n"
    m.set_content(text, cte="quoted-printable" if qp else None)
    if alt:
        m.add_alternative(html, subtype="html")
    if related and alt:
        html_part = m.get_payload()[1]
        html_part.add_related(PNG, maintype="image", subtype="png", cid=f"<img{i}@example.org>",
                              filename="pixel.png")
    if attach:
        fname = "report.pdf" if not name_cs else "Bericht über Grüße €.pdf"
        m.add_attachment(b"%PDF-1.4\n" + bytes(rng.randrange(256) for _ in range(500 + i)),
                         maintype="application", subtype="pdf", filename=fname)
        m.add_attachment("a,b,c\n1,2,3\n", subtype="csv", filename="data.csv")
    if nested_msg:
        inner = EmailMessage()
        base_headers(inner, i + 1000, subject="Inner forwarded message")
        inner.set_content("Forwarded body text.\n")
        inner.add_attachment(b"inner attachment bytes", maintype="application", subtype="octet-stream",
                             filename="inner.bin")
        m.add_attachment(inner)
    return m


for k in range(12):
    i += 1
    write(f"rich-{k}", rich(i, alt=k % 2 == 0, related=k % 3 != 0, attach=k % 4 != 3,
                            crlf=k % 2 == 1, name_cs=(k % 2 == 0), nested_msg=(k % 3 == 1),
                            qp=k % 5 == 0), crlf=k % 2 == 1)

# 4. Legacy MIME classes: mixed with base64 binary, deep nesting.
for k in range(8):
    i += 1
    outer = MIMEMultipart("mixed")
    base_headers(outer, i, subject=f"Nested {k}")
    cur = outer
    for d in range(k + 1):
        inner = MIMEMultipart("alternative" if d % 2 else "mixed")
        cur.attach(MIMEText(f"level {d} text\n", "plain", "utf-8"))
        cur.attach(inner)
        cur = inner
    cur.attach(MIMEText("<b>deepest</b>\n", "html", "iso-8859-1"))
    b = MIMEBase("application", "octet-stream")
    b.set_payload(bytes(rng.randrange(256) for _ in range(300)))
    encoders.encode_base64(b)
    b.add_header("Content-Disposition", "attachment", filename=("utf-8", "", f"dätei-{k}.bin"))
    outer.attach(b)
    outer.preamble = "This is a multi-part message in MIME format.\n"
    outer.epilogue = "epilogue text\n"
    write(f"nested-{k}", outer, crlf=k % 2 == 0)

# 5. message/rfc822 forwarding, digest.
for k in range(4):
    i += 1
    inner = MIMEText(f"inner message {k} ünïcödé\n", "plain", "utf-8")
    base_headers(inner, i + 500, subject="Inner =?utf-8?q?=C3=BC?=")
    outer = MIMEMultipart("mixed")
    base_headers(outer, i, subject=f"Fwd {k}")
    outer.attach(MIMEText("See attached message.\n"))
    outer.attach(MIMEMessage(inner))
    write(f"forward-{k}", outer)
i += 1
digest = MIMEMultipart("digest")
base_headers(digest, i, subject="Digest")
for k in range(3):
    inner = MIMEText(f"digest item {k}\n")
    inner["Subject"] = f"item {k}"
    digest.attach(MIMEMessage(inner))
write("digest", digest)

# 6. Addresses and groups, dates.
ADDRS = [
    'undisclosed-recipients:;',
    'Team: a@example.com, "B, Bee" <b@example.com>;',
    '"Quoted \\"Name\\"" <q@example.com>',
    'Plain Name <plain@example.com> (comment), other@example.org',
    '=?iso-8859-1?q?Andr=E9?= Pirard <PIRARD@vm1.ulg.ac.be>',
]
DATES = ["Tue, 1 Jul 2003 10:52:37 +0200", "1 Jul 03 10:52 EST", "Thu, 13 Feb 1969 23:32:54 -0330",
         "Mon, 31 Dec 2029 23:59:59 -0000", "Fri, 21 Nov 1997 09:55:06 -0600 (MDT)"]
for k, (a, d) in enumerate(zip(ADDRS, DATES)):
    i += 1
    m = EmailMessage()
    m["From"] = "sender@example.org"
    m["To"] = a
    m["Subject"] = f"addresses {k}"
    m["Date"] = d
    m.set_content("Address test\n")
    write(f"addr-{k}", m)

# 7. 8bit UTF-8 headers (RFC 6532) and long folded subjects.
for k in range(4):
    i += 1
    m = EmailMessage(policy=policy.SMTPUTF8)
    base_headers(m, i, subject=("Ünïcödé subject that is rather long and must be folded " * (k + 1)).strip())
    m.set_content("Body with 8bit UTF-8: äöü ß\n", cte="8bit")
    write(f"utf8-headers-{k}", m)

# 8. HTML only, text only with attachments of many types, inline disposition.
for k in range(6):
    i += 1
    m = EmailMessage()
    base_headers(m, i, subject=f"Types {k}")
    if k % 2:
        m.set_content("<p>only html</p>\n", subtype="html")
    else:
        m.set_content("only text\n")
    for t, st, data in [("image", "jpeg", b"\xff\xd8\xff" + bytes(100)), ("audio", "mpeg", bytes(64)),
                        ("text", "calendar", "BEGIN:VCALENDAR\nEND:VCALENDAR\n"), ("application", "zip", b"PK" + bytes(30))][: k % 4 + 1]:
        if isinstance(data, str):
            m.add_attachment(data, subtype=st, filename=f"file{k}.{st}", disposition="inline" if k % 3 == 0 else "attachment")
        else:
            m.add_attachment(data, maintype=t, subtype=st, filename=f"file{k}.{st}", disposition="inline" if k % 3 == 0 else "attachment")
    write(f"types-{k}", m, crlf=k % 2 == 0)

print(counter[0])
