#!/usr/bin/env node
// Sanitize a JSON array of HTML messages with DOMPurify 2.4.1 under jsdom (Debian packages) and
// print the seconds of each round as JSON. Baseline for `rampart-dev bench sanitize`.
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
const runs = [];
for (let r = 0; r < rounds; r++) {
  const start = process.hrtime.bigint();
  for (const m of messages) DOMPurify.sanitize(m);
  runs.push(Number(process.hrtime.bigint() - start) / 1e9);
}
const sorted = [...runs].sort((a, b) => a - b);
const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
console.log(JSON.stringify({ bytes: total, runs, seconds: median, mbPerSecond: total / median / 1e6 }));
