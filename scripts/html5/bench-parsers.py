#!/usr/bin/env python3
"""Other HTML parsers, timed on the `rampart-dev bench html5` corpus, as same-run baselines.

Usage: .venv/bin/python3 bench-parsers.py DIR PARSER --serve
       .venv/bin/python3 bench-parsers.py - PARSER --stdin

DIR holds the corpus as files (read as bytes, in name order). PARSER is one of:
  lxml     lxml.html.document_fromstring (libxml2's HTML 4 parser, not HTML5: the fastest of the
           three here)
  lexbor   selectolax's LexborHTMLParser (lexbor, a C HTML5 parser)
  myhtml   selectolax's HTMLParser (Modest/myhtml); selectolax dropped it in 1.0, and
           scripts/deps/html5.pip pins 1.0.2 for lexbor, so it is reported as not available
  html5ever  markupever's parse (html5ever, Servo's HTML5 parser in Rust)

The script prints {"ready": bytes, "parser": ..., "version": ...} on one line, then for every
line "round" read on standard input parses every document once and prints that pass's seconds on
a line of its own (until end of input or "quit"). Each parse builds the whole tree and frees it
before the next document, as Rampart's pass does. myhtml is given detect_encoding=False (its
faster path: the documents are UTF-8 and say so).

With --stdin (the whole-process comparison of `bench html5`, next to `rampart-dev html5
serialize`): parses standard input as one document and writes its serialization to standard
output, then exits.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_serve import serve_rounds  # noqa: E402 (scripts/bench_serve.py)

directory, parser = sys.argv[1], sys.argv[2]
stdin_mode = "--stdin" in sys.argv[3:]
if "--serve" not in sys.argv[3:] and not stdin_mode:
    sys.exit(__doc__)

if parser == "lxml":
    import lxml.etree
    import lxml.html
    parse = lxml.html.document_fromstring
    serialize = lambda tree: lxml.html.tostring(tree)
    version = "lxml %s, libxml2 %s" % (lxml.__version__, ".".join(map(str, lxml.etree.LIBXML_VERSION)))
elif parser in ("lexbor", "myhtml"):
    import selectolax
    version = "selectolax %s" % getattr(selectolax, "__version__", "?")
    if parser == "lexbor":
        from selectolax.lexbor import LexborHTMLParser as parse
    else:
        from selectolax.parser import HTMLParser
        parse = lambda document: HTMLParser(document, detect_encoding=False)
    serialize = lambda tree: tree.html.encode("utf-8")
elif parser == "html5ever":
    import markupever
    from importlib.metadata import version as package_version
    version = "markupever %s (html5ever)" % package_version("markupever")
    options = markupever.HtmlOptions()
    parse = lambda document: markupever.parse(document, options)
    serialize = lambda tree: tree.serialize().encode("utf-8")
else:
    sys.exit("unknown parser %r (lxml, lexbor, myhtml, html5ever)" % parser)

if stdin_mode:
    sys.stdout.buffer.write(serialize(parse(sys.stdin.buffer.read())))
    sys.stdout.buffer.write(b"\n")
    sys.exit(0)

docs = [open(os.path.join(directory, name), "rb").read() for name in sorted(os.listdir(directory))]

# One untimed pass, so the first timed one does not pay for loading and first allocations.
for document in docs:
    parse(document)
print(json.dumps({"ready": sum(map(len, docs)), "parser": parser, "version": version}), flush=True)
serve_rounds(parse, docs)
