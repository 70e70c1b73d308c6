#!/usr/bin/env python3
"""Python baseline for `rampart-dev bench mime`: parses every message of an mbox with `mailbox` +
`email` (policy.default), reads the text and HTML bodies (get_body + get_content) and every
attachment (the recursive iter_attachments walk of reference.py, get_payload(decode=True)).

Usage: python-baseline.py MBOX
Prints JSON: {"messages", "seconds", "bytes", "peakRSSKiB", "attachments", "attachmentBytes"}.
"""
import email
import email.policy
import json
import mailbox
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import importlib.util
spec = importlib.util.spec_from_file_location("reference", os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference.py"))
reference = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reference)


def main(path):
    start = time.perf_counter()
    box = mailbox.mbox(path, factory=None, create=False)
    messages = attachments = attachment_bytes = chars = 0
    for key in box.iterkeys():
        data = box.get_bytes(key)
        # mailbox undoes mboxo quoting only; undo mboxrd quoting like the Swift reader.
        lines = data.splitlines(keepends=True)
        data = b"".join(l[1:] if l.startswith(b">") and l.lstrip(b">").startswith(b"From ") else l for l in lines)
        msg = email.message_from_bytes(data, policy=email.policy.default)
        messages += 1
        _ = msg["subject"], msg["from"], msg["to"], msg["cc"]
        for pref in (("plain",), ("html",)):
            body = msg.get_body(pref)
            text = reference.text_of(body)
            if text is not None:
                chars += len(text)
        if msg.get_content_maintype() == "multipart" and reference.is_list(msg):
            parts = list(reference.attachments(msg))
        else:
            parts = []
        for p in parts:
            payload = p.get_payload(decode=True) or b""
            attachments += 1
            attachment_bytes += len(payload)
    seconds = time.perf_counter() - start
    print(json.dumps({
        "messages": messages,
        "seconds": seconds,
        "bytes": os.path.getsize(path),
        "peakRSSKiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "attachments": attachments,
        "attachmentBytes": attachment_bytes,
    }))


if __name__ == "__main__":
    main(sys.argv[1])
