#!/usr/bin/env python3
"""Python's imaplib against a real `rampart bridge` over a real `rampart server`
(Tests/RampartBridgeTests/BridgeEndToEndTests.swift).

    bridge_clients.py MODE PORT USER PASSWORD CAFILE [ARG ...]

Every connection upgrades with STARTTLS, verifying the bridge's own certificate (CAFILE).
MODE:
  rules EML       the mailbox rules: LIST with SPECIAL-USE, UID SEARCH NOT DELETED, BODY[] of the
                  delivered message equal to the file EML byte for byte, \\Seen to the server, COPY adds a
                  label, EXPUNGE in a label removes it, MOVE to a folder, EXPUNGE in a folder moves to
                  Trash, EXPUNGE in Trash deletes, APPEND to Drafts, CREATE under Folders/ only, COPY to a
                  folder then EXPUNGE is a move.
  idle CMD...     selects INBOX, enters IDLE, runs CMD (which delivers one message) and waits for the
                  EXISTS; prints "delay SECONDS" measured from CMD's exit; fails past 2 s.
  locked          LOGIN is answered NO [UNAVAILABLE].
  bye CMD...      an IDLE session; runs CMD (which locks the account) and waits for BYE [UNAVAILABLE].
  neomutt         after the neomutt session of the test: "Lunch on Thursday?" is in Archive only (not
                  INBOX, not Trash: neomutt's save is COPY then EXPUNGE), and Sent holds its reply once.
  sentcount SUBJECT MESSAGE-ID
                  Sent holds one message with SUBJECT (sent through the bridge's SMTP), and still one
                  after the mail program APPENDs its own copy (same Message-ID) to Sent.
  sentattachments SUBJECT FILE...
                  the message with SUBJECT written with `rampart send --attach FILE...` shows in Sent (waited
                  for) as multipart/mixed whose attachments, read with Python's email package, have each
                  FILE's name (RFC 2231 when not ASCII) and bytes exactly; RFC822.SIZE is the length of
                  BODY[]; BODYSTRUCTURE names each attachment's type, disposition and file name, and its
                  size is that of the BODY[N] section, which decodes to the file's bytes.
Prints "ok MODE" when every check passed; an AssertionError (with what was seen) otherwise.
"""
import base64
import email
import email.header
import email.policy
import imaplib
import os
import re
import ssl
import subprocess
import sys
import time

from client_common import HOST, TIMEOUT, check


def connect(port, cafile):
    m = imaplib.IMAP4(HOST, port, timeout=TIMEOUT)
    m.starttls(ssl_context=ssl.create_default_context(cafile=cafile))
    return m


def uids(m, *criteria):
    typ, data = m.uid("SEARCH", None, *criteria)
    check(typ == "OK", data)
    return data[0].split()


def count(m, box):
    typ, data = m.status(box, "(MESSAGES)")
    check(typ == "OK", data)
    return int(data[0].rsplit(b"MESSAGES ", 1)[1].split(b")")[0])


def run_rules(port, user, password, cafile, eml):
    expected = open(eml, "rb").read()
    m = connect(port, cafile)
    check(m.login(user, password)[0] == "OK", "login")
    typ, boxes = m.list()
    text = b"\n".join(boxes)
    for name, attribute in [(b"INBOX", b""), (b"Sent", b"\\Sent"), (b"Drafts", b"\\Drafts"), (b"Trash", b"\\Trash"),
                            (b"Archive", b"\\Archive"), (b"Spam", b"\\Junk"), (b'"All Mail"', b"\\All")]:
        check(any(line.endswith(name) and attribute in line for line in boxes), (name, text))
    check(b"Labels/Work" in text, text)
    all_before = count(m, '"All Mail"')
    m.select("INBOX")
    everything = uids(m, "ALL")
    check(uids(m, "NOT", "DELETED") == everything and everything, everything)
    # The delivered message: BODY[] is the original, byte for byte.
    found = uids(m, "HEADER", "Subject", '"bridge rules"')
    check(len(found) == 1, found)
    uid = found[0]
    typ, data = m.uid("FETCH", uid, "(BODY.PEEK[])")
    check(data[0][1] == expected, (len(data[0][1]), len(expected)))
    typ, data = m.uid("FETCH", uid, "(RFC822.SIZE FLAGS)")
    check(b"RFC822.SIZE %d" % len(expected) in data[0], data[0])
    check(b"\\Seen" not in data[0], data[0])
    typ, data = m.uid("STORE", uid, "+FLAGS", "(\\Seen)")
    check(typ == "OK" and b"\\Seen" in data[0], data)
    # COPY to a label: the message shows in both; EXPUNGE there removes only the label.
    check(m.uid("COPY", uid, "Labels/Work")[0] == "OK", "copy")
    m.select("Labels/Work")
    in_label = uids(m, "HEADER", "Subject", '"bridge rules"')
    check(len(in_label) == 1, in_label)
    m.uid("STORE", in_label[0], "+FLAGS", "(\\Deleted)")
    check(m.expunge()[0] == "OK", "expunge in label")
    check(uids(m, "HEADER", "Subject", '"bridge rules"') == [], "still in the label")
    m.select("INBOX")
    check(uids(m, "HEADER", "Subject", '"bridge rules"') == [uid], "gone from INBOX after a label expunge")
    typ, data = m.uid("FETCH", uid, "(FLAGS)")
    check(b"\\Seen" in data[0], data)
    # MOVE to a folder: out of INBOX, into Archive; EXPUNGE in Archive moves it to Trash.
    typ, data = m._simple_command("UID", "MOVE", uid, "Archive")
    check(typ == "OK", data)
    check(uids(m, "HEADER", "Subject", '"bridge rules"') == [], "still in INBOX after MOVE")
    m.select("Archive")
    archived = uids(m, "HEADER", "Subject", '"bridge rules"')
    check(len(archived) == 1, archived)
    m.uid("STORE", archived[0], "+FLAGS", "(\\Deleted)")
    m.expunge()
    m.select("Trash")
    trashed = uids(m, "HEADER", "Subject", '"bridge rules"')
    check(len(trashed) == 1, ("not in Trash", trashed))
    check(count(m, '"All Mail"') == all_before, "All Mail lost it before Trash was emptied")
    m.uid("STORE", trashed[0], "+FLAGS", "(\\Deleted)")
    m.expunge()
    check(uids(m, "HEADER", "Subject", '"bridge rules"') == [], "Trash expunge left it")
    check(count(m, '"All Mail"') == all_before - 1, "Trash expunge did not delete it")
    # APPEND to Drafts: imported, its bytes come back.
    draft = b"From: " + user.encode() + b"\r\nTo: x@example.org\r\nSubject: bridge draft\r\n\r\nDraft body\r\n"
    typ, data = m.append("Drafts", "(\\Draft)", imaplib.Time2Internaldate(time.time()), draft)
    check(typ == "OK" and b"APPENDUID" in data[0], data)
    m.select("Drafts")
    found = uids(m, "HEADER", "Subject", '"bridge draft"')
    check(len(found) == 1, found)
    typ, data = m.uid("FETCH", found[0], "(BODY.PEEK[])")
    check(data[0][1] == draft, data)
    typ, data = m.uid("FETCH", found[0], "(FLAGS)")
    check(b"\\Draft" in data[0], data)
    check(m.create("Folders/Projects")[0] == "OK", "create folder")
    check(m.create("Elsewhere")[0] == "NO", "a mailbox outside Folders/ and Labels/ was created")
    typ, boxes = m.list()
    check(any(b"Folders/Projects" in b for b in boxes), boxes)
    # COPY to a folder, then \Deleted and EXPUNGE here (how many programs move): a move, not Trash.
    check(m.uid("COPY", found[0], "Folders/Projects")[0] == "OK", "copy to a folder")
    m.uid("STORE", found[0], "+FLAGS", "(\\Deleted)")
    m.expunge()
    check(uids(m, "HEADER", "Subject", '"bridge draft"') == [], "still in Drafts")
    m.select("Folders/Projects")
    check(len(uids(m, "HEADER", "Subject", '"bridge draft"')) == 1, "not in Folders/Projects")
    m.select("Trash")
    check(uids(m, "HEADER", "Subject", '"bridge draft"') == [], "COPY+EXPUNGE sent it to Trash")
    m.logout()


def idle_until(m, predicate, limit):
    """Reads untagged lines during IDLE until one satisfies `predicate`; returns it and the time."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        line = m.readline()
        if not line:
            raise AssertionError("connection closed during IDLE")
        if predicate(line):
            return line, time.monotonic()
    raise AssertionError("nothing within %s s" % limit)


def start_idle(port, user, password, cafile):
    m = connect(port, cafile)
    check(m.login(user, password)[0] == "OK", "login")
    m.select("INBOX")
    m.send(b"i1 IDLE\r\n")
    line = m.readline()
    check(line.startswith(b"+"), line)
    return m


def run_idle(port, user, password, cafile, *command):
    m = start_idle(port, user, password, cafile)
    subprocess.run(command, check=True, timeout=TIMEOUT)
    delivered = time.monotonic()
    line, seen = idle_until(m, lambda l: l.rstrip().endswith(b"EXISTS"), 30)
    delay = seen - delivered
    print("delay %.3f" % delay)
    check(delay < 2.0, ("EXISTS took %.3f s" % delay, line))
    m.send(b"DONE\r\n")
    idle_until(m, lambda l: l.startswith(b"i1 OK"), 30)
    m.logout()


def run_locked(port, user, password, cafile):
    m = connect(port, cafile)
    try:
        m.login(user, password)
        raise AssertionError("login accepted while locked")
    except imaplib.IMAP4.error as error:
        check("UNAVAILABLE" in str(error), str(error))


def run_bye(port, user, password, cafile, *command):
    m = start_idle(port, user, password, cafile)
    subprocess.run(command, check=True, timeout=TIMEOUT)
    line, _ = idle_until(m, lambda l: l.startswith(b"* BYE"), 30)
    check(b"UNAVAILABLE" in line, line)


def run_sentcount(port, user, password, cafile, subject, message_id):
    m = connect(port, cafile)
    check(m.login(user, password)[0] == "OK", "login")
    m.select("Sent")
    quoted = '"%s"' % subject
    check(len(uids(m, "HEADER", "Subject", quoted)) == 1, "Sent copies before the APPEND")
    copy = ("From: %s\r\nTo: alice@rampart.test\r\nSubject: %s\r\nMessage-Id: %s\r\n\r\nHello from swaks\r\n"
            % (user, subject, message_id)).encode()
    typ, data = m.append("Sent", "(\\Seen)", imaplib.Time2Internaldate(time.time()), copy)
    check(typ == "OK" and b"APPENDUID" in data[0], data)
    m.select("Sent")
    check(len(uids(m, "HEADER", "Subject", quoted)) == 1, "a second Sent copy after the APPEND")
    m.logout()


def run_neomutt(port, user, password, cafile):
    m = connect(port, cafile)
    check(m.login(user, password)[0] == "OK", "login")
    where = {}
    for box in ["INBOX", "Archive", "Trash"]:
        m.select(box)
        where[box] = len(uids(m, "SUBJECT", '"Lunch on Thursday"'))
    check(where == {"INBOX": 0, "Archive": 1, "Trash": 0}, where)
    m.select("Sent")
    # The demo account's Sent already holds an older reply with this subject: count this one's text.
    replies = uids(m, "BODY", '"Reply body from neomutt"')
    check(len(replies) == 1, ("Sent copies of the reply", replies))
    m.logout()


def fetch_one(m, uid, items):
    typ, data = m.uid("FETCH", uid, items)
    check(typ == "OK" and data and data[0] is not None, data)
    return data


def run_sentattachments(port, user, password, cafile, subject, *files):
    m = connect(port, cafile)
    check(m.login(user, password)[0] == "OK", "login")
    found, deadline = [], time.monotonic() + 60
    while not found and time.monotonic() < deadline:
        m.select("Sent", readonly=True)
        found = uids(m, "SUBJECT", '"%s"' % subject)
        if not found:
            time.sleep(0.5)
    check(len(found) == 1, ("Sent copies of", subject, found))
    data = fetch_one(m, found[0], "(RFC822.SIZE BODYSTRUCTURE BODY.PEEK[])")
    meta, raw = data[0][0], data[0][1]
    size = int(re.search(rb"RFC822\.SIZE (\d+)", meta).group(1))
    check(size == len(raw), ("RFC822.SIZE", size, "BODY[] bytes", len(raw)))
    message = email.message_from_bytes(raw, policy=email.policy.default)
    check(message.get_content_type() == "multipart/mixed", message.get_content_type())
    check(message["Subject"] == subject, message["Subject"])
    attachments = list(message.iter_attachments())
    check([a.get_filename() for a in attachments] == [os.path.basename(f) for f in files],
          ("file names", [a.get_filename() for a in attachments]))
    structure = meta.decode("utf-8", "replace")
    for number, (part, path) in enumerate(zip(attachments, files), start=2):
        with open(path, "rb") as f:
            expected = f.read()
        check(part.get_payload(decode=True) == expected, ("bytes of", path))
        check(part["Content-Transfer-Encoding"] == "base64", part["Content-Transfer-Encoding"])
        check(part.get_content_disposition() == "attachment", part.get_content_disposition())
        name = os.path.basename(path)
        if not name.isascii():
            check(b"filename*" in raw, ("no RFC 2231 file name for", name))
        # The section the structure names holds this attachment: its size is BODYSTRUCTURE's (a text
        # part's line count follows the size).
        section = fetch_one(m, found[0], "(BODY.PEEK[%d] BODY.PEEK[%d.MIME])" % (number, number))
        body, mime = section[0][1], section[1][1]
        check(base64.b64decode(body) == expected, ("BODY[%d]" % number, path))
        check(b"attachment" in mime.lower(), mime)
        maintype, subtype = part.get_content_type().upper().split("/")
        pattern = r'\("%s" "%s" \([^)]*\) NIL NIL "BASE64" (\d+)(?: \d+)? NIL \("ATTACHMENT" \("FILENAME" ("[^"]*"|\{\d+\}\r\n)' % (maintype, subtype)
        matches = [int(x.group(1)) for x in re.finditer(pattern, structure)]
        check(len(body) in matches, ("BODYSTRUCTURE sizes", matches, len(body), structure))
        encoded = [x.group(2).strip('"') for x in re.finditer(pattern, structure)]
        decoded = [str(email.header.make_header(email.header.decode_header(e))) for e in encoded]
        check(name in decoded, ("BODYSTRUCTURE file names", decoded, name))
    m.logout()


MODES = {"neomutt": run_neomutt, "rules": run_rules, "idle": run_idle, "locked": run_locked, "bye": run_bye, "sentcount": run_sentcount,
         "sentattachments": run_sentattachments}

if __name__ == "__main__":
    mode = sys.argv[1]
    MODES[mode](int(sys.argv[2]), *sys.argv[3:])
    print("ok", mode)
