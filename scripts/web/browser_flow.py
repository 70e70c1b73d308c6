#!/usr/bin/env python3
"""`rampart web` in a real browser: Debian's chromium driven by Playwright for Python.

Run by Tests/RampartWebTests/WebBrowserTests.swift against a `rampart web` it started (the
account logged in, PIN-protected, locked). Never downloads a browser: chromium is launched from
`--chromium` (default /usr/bin/chromium) through `executable_path`.

Every check is printed as one JSON object per line on standard output
(`{"check": name, "ok": bool, "detail": text}`), then `{"done": true}`; screenshots of each
page go into `--out`. Requests are recorded for the whole browser context (pages, the
sandboxed viewer frames, popups): any request that leaves the app's origin is answered by the
script itself (a 1x1 PNG) and counted, so "no request leaves the app before consent" is
measured, not assumed; `alert()` and friends would show as dialogs and are counted too.
"""
import argparse
import base64
import hashlib
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse

from playwright.sync_api import sync_playwright

PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True, help="the one-time URL rampart web printed")
    parser.add_argument("--out", required=True, help="folder for screenshots and downloads")
    parser.add_argument("--rampart", required=True, help="the rampart executable (for `rampart lock`)")
    parser.add_argument("--pin", required=True)
    parser.add_argument("--chromium", default=os.environ.get("RAMPART_CHROMIUM", "/usr/bin/chromium"))
    parser.add_argument("--drive-mb", type=int, default=50)
    parser.add_argument("--xss-subject", default="XSS vectors")
    parser.add_argument("--remote-subject", default="Remote content probe")
    parser.add_argument("--cid-subject", default="Embedded picture")
    parser.add_argument("--probe-log", required=True, help="the request log of scripts/web/probe_server.py, the mail's remote host")
    parser.add_argument("--probe-port", type=int, required=True)
    parser.add_argument("--tracker-host", default="t.hubspotemail.net")
    parser.add_argument("--sent-subject", default="Hello from the web app")
    args = parser.parse_args()
    probe_port = args.probe_port
    os.makedirs(args.out, exist_ok=True)

    parsed = urllib.parse.urlparse(args.url)
    port = parsed.port
    base = f"http://127.0.0.1:{port}"
    token = urllib.parse.parse_qs(parsed.query)["token"][0]
    results = []

    def check(name, ok, detail=""):
        results.append(name)
        print(json.dumps({"check": name, "ok": bool(ok), "detail": str(detail)[:2000]}), flush=True)

    # A page of another origin on this machine (same site as the app: the browser sends the app's
    # SameSite=Strict cookie with its POST), which tries to lock the account.
    class Evil(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            page = (f'<!DOCTYPE html><form id="f" method="post" action="{base}/lock">'
                    '<input name="csrf" value="guessed"></form><script>document.getElementById("f").submit()</script>')
            data = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *a):
            pass

    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Evil)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    evil_url = f"http://127.0.0.1:{evil.server_address[1]}/"

    launch_args = [f"--host-resolver-rules=MAP rebind.test 127.0.0.1"]
    if os.geteuid() == 0:
        launch_args.append("--no-sandbox")  # chromium refuses its sandbox as root (CI runs as root)

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, headless=True, args=launch_args)

        # --- access: before any session -----------------------------------------------------
        stranger = browser.new_context()
        page = stranger.new_page()
        r = page.goto(base + "/mail")
        check("no-token-401", r.status == 401, r.status)
        r = page.goto(base + "/login?token=wrong-token")
        check("wrong-token-401", r.status == 401, r.status)
        # DNS rebinding: a name of the attacker's that resolves to 127.0.0.1, with the real token.
        r = page.goto(f"http://rebind.test:{port}/login?token={token}")
        check("dns-rebinding-403", r.status == 403, r.status)
        stranger.close()

        # --- sign in with the token --------------------------------------------------------
        context = browser.new_context(accept_downloads=True, viewport={"width": 1100, "height": 800})
        context.set_default_timeout(90000)  # a hang guard: the suite runs beside every other one in CI
        outside, dialogs, app_requests = [], [], []

        def route(route_, request):
            if request.url.startswith(base + "/") or request.url.startswith("data:") or request.url.startswith("blob:"):
                route_.continue_()
            elif request.url.startswith(evil_url):
                route_.continue_()  # the attacker's page of this test, opened on purpose
            else:
                outside.append(request.url)
                route_.fulfill(status=200, content_type="image/png", body=PIXEL)

        context.route("**/*", route)
        context.on("request", lambda req: app_requests.append(req.url))
        proxied = []  # the viewer frame's remote resources, as the app answered them
        context.on("response", lambda res: proxied.append((res.url, res.status, res.headers.get("content-type", "")))
                   if res.url.startswith(base + "/remote/") else None)
        embedded = []  # the viewer frame's embedded (cid:) images, as the app answered them
        context.on("response", lambda res: embedded.append((res.url, res.status, res.headers.get("content-type", ""),
                                                            res.headers.get("x-content-type-options", "")))
                   if res.url.startswith(base + "/viewer/") and "/cid/" in res.url else None)

        def probe_requests():
            try:
                with open(args.probe_log) as log:
                    return [json.loads(line) for line in log if line.strip()]
            except FileNotFoundError:
                return []

        def probe_paths():
            return [r["path"] for r in probe_requests()]
        page = context.new_page()
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        context.on("page", lambda pg: pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss())))
        r = page.goto(args.url)
        check("token-signs-in", page.url.startswith(base + "/unlock") or page.url.startswith(base + "/mail"), page.url)
        cookies = [c for c in context.cookies() if c["name"] == "rampart_web"]
        check("cookie-httponly-samesite-strict", len(cookies) == 1 and cookies[0]["httpOnly"] and cookies[0]["sameSite"] == "Strict",
              cookies)
        headers = r.all_headers() if r else {}
        csp = headers.get("content-security-policy", "")
        check("app-headers", "frame-ancestors 'none'" in csp and "'unsafe-inline'" not in csp.split("script-src")[1].split(";")[0]
              and headers.get("x-content-type-options") == "nosniff" and headers.get("referrer-policy") == "no-referrer"
              and not any(k.startswith("access-control-") for k in headers), headers)
        page.screenshot(path=os.path.join(args.out, "unlock.png"))

        other = browser.new_context()
        r = other.new_page().goto(args.url)
        check("used-token-401", r.status == 401, r.status)
        other.close()
        other = browser.new_context()
        other.add_cookies([{"name": "rampart_web", "value": "not-the-session", "url": base}])
        r = other.new_page().goto(base + "/mail")
        check("wrong-cookie-401", r.status == 401, r.status)
        other.close()

        # --- unlock --------------------------------------------------------------------------
        page.fill("#pin", args.pin)
        page.click("#unlock-form button[type=submit]")
        page.wait_for_url(base + "/mail*", timeout=30000)
        check("unlock-with-pin", page.url.startswith(base + "/mail"), page.url)

        # --- another local user with the very cookie is refused (root only: it acts as `nobody`) ----
        cookie = [c for c in context.cookies() if c["name"] == "rampart_web"][0]["value"]
        if os.geteuid() == 0:
            curl = ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-b", f"rampart_web={cookie}", base + "/mail"]
            mine = subprocess.run(curl, capture_output=True, text=True).stdout
            theirs = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + curl,
                                    capture_output=True, text=True)
            check("other-local-user-403", mine == "200" and theirs.stdout == "403",
                  f"same user {mine}, nobody {theirs.stdout} {theirs.stderr}")

        # --- a cross-origin POST (same site: the cookie goes along) is refused ------------------
        evil_page = context.new_page()
        # Only the POST's answer matters: the page submits its form while it loads, so its own
        # "load" may never come (a loaded CI run timed out waiting for it); wait for the commit.
        with evil_page.expect_response(lambda resp: resp.url == base + "/lock", timeout=90000) as answer:
            evil_page.goto(evil_url, wait_until="commit")
        check("cross-origin-post-403", answer.value.status == 403, answer.value.status)
        evil_page.close()
        state = context.request.get(base + "/api/state").json()
        check("cross-origin-post-changed-nothing", state.get("state") == "unlocked", state)
        # A POST with the right origin but without the CSRF token is refused too.
        r = context.request.post(base + "/lock", headers={"Origin": base}, form={"csrf": "guessed"})
        check("missing-csrf-403", r.status == 403, r.status)

        # --- mailbox: labels, unread counts, list, search ---------------------------------------
        page.goto(base + "/mail")
        subjects = page.locator("#messages .subject").all_inner_texts()
        check("mailbox-lists", args.xss_subject in subjects and len(subjects) >= 4, subjects)
        check("mailbox-labels-unread", page.locator("#labels a").count() >= 4 and page.locator(".unread-count").count() >= 1,
              page.locator("#labels").inner_text())
        # The exact count of one label: the 30 unread messages imported under "Bulk".
        bulk_unread = page.locator("#labels a:has-text('Bulk') .unread-count")
        check("mailbox-label-unread-exact", bulk_unread.count() == 1 and bulk_unread.inner_text() == "30",
              page.locator("#labels").inner_text())
        page.screenshot(path=os.path.join(args.out, "mailbox.png"))
        # Pagination: 30 messages of one second under "Bulk", 25 a page; the page's end falls inside that second.
        page.click("#labels a:has-text('Bulk')")
        page.wait_for_load_state("load")
        pages, ranges, counts = [], [], []
        for step in ["first", "#next-page", "#previous-page"]:
            if step != "first":
                with page.expect_navigation():
                    page.click(step)
            pages.append(page.locator("#messages .subject").all_inner_texts())
            ranges.append(page.inner_text("#page-range") if page.locator("#page-range").count() else "")
            counts.append(page.inner_text("#labels a:has-text('Bulk')"))
            if step == "#next-page":
                ends = (page.locator("#next-page").count(), page.locator("#previous-page").count())
        first, second, back = pages
        check("mailbox-pagination", len(first) == 25 and len(second) == 5 and len(set(first) | set(second)) == 30 and back == first
              and ranges == ["Messages 1–25", "Messages 26–30", "Messages 1–25"] and ends == (0, 1)
              and page.locator("#previous-page").count() == 0 and counts == ["Bulk 30"] * 3,
              f"{len(first)} + {len(second)} ({len(set(first) | set(second))} distinct), back equal {back == first}, {ranges}, {ends}, {counts}")
        page.goto(base + "/mail")
        page.fill("#q", "Lunch")
        page.press("#q", "Enter")
        page.wait_for_url(base + "/mail?q=*")
        found = page.locator("#messages .subject").all_inner_texts()
        check("search", any("Lunch" in s for s in found) and not any("Northwind" in s for s in found), found)

        # --- opening a message by a plain GET (a link from any page) does not mark it read --------
        page.goto(base + "/mail")
        unread_row = f"#messages li.unread a:has-text('{args.xss_subject}')"
        was_unread = page.locator(unread_row).count() == 1
        xss_href = page.get_attribute(f"#messages a:has-text('{args.xss_subject}')", "href")
        other_site = context.request.get(base + xss_href, headers={"Sec-Fetch-Site": "same-site"})
        page.goto(base + "/mail")
        check("plain-get-does-not-mark-read", was_unread and other_site.status == 200 and page.locator(unread_row).count() == 1,
              f"unread before {was_unread}, GET {other_site.status}, unread after {page.locator(unread_row).count()}")

        # --- the XSS vectors, opened in the viewer ----------------------------------------------
        before = len(outside)
        with page.expect_response(lambda resp: "/viewer/" in resp.url) as viewer_answer:
            page.click(f"#messages a:has-text('{args.xss_subject}')")
        page.wait_for_load_state("load")
        xss_url = page.url
        viewer_csp = viewer_answer.value.all_headers().get("content-security-policy", "")
        sandbox = page.get_attribute("#viewer", "sandbox")
        frame = page.frame_locator("#viewer")
        frame.locator("body").wait_for()
        time.sleep(1.0)  # let anything that could run, run
        check("viewer-sandbox-without-scripts", sandbox is not None and "allow-scripts" not in sandbox
              and "allow-same-origin" not in sandbox, sandbox)
        sources = [t.rstrip(";") for t in viewer_csp.split()]
        # data: only for images and fonts the body carries inline (they load nothing); no other directive.
        directives = {d.split()[0]: d.split()[1:] for d in viewer_csp.split(";") if d.strip()}
        check("viewer-csp-by-header", "script-src 'none'" in viewer_csp and "default-src 'none'" in viewer_csp
              and "http:" not in sources and "https:" not in sources
              and all("data:" not in values for name, values in directives.items() if name not in ("img-src", "font-src")), viewer_csp)
        check("xss-no-script-ran", not dialogs, dialogs)
        check("xss-no-request-left-the-app", len(outside) == before, outside[before:])
        page.screenshot(path=os.path.join(args.out, "message-xss.png"), full_page=True)
        page.goto(base + "/mail")
        check("opening-in-the-app-marks-read", page.locator(unread_row).count() == 0
              and page.locator(f"#messages a:has-text('{args.xss_subject}')").count() == 1, page.inner_text("#messages")[:300])
        r = context.request.get(base + "/viewer/no-such-message")
        lockdown = r.headers.get("content-security-policy", "")
        check("viewer-lockdown-until-sanitized", lockdown.startswith("default-src 'none'; script-src 'none'") and "img-src" not in lockdown,
              lockdown)

        # --- remote content: blocked until asked --------------------------------------------------
        page.goto(base + "/mail")
        before = len(outside)
        page.click(f"#messages a:has-text('{args.remote_subject}')")
        page.wait_for_load_state("load")
        page.frame_locator("#viewer").locator("body").wait_for()
        time.sleep(0.8)
        blocked_text = page.inner_text("#remote-state")
        check("remote-blocked-before-consent", len(outside) == before and "blocked" in blocked_text and not probe_paths(),
              f"{blocked_text} {outside[before:]} {probe_paths()}")
        page.screenshot(path=os.path.join(args.out, "message-remote-blocked.png"), full_page=True)
        page.click("#load-remote")
        page.wait_for_load_state("load")
        page.frame_locator("#viewer").locator("body").wait_for()
        deadline = time.time() + 60  # ends as soon as both are seen; the backend fetches them on a loaded machine too
        while time.time() < deadline and not {"/picture.png", "/bg.png"} <= set(probe_paths()):
            page.wait_for_timeout(100)
        page.wait_for_timeout(300)
        check("remote-loads-after-consent", {"/picture.png", "/bg.png"} <= set(probe_paths()) and "loaded" in page.inner_text("#remote-state")
              and len([p for p in proxied if p[1] == 200 and p[2] == "image/png"]) >= 2, f"{probe_paths()} {proxied}")
        # The probe host saw the backend (its user agent, no cookie, no referer), never chromium, and
        # chromium asked only the app's own origin.
        seen = probe_requests()
        check("remote-fetched-by-the-backend", seen and all(r["headers"].get("User-Agent") == "Rampart-RemoteContentProxy/1"
              and not {"cookie", "referer", "origin"} & {k.lower() for k in r["headers"]} for r in seen)
              and len(outside) == before, f"{seen} {outside[before:]}")
        check("remote-trackers-still-blocked", not any(args.tracker_host in u for u in outside)
              and not any("pixel" in p for p in probe_paths()), outside[before:])
        # The token in the proxy URL serves its rendering's URLs only, and a made-up one nothing.
        url, _, _ = proxied[0]
        token_path = url[len(base):].rsplit("/", 1)[0]
        other = base64.urlsafe_b64encode(f"http://127.0.0.1:{probe_port}/other.png".encode()).decode().rstrip("=")
        answers = [context.request.get(base + token_path + "/" + other).status,
                   context.request.get(base + "/remote/made-up-token/" + url.rsplit("/", 1)[1]).status,
                   context.request.get(url).status]
        check("remote-token-bound-to-its-rendering", answers == [404, 404, 200] and "/other.png" not in probe_paths(), answers)
        page.screenshot(path=os.path.join(args.out, "message-remote-loaded.png"), full_page=True)

        # --- embedded (cid:) images: opened from the file vault, served from the rendering's path ------
        page.goto(base + "/mail")
        before = len(outside)
        with page.expect_response(lambda resp: resp.url.startswith(base + "/viewer/") and "/cid/" not in resp.url) as viewer_answer:
            page.click(f"#messages a:has-text('{args.cid_subject}')")
        page.wait_for_load_state("load")
        cid_csp = viewer_answer.value.all_headers().get("content-security-policy", "")
        image = page.frame_locator("#viewer").locator("img").first
        image.wait_for()
        width, deadline = 0, time.time() + 8
        while time.time() < deadline and not width:
            width = image.evaluate("e => e.complete ? e.naturalWidth : 0")
            if not width:
                page.wait_for_timeout(100)
        src = image.get_attribute("src") or ""
        check("cid-image-shows", width == 3 and len(outside) == before, f"naturalWidth {width}, src {src}, {outside[before:]}")
        served = [e for e in embedded if e[0] == src]
        prefix = src.rsplit("/", 1)[0] + "/"
        check("cid-image-from-its-rendering-path", src.startswith(base + "/viewer/") and src.startswith(prefix) and prefix.endswith("/cid/")
              and served and served[0][1:] == (200, "image/png", "nosniff")
              and f"img-src {prefix} data:;" in cid_csp and "http:" not in cid_csp.replace(base, ""), f"{src} {served} {cid_csp}")
        key = src.rsplit("/", 1)[1]
        remote_token = token_path.split("/")[2]  # the remote-content probe's rendering (another message)
        answers = [context.request.get(f"{base}/viewer/{remote_token}/cid/{key}").status,
                   context.request.get(f"{base}/viewer/made-up-token/cid/{key}").status,
                   context.request.get(src).status]
        check("cid-token-bound-to-its-rendering", answers == [404, 404, 200], answers)
        page.screenshot(path=os.path.join(args.out, "message-cid.png"), full_page=True)

        # --- trusted senders: remote content loads only when the signature verifies ------------------
        page.goto(base + "/settings")
        page.fill("#trust-address", "alice@rampart.test")
        page.click("#trust-address + button")
        page.wait_for_selector("#trusted li:has-text('alice@rampart.test')")
        page.goto(base + "/mail")
        before = len(outside)
        page.click("#messages a:has-text('Signed remote')")
        page.frame_locator("#viewer").locator("body").wait_for()
        deadline = time.time() + 5
        while time.time() < deadline and "/trusted.png" not in probe_paths():
            page.wait_for_timeout(100)
        check("trusted-sender-verified-loads", "/trusted.png" in probe_paths() and len(outside) == before
              and "verified" in page.inner_text("#signature") and "loaded" in page.inner_text("#remote-state"),
              f"{page.inner_text('#signature')} | {page.inner_text('#remote-state')} | {outside[before:]}")
        signed_url = page.url
        page.goto(base + "/mail")
        before = len(outside)
        page.click("#messages a:has-text('Forged from Alice')")
        page.frame_locator("#viewer").locator("body").wait_for()
        time.sleep(0.8)
        check("trusted-sender-unverified-stays-blocked", len(outside) == before and "did not verify" in page.inner_text("#trust")
              and "/forged.png" not in probe_paths()
              and "blocked" in page.inner_text("#remote-state"), f"{page.inner_text('#trust')} {outside[before:]}")
        # "Block all remote content" wins over a trusted sender.
        page.goto(base + "/settings")
        page.check("#block-all")
        page.click("#settings-form button[type=submit]")
        page.wait_for_url(base + "/settings")
        before, probed = len(outside), len(probe_paths())
        page.goto(signed_url)
        page.frame_locator("#viewer").locator("body").wait_for()
        time.sleep(0.8)
        check("block-all-wins", len(outside) == before and len(probe_paths()) == probed and "blocked" in page.inner_text("#remote-state")
              and page.locator("#load-remote").count() == 0, f"{page.inner_text('#remote-state')} {outside[before:]}")
        # It is a stored setting: another process (`rampart read`, even with --load-remote) honours it.
        signed_id = urllib.parse.unquote(signed_url.split("/message/", 1)[1])
        read = subprocess.run([args.rampart, "read", signed_id, "--load-remote"], capture_output=True, text=True, timeout=60)
        check("block-all-stored-read-honours-it", read.returncode == 0 and "block all remote content" in read.stderr
              and "Remote content loaded" not in read.stderr, f"{read.returncode} {read.stderr[-600:]}")
        page.goto(base + "/settings")
        page.uncheck("#block-all")
        page.click("#settings-form button[type=submit]")
        page.wait_for_url(base + "/settings")

        # --- attachment download -------------------------------------------------------------
        page.goto(base + "/mail?label=archive")
        page.click("#messages a:has-text('receipt')")
        with page.expect_download() as download:
            page.click("#attachments a")
        saved = os.path.join(args.out, "receipt.txt")
        download.value.save_as(saved)
        with open(saved, "rb") as f:
            receipt = f.read()
        check("attachment-download", receipt == b"Receipt 4411\nTicket: 42.00 EUR\n", receipt)

        # --- composer: a reply quotes the hostile message sanitized --------------------------------
        before, dialogs_before = len(outside), len(dialogs)
        reply = page.goto(xss_url.replace("/message/", "/compose?reply="))
        composer_csp = reply.headers.get("content-security-policy", "")
        page.locator("#editor blockquote").wait_for()
        time.sleep(0.5)
        check("composer-csp-no-remote", "script-src 'nonce-" in composer_csp and "http" not in composer_csp
              and "connect-src 'self'" in composer_csp, composer_csp)
        check("composer-quoted-sanitized", len(dialogs) == dialogs_before and len(outside) == before
              and page.locator("#editor script").count() == 0 and page.locator("#editor [onerror]").count() == 0,
              f"{dialogs[dialogs_before:]} {outside[before:]}")

        # --- composer: new message, recipients' encryption named, sent ----------------------------
        page.goto(base + "/compose")
        page.fill("#to", "zoe@elsewhere.example")
        page.press("#to", "Tab")
        page.wait_for_selector("#e2ee-status.warning")  # (no wait_for_function: the page's CSP forbids eval)
        check("composer-names-recipients-without-e2ee", "NOT end-to-end encrypted" in page.inner_text("#e2ee-status"),
              page.inner_text("#e2ee-status"))
        # Recipients changed faster than the answers come (each change and blur asks): only the
        # latest recipients' answer may show. Alice's answers are held back until Zoe's has shown,
        # then let through: an earlier "encrypted" must not stand for recipients no longer there.
        held = []
        alice_asks = re.compile(r"/api/recipients\?to=alice")
        page.route(alice_asks, lambda route: held.append(route))
        page.fill("#to", "alice@rampart.test")
        page.press("#to", "Tab")
        page.fill("#to", "zoe@elsewhere.example")
        page.press("#to", "Tab")
        page.wait_for_selector("#e2ee-status.warning")
        for route in held:
            route.continue_()
        page.unroute(alice_asks)
        page.wait_for_timeout(2000)  # the held answers arrive and are handled meanwhile
        latest = (len(held), page.get_attribute("#e2ee-status", "class"), page.inner_text("#e2ee-status"))
        check("composer-shows-only-the-latest-recipients",
              latest[0] >= 1 and latest[1] == "warning" and "zoe@elsewhere.example" in latest[2], latest)
        page.fill("#to", "alice@rampart.test")
        page.press("#to", "Tab")
        page.wait_for_selector("#e2ee-status.ok")
        page.fill("#subject", args.sent_subject)
        page.click("#editor")
        page.keyboard.type("Hello Alice, written in the browser.")
        notes = os.path.join(args.out, "notes.txt")
        with open(notes, "w") as f:
            f.write("Notes attached in the browser.\n")
        page.set_input_files("#attach", notes)
        page.wait_for_selector("#attached li:has-text('notes.txt')", timeout=30000)
        page.screenshot(path=os.path.join(args.out, "composer.png"))
        page.click("#send")
        page.wait_for_selector("#sent", timeout=30000)
        check("compose-and-send", "alice@rampart.test" in page.inner_text("#sent") and "with 1 attachment" in page.inner_text("#sent"),
              page.inner_text("main"))

        # --- drive: upload with progress, download, same bytes ------------------------------------
        big = os.path.join(args.out, f"drive-{args.drive_mb}mb.bin")
        with open(big, "wb") as f:
            block = hashlib.sha256(b"rampart web drive").digest() * 32768  # 1 MiB
            for i in range(args.drive_mb):
                f.write(bytes([i % 251]) + block[1:])
        with open(big, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        page.goto(base + "/drive")
        started = time.time()
        page.set_input_files("#upload-file", big)
        page.click("#upload-form button[type=submit]")
        page.wait_for_selector(f"#drive-files a:has-text('{os.path.basename(big)}')", timeout=120000)
        upload_seconds = time.time() - started
        page.screenshot(path=os.path.join(args.out, "drive.png"))
        started = time.time()
        with page.expect_download(timeout=120000) as download:
            page.click(f"#drive-files a:has-text('{os.path.basename(big)}')")
        back = os.path.join(args.out, "drive-back.bin")
        download.value.save_as(back)
        download_seconds = time.time() - started
        with open(back, "rb") as f:
            same = hashlib.sha256(f.read()).hexdigest() == digest
        os.remove(back)
        os.remove(big)
        check("drive-upload-download", same, f"{args.drive_mb} MB up {upload_seconds:.1f} s, down {download_seconds:.1f} s")
        # Rename (a new sealed revision of the name) and delete; `rampart drive ls` in another process agrees.
        row = page.locator(f"#drive-files li:has(a:has-text('{os.path.basename(big)}'))")
        row.locator("input[name=name]").fill("renamed in the browser.bin")
        with page.expect_navigation():
            row.locator("button:has-text('Rename')").click()
        renamed = page.locator("#drive-files a:has-text('renamed in the browser.bin')").count() == 1 \
            and page.locator(f"#drive-files a:has-text('{os.path.basename(big)}')").count() == 0
        listed = subprocess.run([args.rampart, "drive", "ls"], capture_output=True, text=True, timeout=60).stdout
        with page.expect_navigation():
            page.locator("#drive-files li:has(a:has-text('renamed in the browser.bin')) button:has-text('Delete')").click()
        gone = page.locator("#drive-files a:has-text('renamed in the browser.bin')").count() == 0
        after = subprocess.run([args.rampart, "drive", "ls"], capture_output=True, text=True, timeout=60).stdout
        check("drive-rename-delete", renamed and "renamed in the browser.bin" in listed and gone and "renamed in the browser.bin" not in after,
              f"{listed} | {after}")

        # --- drive folders: create, browse into, upload into, up, rename; a non-empty one is not deleted ---
        page.goto(base + "/drive")
        page.fill("#new-folder", "Reports")
        with page.expect_navigation():
            page.click("#mkdir-button")
        folder_row = "#drive-files li.folder:has(a:has-text('Reports/'))"
        made = page.locator(folder_row).count() == 1
        with page.expect_navigation():
            page.click(folder_row + " a")
        inside = page.inner_text("#drive-title")
        small = os.path.join(args.out, "in-folder.txt")
        with open(small, "w") as f:
            f.write("Filed in a folder from the browser.\n")
        page.set_input_files("#upload-file", small)
        page.click("#upload-form button[type=submit]")
        page.wait_for_selector("#drive-files a:has-text('in-folder.txt')", timeout=60000)
        uploaded_in = "folder=" in page.url
        page.screenshot(path=os.path.join(args.out, "drive-folder.png"))
        with page.expect_navigation():
            page.click("#folder-up")
        not_at_root = page.locator("#drive-files a:has-text('in-folder.txt')").count() == 0 and page.locator(folder_row).count() == 1
        cli_folder = subprocess.run([args.rampart, "drive", "ls", "Reports"], capture_output=True, text=True, timeout=60).stdout
        cli_root = subprocess.run([args.rampart, "drive", "ls"], capture_output=True, text=True, timeout=60).stdout
        page.locator(folder_row + " input[name=name]").fill("Reports 2026")
        with page.expect_navigation():
            page.locator(folder_row + " button:has-text('Rename')").click()
        renamed_row = "#drive-files li.folder:has(a:has-text('Reports 2026/'))"
        renamed = page.locator(renamed_row).count() == 1
        with page.expect_navigation():
            page.locator(renamed_row + " button:has-text('Delete')").click()
        refusal = page.inner_text("#error") if page.locator("#error").count() else ""
        page.goto(base + "/drive")
        kept = page.locator(renamed_row).count() == 1
        with page.expect_navigation():
            page.click(renamed_row + " a")
        with page.expect_navigation():
            page.locator("#drive-files li:has(a:has-text('in-folder.txt')) button:has-text('Delete')").click()
        with page.expect_navigation():
            page.click("#folder-up")
        with page.expect_navigation():
            page.locator(renamed_row + " button:has-text('Delete')").click()
        gone = page.locator(renamed_row).count() == 0
        check("drive-folders", made and inside == "Drive: Reports" and uploaded_in and not_at_root and "in-folder.txt" in cli_folder
              and "Reports/" in cli_root and "in-folder.txt" not in cli_root and renamed and "not empty" in refusal and kept and gone,
              f"made {made}, title {inside!r}, in {uploaded_in}, root {not_at_root}, cli {cli_folder!r} {cli_root!r}, renamed {renamed}, "
              f"refusal {refusal!r}, kept {kept}, gone {gone}")

        # --- settings and account pages -----------------------------------------------------------
        page.goto(base + "/settings")
        page.screenshot(path=os.path.join(args.out, "settings.png"))
        page.goto(base + "/account")
        page.screenshot(path=os.path.join(args.out, "account.png"))
        check("settings-and-account-pages", page.locator("#protectors").count() == 1, page.inner_text("main")[:300])
        # The account's sessions: this one marked, another device's ended from here.
        listed = page.locator("#sessions li").count()
        mine = page.locator("#sessions li:has-text('(this device)')").count()
        with page.expect_navigation():
            page.locator("#sessions li button:has-text('End the session')").first.click()
        check("account-sessions-end-one", listed >= 2 and mine == 1 and page.locator("#sessions li").count() == listed - 1
              and page.locator("#sessions li:has-text('(this device)')").count() == 1, page.inner_text("#sessions"))

        # --- every control labelled -----------------------------------------------------------------
        unlabelled = []
        for path in ["/mail", "/compose", "/drive", "/settings"]:
            page.goto(base + path)
            unlabelled += page.evaluate("""(path) => Array.from(document.querySelectorAll('input:not([type=hidden]), select, textarea:not([hidden]), [contenteditable]'))
                .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
                .map(e => path + ' ' + (e.id || e.name || e.tagName))""", path)
        check("every-control-labelled", not unlabelled, unlabelled)

        # --- the keyboard alone: Tab to the first message, Enter opens it --------------------------------
        page.goto(base + "/mail")
        reached = False
        for _ in range(60):
            page.keyboard.press("Tab")
            if page.evaluate("() => !!(document.activeElement && document.activeElement.closest('#messages'))"):
                reached = True
                break
        if reached:
            page.keyboard.press("Enter")
            page.wait_for_url(base + "/message/*")
        check("keyboard-opens-a-message", reached and "/message/" in page.url, page.url)

        # --- lock from the command line: the open page locks within a second ------------------------
        # The page asks /api/state every 250 ms; on a quiet machine it is on the unlock page 0.3-0.5 s
        # after the agent zeroized the key (printed by the test). The check allows 10 s: the suite
        # runs beside every other one, and a CI run at load 16 on 2 cores took 1.27 s. A page that
        # never locks, or shows mail once locked, fails it.
        page.goto(base + "/mail")
        subprocess.run([args.rampart, "lock"], check=True, stdout=subprocess.DEVNULL)
        started = time.time()  # from the moment the agent has zeroized the key
        page.wait_for_url(base + "/unlock*", timeout=10000)
        seconds = time.time() - started
        text = page.inner_text("body")
        check("lock-empties-open-page", seconds < 10.0 and args.xss_subject not in text and "Lunch" not in text,
              f"{seconds:.2f} s")
        page.screenshot(path=os.path.join(args.out, "locked.png"))
        page.fill("#pin", args.pin)
        page.click("#unlock-form button[type=submit]")
        page.wait_for_url(base + "/mail*", timeout=30000)
        check("unlock-again", args.xss_subject in page.inner_text("#messages"), page.url)

        check("no-dialog-at-all", not dialogs, dialogs)
        browser.close()
    evil.shutdown()
    print(json.dumps({"done": True, "checks": results}), flush=True)


if __name__ == "__main__":
    main()
