#!/usr/bin/env python3
"""Python's smtplib against the SMTPServer tests' server (Tests/SMTPServerTests/SMTPRealClientTests.swift).

    smtp_clients.py MODE PORT [CAFILE]

MODE: submit (AUTH PLAIN, a message with a leading-dot line and 8-bit text, a refused sender,
a refused recipient named in the reply), login (AUTH LOGIN), starttls (AUTH refused before TLS,
accepted after). The server holds user alice (password pw) who may send as alice@example.org.
Prints "ok MODE" and exits 0 when every check passed. Every socket has a timeout.
"""
import smtplib
import ssl

from client_common import HOST, TIMEOUT, check, main


def run_submit(port):
    s = smtplib.SMTP(HOST, port, timeout=TIMEOUT)
    code, _ = s.ehlo("client.example")
    check(code == 250 and s.has_extn("pipelining") and s.has_extn("8bitmime") and s.has_extn("enhancedstatuscodes"), s.esmtp_features)
    check(s.has_extn("size") and s.esmtp_features["size"] == "1048576", s.esmtp_features)
    s.login("alice", "pw")   # smtplib prefers PLAIN... CRAM-MD5 first when offered; we offer PLAIN LOGIN
    msg = "From: alice@example.org\r\nTo: bob@example.org\r\nSubject: caf\u00e9\r\n\r\n.starts with a dot\r\nbody \u00e9\r\n".encode()
    refused = s.sendmail("alice@example.org", ["bob@example.org", "carol@example.org"], msg, mail_options=["BODY=8BITMIME"])
    check(refused == {}, refused)
    try:
        s.sendmail("mallory@example.org", ["bob@example.org"], b"Subject: x\r\n\r\nx\r\n")
        raise AssertionError("a foreign sender was accepted")
    except smtplib.SMTPSenderRefused as e:
        check(e.smtp_code == 550 and b"5.7.1" in e.smtp_error, e)
    try:
        s.sendmail("alice@example.org", ["x@nowhere.invalid"], b"Subject: x\r\n\r\nx\r\n")
        raise AssertionError("an .invalid recipient was accepted")
    except smtplib.SMTPDataError as e:
        check(e.smtp_code == 550 and b"x@nowhere.invalid" in e.smtp_error, e)
    code, _ = s.noop()
    check(code == 250, "noop")
    s.quit()


def run_login(port):
    s = smtplib.SMTP(HOST, port, timeout=TIMEOUT)
    s.ehlo()
    s.user, s.password = "alice", "pw"
    code, resp = s.auth("LOGIN", s.auth_login, initial_response_ok=False)
    check(code == 235, resp)
    try:
        s2 = smtplib.SMTP(HOST, port, timeout=TIMEOUT)
        s2.login("alice", "wrong")
        raise AssertionError("a wrong password was accepted")
    except smtplib.SMTPAuthenticationError as e:
        check(e.smtp_code == 535, e)
    s.quit()


def run_starttls(port, cafile):
    s = smtplib.SMTP(HOST, port, timeout=TIMEOUT)
    s.ehlo()
    check(s.has_extn("starttls") and not s.has_extn("auth"), s.esmtp_features)
    context = ssl.create_default_context(cafile=cafile)
    context.check_hostname = False
    code, _ = s.starttls(context=context)
    check(code == 220, "starttls")
    s.ehlo()
    check(s.has_extn("auth") and not s.has_extn("starttls"), s.esmtp_features)
    s.login("alice", "pw")
    s.sendmail("alice@example.org", ["bob@example.org"], b"Subject: over tls\r\n\r\nhi\r\n")
    s.quit()


if __name__ == "__main__":
    main({"submit": run_submit, "login": run_login, "starttls": run_starttls})
