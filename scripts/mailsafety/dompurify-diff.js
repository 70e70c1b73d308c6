#!/usr/bin/env node
// Differential check of Rampart's mail sanitizer against DOMPurify (Debian node-dompurify 2.4.1
// + node-jsdom). Input: a JSON file [{vector, rampart}] written by the MailSafety tests. For each
// vector, DOMPurify sanitizes the same input; both outputs are parsed (as the innerHTML of a
// <div>, the context Rampart renders in) and reduced to "features": element names (with
// namespace) and element@attribute pairs, plus the scheme of URL attributes. Output: the features
// Rampart keeps that DOMPurify removes, per vector and in total.
//
// Usage: NODE_PATH=/usr/share/nodejs node dompurify-diff.js IN.json OUT.json
'use strict';
// Debian's security patch of DOMPurify 2.4.1 refers to an undeclared global `shadowNode`
// (ReferenceError on any input with '<'); declaring it makes the library usable.
globalThis.shadowNode = { __depth: 0 };
const fs = require('fs');
const { JSDOM } = require('jsdom');
const createDOMPurify = require('dompurify');

const [input, output] = process.argv.slice(2);
if (!input || !output) { console.error('usage: dompurify-diff.js IN.json OUT.json'); process.exit(2); }
const window = new JSDOM('<!DOCTYPE html><body></body>').window;
const DOMPurify = createDOMPurify(window);
const urlAttributes = new Set(['href', 'src', 'srcset', 'action', 'formaction', 'xlink:href', 'background', 'poster', 'cite', 'longdesc', 'ping', 'data']);

function features(html) {
  const div = window.document.createElement('div');
  div.innerHTML = html;
  const out = new Set();
  const walker = window.document.createTreeWalker(div, window.NodeFilter.SHOW_ELEMENT);
  let node = walker.nextNode();
  while (node) {
    const ns = node.namespaceURI === 'http://www.w3.org/2000/svg' ? 'svg:' : node.namespaceURI === 'http://www.w3.org/1998/Math/MathML' ? 'math:' : '';
    const tag = ns + node.localName;
    out.add(tag);
    for (const attr of node.attributes) {
      out.add(tag + '@' + attr.name);
      if (urlAttributes.has(attr.name)) {
        const m = /^\s*([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(attr.value);
        out.add(tag + '@' + attr.name + '=' + (m ? m[1].toLowerCase() : attr.value.startsWith('#') ? '#' : 'relative'));
      }
    }
    node = walker.nextNode();
  }
  return out;
}

const items = JSON.parse(fs.readFileSync(input, 'utf8'));
const differences = [];
const summary = {};
let dompurifyErrors = 0;
const started = Date.now();
for (let i = 0; i < items.length; i++) {
  const { vector, rampart } = items[i];
  let purified;
  try {
    purified = DOMPurify.sanitize(vector);
  } catch (e) {
    dompurifyErrors++;
    continue;
  }
  const ours = features(rampart);
  const theirs = features(purified);
  const extra = [...ours].filter((f) => !theirs.has(f)).sort();
  if (extra.length) {
    differences.push({ index: i, vector, rampart, dompurify: purified, extra });
    for (const f of extra) summary[f] = (summary[f] || 0) + 1;
  }
}
fs.writeFileSync(output, JSON.stringify({ dompurifyVersion: DOMPurify.version || '2.4.1', vectors: items.length, dompurifyErrors, milliseconds: Date.now() - started, differences, summary }, null, 1));
console.log(`${items.length} vectors, ${differences.length} with features Rampart keeps and DOMPurify removes, ${dompurifyErrors} DOMPurify errors`);
