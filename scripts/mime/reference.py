#!/usr/bin/env python3
"""Python's view of mail messages, as the JSON `MessageSummary.summaryJSON()` prints.

Usage: reference.py FILE...   (one JSON object per line, in argument order:
{"file": FILE, "summary": {...}} or {"file": FILE, "error": "..."})

The definition (mirrored by Sources/MIME/MessageSummary.swift, documented in docs/mime.md):
- undo what Windows tools put around a file, as MessageFileBytes.normalized does (a leading UTF-8
  byte-order mark, a UTF-16 file with its mark, one trailing 0x1A): email would otherwise read
  the mark as part of the first line and lose every header
- parse with email.message_from_bytes(data, policy=email.policy.default)
- text/html: get_body(("plain",)) / get_body(("html",)), then get_content(); an unknown charset
  (LookupError) falls back to UTF-8 with replacement characters.
- attachments: see `attachments()` below (iter_attachments, applied recursively).
- size/sha256: of the transfer-decoded bytes, get_payload(decode=True).
- contentId / messageId: header value stripped of whitespace and one pair of <>.
- disposition: "inline"/"attachment" when the header says so, else "inline" when the part has a
  Content-ID, else "attachment".
- date: Date header's datetime in UTC ("Z"); a zone-less (-0000) date is taken as UTC.
"""
import email
import email.policy
import hashlib
import json
import sys
from datetime import timezone


def normalized(data):
    """The bytes to parse: MessageFileBytes.normalized in Python."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif len(data) >= 2 and len(data) % 2 == 0 and data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        try:
            data = data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError:
            pass
    if data.endswith(b"\x1a"):
        data = data[:-1]
    return data


def strip_angle(value):
    if value is None:
        return None
    s = str(value).strip()
    if len(s) >= 2 and s[0] == "<" and s[-1] == ">":
        s = s[1:-1].strip()
    return s


def addresses(msg, name):
    header = msg.get(name)
    if header is None:
        return []
    out = []
    try:
        addrs = header.addresses
    except AttributeError:
        return []
    for a in addrs:
        out.append({"name": a.display_name or None, "address": a.addr_spec})
    return out


def text_of(part):
    if part is None:
        return None
    try:
        return part.get_content()
    except LookupError:
        raw = part.get_payload(decode=True) or b""
        return raw.decode("utf-8", "replace")


def is_list(part):
    return isinstance(part.get_payload(), list)


def all_leaves(part):
    if is_list(part):
        for sub in part.get_payload():
            yield from all_leaves(sub)
    else:
        yield part


def attachment_or_recurse(sub):
    if sub.get_content_maintype() == "multipart" and is_list(sub):
        yield from attachments(sub)
    elif is_list(sub):  # message/*: every leaf of the attached message
        yield from all_leaves(sub)
    else:
        yield sub


def attachments(part):
    """Every part iter_attachments() yields, recursively; body containers it skips
    (multipart/alternative, multipart/related) are walked for their own attachments."""
    listed = {id(p) for p in part.iter_attachments()}
    for sub in part.iter_parts():
        if id(sub) in listed:
            yield from attachment_or_recurse(sub)
        elif sub.get_content_maintype() == "multipart" and is_list(sub):
            yield from attachments(sub)


def summarize(msg):
    text_part = msg.get_body(("plain",))
    html_part = msg.get_body(("html",))
    if msg.get_content_maintype() == "multipart" and is_list(msg):
        atts = list(attachments(msg))
    elif is_list(msg):
        atts = list(all_leaves(msg))
    elif msg is text_part or msg is html_part:
        atts = []
    else:
        atts = [msg]
    att_json = []
    for p in atts:
        data = p.get_payload(decode=True) or b""
        disp = p.get_content_disposition()
        cid = strip_angle(p.get("content-id"))
        if disp not in ("inline", "attachment"):
            disp = "inline" if cid else "attachment"
        att_json.append({
            "filename": p.get_filename(),
            "contentType": p.get_content_type(),
            "contentId": cid,
            "disposition": disp,
            "size": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        })
    date = None
    dh = msg.get("date")
    if dh is not None:
        try:
            dt = dh.datetime
        except Exception:
            dt = None
        if dt is not None:
            if dt.tzinfo is None:
                dt = dt.replace(tzinfo=timezone.utc)
            date = dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    subject = msg.get("subject")
    return {
        "subject": None if subject is None else str(subject),
        "from": addresses(msg, "from"),
        "to": addresses(msg, "to"),
        "cc": addresses(msg, "cc"),
        "date": date,
        "messageId": strip_angle(msg.get("message-id")),
        "text": text_of(text_part),
        "html": text_of(html_part),
        "attachments": att_json,
    }


def sanitize(value):
    """Raw 8-bit bytes that Python kept as surrogate escapes (undecodable header bytes) become
    their UTF-8 reading with U+FFFD, as in the Swift library; output is always valid UTF-8."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if isinstance(value, list):
        return [sanitize(v) for v in value]
    if isinstance(value, dict):
        return {k: sanitize(v) for k, v in value.items()}
    return value


def main(argv):
    out_stream = sys.stdout.buffer
    for path in argv[1:]:
        try:
            with open(path, "rb") as f:
                msg = email.message_from_bytes(normalized(f.read()), policy=email.policy.default)
            out = {"file": path, "summary": sanitize(summarize(msg))}
        except Exception as e:  # report, keep going
            out = {"file": path, "error": sanitize(f"{type(e).__name__}: {e}")}
        out_stream.write(json.dumps(out, ensure_ascii=False).encode("utf-8") + b"\n")
    out_stream.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
