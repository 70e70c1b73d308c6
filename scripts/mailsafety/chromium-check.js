#!/usr/bin/env node
// Real-browser check of sanitized mail: headless Chromium (Debian `chromium`) loads every
// rendered document from a loopback HTTP server, with the viewer's stage-2 CSP as an HTTP header
// (and as the <meta> that renderDocument puts first in <head>), and this script counts through
// the DevTools protocol:
//   - scripts: every script the page compiles (Debugger.scriptParsed: inline <script>, event
//     handlers, javascript: URLs all compile a script) — the canary any script would trip —
//     plus JavaScript dialogs (alert/confirm/prompt);
//   - requests: every network request other than the document itself (data: URLs and the app
//     scheme are local and not counted).
// Input: a directory with N.html files and policy.txt (the CSP header value; N.policy overrides it
// for one document). Output: JSON with totals and, per document, what was seen.
// Usage: node --experimental-websocket chromium-check.js DIR OUT.json
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const os = require('os');
const { spawn } = require('child_process');

const [dir, out] = process.argv.slice(2);
if (!dir || !out) { console.error('usage: chromium-check.js DIR OUT.json'); process.exit(2); }
const policy = fs.readFileSync(path.join(dir, 'policy.txt'), 'utf8').trim();
const documents = fs.readdirSync(dir).filter((f) => /^\d+\.html$/.test(f)).sort((a, b) => parseInt(a) - parseInt(b));

const serverHits = [];
const server = http.createServer((req, res) => {
  const m = /^\/doc\/(\d+)$/.exec(req.url);
  if (m && fs.existsSync(path.join(dir, m[1] + '.html'))) {
    // N.policy overrides the policy for one document (the test's positive controls).
    const own = path.join(dir, m[1] + '.policy');
    const csp = fs.existsSync(own) ? fs.readFileSync(own, 'utf8').trim() : policy;
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': csp });
    res.end(fs.readFileSync(path.join(dir, m[1] + '.html')));
  } else {
    serverHits.push(req.url);
    res.writeHead(404); res.end();
  }
});

function fail(message) { console.error(message); process.exit(1); }

async function main() {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const port = server.address().port;
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'rampart-chromium-'));
  const chrome = spawn('chromium', ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-extensions',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-default-apps',
    '--remote-debugging-port=0', '--user-data-dir=' + profile, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const wsURL = await new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error('chromium did not print its DevTools address within 30 s: ' + buffer.slice(-500))), 30000);
    chrome.stderr.on('data', (d) => {
      buffer += d;
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(buffer);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    chrome.on('exit', (code) => reject(new Error('chromium exited with ' + code + ': ' + buffer.slice(-500))));
  });
  const devtoolsPort = new URL(wsURL).port;
  const list = await (await fetch(`http://127.0.0.1:${devtoolsPort}/json/list`)).json();
  const page = list.find((t) => t.type === 'page');
  const ws = new WebSocket(page.webSocketDebuggerUrl);
  await new Promise((r, j) => { ws.onopen = r; ws.onerror = j; });
  let nextId = 1;
  const pending = new Map();
  const listeners = [];
  ws.onmessage = (event) => {
    const msg = JSON.parse(event.data);
    if (msg.id && pending.has(msg.id)) { pending.get(msg.id)(msg); pending.delete(msg.id); return; }
    for (const l of listeners) l(msg);
  };
  const send = (method, params = {}) => new Promise((resolve) => {
    const id = nextId++;
    pending.set(id, resolve);
    ws.send(JSON.stringify({ id, method, params }));
  });
  let current = null;
  const results = [];
  listeners.push((msg) => {
    if (!current) return;
    if (msg.method === 'Debugger.scriptParsed') {
      current.scripts.push(msg.params.url || '(inline)');
    } else if (msg.method === 'Page.javascriptDialogOpening') {
      current.dialogs.push(msg.params.message);
      send('Page.handleJavaScriptDialog', { accept: false });
    } else if (msg.method === 'Network.requestWillBeSent') {
      const url = msg.params.request.url;
      if (url === current.url || url.startsWith('data:') || url.startsWith('rampart-cid:')) return;
      current.requests.push(url);
    } else if (msg.method === 'Page.loadEventFired') {
      current.loaded();
    }
  });
  await send('Page.enable');
  await send('Network.enable');
  await send('Debugger.enable');
  await send('Runtime.enable');
  for (const file of documents) {
    const index = parseInt(file);
    const url = `http://127.0.0.1:${port}/doc/${index}`;
    let loaded;
    const loadedPromise = new Promise((r) => { loaded = r; });
    current = { index, url, scripts: [], dialogs: [], requests: [], loaded };
    await send('Page.navigate', { url });
    await Promise.race([loadedPromise, new Promise((r) => setTimeout(r, 5000))]);
    // Give timers, animations (SVG <set>/<animate> begin events) and lazy loads a moment.
    await new Promise((r) => setTimeout(r, 150));
    results.push({ index: current.index, scripts: current.scripts, dialogs: current.dialogs, requests: current.requests });
    current = null;
  }
  ws.close();
  // Let Chromium exit before removing its profile (it writes to it while shutting down).
  const exited = new Promise((r) => chrome.once('exit', r));
  chrome.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  server.close();
  try { fs.rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }); } catch (e) { console.error('could not remove ' + profile + ': ' + e.message); }
  const summary = {
    documents: results.length,
    scriptsCompiled: results.reduce((n, r) => n + r.scripts.length, 0),
    dialogs: results.reduce((n, r) => n + r.dialogs.length, 0),
    requests: results.reduce((n, r) => n + r.requests.length, 0),
    serverHitsOtherThanDocuments: serverHits.length,
    serverHits: [...new Set(serverHits)],
    perDocument: results.filter((r) => r.scripts.length || r.dialogs.length || r.requests.length),
  };
  fs.writeFileSync(out, JSON.stringify(summary, null, 1));
  console.log(`${summary.documents} documents: ${summary.scriptsCompiled} scripts compiled, ${summary.dialogs} dialogs, ${summary.requests} requests, ${summary.serverHitsOtherThanDocuments} stray server hits`);
}
main().catch((e) => fail(String(e && e.stack || e)));
