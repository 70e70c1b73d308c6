#!/usr/bin/env node
// Sanitize a JSON array of HTML messages with DOMPurify 2.4.1 under jsdom (Debian packages) and
// print seconds and MB/s as JSON. Baseline for `rampart bench sanitize`.
// Usage: NODE_PATH=/usr/share/nodejs node bench-dompurify.js messages.json ROUNDS
'use strict';
globalThis.shadowNode = { __depth: 0 }; // Debian's patched 2.4.1 needs this global (see dompurify-diff.js).
const fs = require('fs');
const { JSDOM } = require('jsdom');
const createDOMPurify = require('dompurify');
const DOMPurify = createDOMPurify(new JSDOM('').window);
const messages = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const rounds = parseInt(process.argv[3] || '3', 10);
const total = messages.reduce((n, m) => n + Buffer.byteLength(m, 'utf8'), 0);
let best = Infinity;
for (let r = 0; r < rounds; r++) {
  const start = process.hrtime.bigint();
  for (const m of messages) DOMPurify.sanitize(m);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  best = Math.min(best, seconds);
}
console.log(JSON.stringify({ bytes: total, seconds: best, mbPerSecond: total / best / 1e6 }));
