#!/usr/bin/env python3
"""Real IMAP clients against the IMAPServer tests' server (Tests/IMAPServerTests/RealClientTests.swift).

    imap_clients.py MODE PORT [CAFILE]

MODE: imaplib (Python's stdlib client), imapclient (the PyPI library, scripts/deps/bridge.pip),
starttls (imaplib upgrading a LOGINDISABLED connection), slow (a raw socket that sends a byte at a
time, then stays silent past the idle timeout). The server holds user alice (password pw) with the
three sample messages of Tests/IMAPServerTests/Support.swift. Prints "ok MODE" and exits 0 when
every check passed; an AssertionError (with what was seen) otherwise. Every socket has a timeout.
"""
import imaplib
import socket
import ssl
import time

from client_common import HOST, TIMEOUT, check, main


def run_imaplib(port):
    m = imaplib.IMAP4(HOST, port, timeout=TIMEOUT)
    check("IMAP4REV1" in m.capabilities and "IDLE" in m.capabilities, m.capabilities)
    typ, _ = m.login("alice", "pw")
    check(typ == "OK", "login")
    typ, boxes = m.list()
    check(typ == "OK" and any(b'\\Sent' in b and b'Sent' in b for b in boxes), boxes)
    check(any(b'"All Mail"' in b and b'\\All' in b for b in boxes), boxes)
    typ, data = m.select("INBOX")
    check(typ == "OK" and data == [b"3"], data)
    typ, data = m.uid("SEARCH", None, "NOT", "DELETED")
    check(typ == "OK" and data == [b"1 2"], data)
    typ, data = m.search(None, "UNSEEN")
    check(data == [b"2 3"], data)
    typ, data = m.fetch("1", "(RFC822)")
    check(typ == "OK" and b"Shall we meet at noon?" in data[0][1], data)
    typ, data = m.fetch("2", "(BODY.PEEK[HEADER.FIELDS (SUBJECT)] BODYSTRUCTURE)")
    check(b"Subject: Report attached" in data[0][1], data)
    typ, data = m.store("2", "+FLAGS", "(\\Flagged)")
    check(typ == "OK" and b"\\Flagged" in data[0], data)
    typ, data = m.uid("COPY", "1", "Archive")
    check(typ == "OK", data)   # imaplib drops the tagged COPYUID code
    typ, data = m._simple_command("MOVE", "3", "Trash")   # imaplib has no move()
    check(typ == "OK", data)
    typ, data = m.select("INBOX")
    check(data == [b"2"], data)
    msg = b"From: py@example.org\r\nSubject: appended \xc3\xa9\r\n\r\nbody \xff\r\n"
    typ, data = m.append("Drafts", "(\\Draft)", imaplib.Time2Internaldate(time.time()), msg)
    check(typ == "OK" and b"APPENDUID" in data[0], data)
    typ, data = m.status("Drafts", "(MESSAGES UIDNEXT)")
    check(b"MESSAGES 1" in data[0] and b"UIDNEXT 2" in data[0], data)
    m.select("Drafts")
    typ, data = m.fetch("1", "(BODY.PEEK[])")
    check(data[0][1] == msg, data)
    typ, data = m.expunge()
    check(typ == "OK", data)
    m.close()
    m.logout()


def run_imapclient(port):
    from imapclient import IMAPClient
    c = IMAPClient(HOST, port=port, ssl=False, timeout=TIMEOUT)
    c.login("alice", "pw")
    folders = {name: flags for flags, _, name in c.list_folders()}
    check(b"\\Trash" in folders["Trash"] and b"\\Junk" in folders["Spam"], folders)
    check(c.find_special_folder(b"\\Sent") == "Sent", "special folder")
    info = c.select_folder("INBOX")
    check(info[b"EXISTS"] == 3 and info[b"UIDNEXT"] == 4, info)
    check(c.search(["NOT", "DELETED"]) == [1, 2], "search")
    check(c.search(["FROM", "alice"]) == [1], "search from")
    data = c.fetch([1, 2, 3], ["ENVELOPE", "BODYSTRUCTURE", "FLAGS", "INTERNALDATE", "RFC822.SIZE"])
    env = data[1][b"ENVELOPE"]
    check(env.subject == b"Lunch plans" and env.from_[0].mailbox == b"alice" and env.to[0].host == b"example.org", env)
    check(data[2][b"ENVELOPE"].to[1].name == b"Carol", data[2])
    bs = data[2][b"BODYSTRUCTURE"]
    check(bs.is_multipart and bs[0][0][:2] == (b"TEXT", b"PLAIN"), bs)
    check(data[1][b"FLAGS"] == (b"\\Seen",), data[1])
    c.add_flags([2], [b"\\Answered"])
    check(b"\\Answered" in c.get_flags([2])[2], "flags")
    c.move([3], "Archive")
    check(c.search(["ALL"]) == [1, 2], "after move")
    # IDLE: a second connection appends; the first sees EXISTS.
    c.idle()
    other = IMAPClient(HOST, port=port, ssl=False, timeout=TIMEOUT)
    other.login("alice", "pw")
    other.append("INBOX", b"Subject: while idle\r\n\r\nhi\r\n")
    other.logout()
    responses = []
    deadline = time.time() + 45  # ends as soon as EXISTS arrives; the bound is for a loaded machine
    while time.time() < deadline and not any(r[1] == b"EXISTS" for r in responses):
        responses += c.idle_check(timeout=2)
    c.idle_done()
    check(any(r[1] == b"EXISTS" for r in responses), responses)
    check(c.search(["SUBJECT", "while idle"]) == [4], c.search(["ALL"]))
    c.unselect_folder()
    c.logout()


def run_starttls(port, cafile):
    m = imaplib.IMAP4(HOST, port, timeout=TIMEOUT)
    check("LOGINDISABLED" in m.capabilities and "STARTTLS" in m.capabilities, m.capabilities)
    try:
        m.login("alice", "pw")
        raise AssertionError("login in the clear was accepted")
    except imaplib.IMAP4.error:
        pass
    context = ssl.create_default_context(cafile=cafile)
    context.check_hostname = False
    typ, _ = m.starttls(ssl_context=context)
    check(typ == "OK", "starttls")
    m.capability()
    check("STARTTLS" not in m.capabilities and "AUTH=PLAIN" in m.capabilities, m.capabilities)
    typ, _ = m.login("alice", "pw")
    check(typ == "OK", "login over TLS")
    typ, data = m.select("INBOX")
    check(data == [b"3"], data)
    m.logout()


def run_slow(port):
    s = socket.create_connection((HOST, port), timeout=TIMEOUT)
    f = s.makefile("rb")
    check(f.readline().startswith(b"* OK"), "greeting")
    for b in b"a1 NOOP\r\n":
        s.sendall(bytes([b]))
        time.sleep(0.05)
    check(f.readline() == b"a1 OK NOOP completed\r\n", "slow NOOP")
    # Silent past the idle timeout (the test configures 1 s): the server logs us out.
    line = f.readline()
    check(line.startswith(b"* BYE Autologout"), line)
    check(f.readline() == b"", "closed after BYE")


def run_flood(port):
    """Pipelines 20,000 commands (about 1 MB) while reading the answers on another thread: the
    server holds its reads while the session is behind, and every command is still answered."""
    import threading
    s = socket.create_connection((HOST, port), timeout=TIMEOUT)
    f = s.makefile("rb")
    check(f.readline().startswith(b"* OK"), "greeting")
    count = 20000
    answered = []

    def reader():
        for _ in range(count + 2):   # the NOOPs, then "* BYE" and the LOGOUT answer
            line = f.readline()
            if not line:
                break
            if line.startswith(b"t") or line.startswith(b"z"):
                answered.append(line)

    t = threading.Thread(target=reader)
    t.start()
    payload = b"".join(b"t%d NOOP\r\n" % i for i in range(count))
    s.sendall(payload + b"z LOGOUT\r\n")
    t.join(60)
    check(len(answered) == count + 1 and answered[-1] == b"z OK LOGOUT completed\r\n", (len(answered), answered[-1:]))


if __name__ == "__main__":
    main({"imaplib": run_imaplib, "imapclient": run_imapclient, "starttls": run_starttls, "slow": run_slow, "flood": run_flood})
