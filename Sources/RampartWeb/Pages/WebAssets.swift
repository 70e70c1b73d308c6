/// The app's own script and style sheet, served from `/static/` (the pages' CSP allows scripts
/// and styles from the app's origin only, never inline, except the composer's by nonce).
///
/// Trust-model rows **device memory (moderate)** — the script asks the account state every
/// 250 ms and empties the page and shows the unlock form as soon as the account is locked — and
/// **local web access**: the script sends the CSRF token with the requests it makes itself.
enum WebAssets {
    static let script = #"""
    (function () {
      'use strict';
      var body = document.body;
      var csrf = body.getAttribute('data-csrf');
      var page = body.getAttribute('data-page');
      // A lock anywhere (rampart lock, autolock, another page) empties this page within a second.
      if (csrf && page !== 'unlock') {
        var gone = false;
        var lockPage = function () {
          if (gone) { return; }
          gone = true;
          var main = document.getElementById('main');
          if (main) { main.textContent = ''; }
          location.replace('/unlock');
        };
        var check = function () {
          fetch('/api/state', { credentials: 'same-origin', cache: 'no-store' })
            .then(function (r) { return r.status === 200 ? r.json() : { state: 'locked' }; })
            .then(function (s) { if (s.state !== 'unlocked') { lockPage(); } })
            .catch(function () {});
        };
        setInterval(check, 250);
      }
      // An unread message is marked read by this script, with a POST carrying the CSRF token (the
      // page's GET changes nothing, so a link from elsewhere cannot mark mail read).
      var unread = document.querySelector('[data-mark-read]');
      if (unread && csrf) {
        fetch(unread.getAttribute('data-mark-read'), { method: 'POST', credentials: 'same-origin', headers: { 'X-Rampart-CSRF': csrf } })
          .catch(function () {});
      }
      // The composer: the editor's content goes into the form; the recipients' encryption is shown.
      var composer = document.getElementById('composer');
      if (composer) {
        var editor = document.getElementById('editor');
        composer.addEventListener('submit', function () { document.getElementById('body').value = editor.innerHTML; });
        var to = document.getElementById('to');
        var status = document.getElementById('e2ee-status');
        // Only the answer for the latest recipients is shown: an earlier, slower answer (each
        // change and blur asks) must not say "encrypted" about recipients that are no longer there.
        // Until the answer comes, and when it cannot be had, the page says it does not know.
        var asked = 0;
        var checkRecipients = function () {
          var ticket = ++asked;
          var value = to.value;
          if (!value.trim()) { status.className = ''; status.textContent = ''; return; }
          status.className = 'pending';
          status.textContent = 'Checking the recipients\u2019 encryption\u2026';
          fetch('/api/recipients?to=' + encodeURIComponent(value), { credentials: 'same-origin' })
            .then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
            .then(function (list) {
              if (ticket !== asked) { return; }
              var plain = list.filter(function (e) { return !e.e2ee; }).map(function (e) { return e.address; });
              status.className = plain.length ? 'warning' : 'ok';
              status.textContent = plain.length
                ? 'NOT end-to-end encrypted: ' + plain.join(', ') + ' (outside this server, no pinned key: sent as ordinary e-mail).'
                : (list.length ? 'End-to-end encrypted to every recipient.' : '');
            }).catch(function () {
              if (ticket !== asked) { return; }
              status.className = 'warning';
              status.textContent = 'Could not check the recipients\u2019 encryption: it may not be end-to-end encrypted.';
            });
        };
        var attach = document.getElementById('attach');
        var attachStatus = document.getElementById('attach-status');
        var send = document.getElementById('send');
        var pending = 0;
        attach.addEventListener('change', function () {
          Array.prototype.forEach.call(attach.files, function (file) {
            pending += 1;
            send.disabled = true;
            attachStatus.textContent = 'Attaching ' + file.name + '…';
            fetch('/compose/attachment?name=' + encodeURIComponent(file.name), {
              method: 'PUT', credentials: 'same-origin', body: file,
              headers: { 'X-Rampart-CSRF': csrf, 'Content-Type': 'application/octet-stream' }
            }).then(function (r) { return r.ok ? r.json() : Promise.reject(r.status); })
              .then(function (answer) {
                var field = document.createElement('input');
                field.type = 'hidden'; field.name = 'attachment'; field.value = answer.id;
                composer.appendChild(field);
                var item = document.createElement('li');
                item.textContent = file.name;
                document.getElementById('attached').appendChild(item);
                attachStatus.textContent = 'Attached ' + file.name + '.';
              }, function (status) { attachStatus.textContent = 'Could not attach ' + file.name + ' (' + status + ').'; })
              .then(function () { pending -= 1; if (pending === 0) { send.disabled = false; } });
          });
          attach.value = '';
        });
        to.addEventListener('change', checkRecipients);
        to.addEventListener('blur', checkRecipients);
        if (to.value) { checkRecipients(); }
      }
      // Drive: upload with progress, into the folder the page shows.
      var upload = document.getElementById('upload-form');
      if (upload) {
        upload.addEventListener('submit', function (event) {
          event.preventDefault();
          var file = document.getElementById('upload-file').files[0];
          if (!file) { return; }
          var bar = document.getElementById('upload-progress');
          var said = document.getElementById('upload-status');
          var xhr = new XMLHttpRequest();
          xhr.open('PUT', '/drive/upload?name=' + encodeURIComponent(file.name)
            + '&folder=' + encodeURIComponent(upload.getAttribute('data-folder') || ''));
          xhr.setRequestHeader('X-Rampart-CSRF', csrf);
          xhr.setRequestHeader('Content-Type', 'application/octet-stream');
          xhr.upload.onprogress = function (e) {
            if (e.lengthComputable) { bar.value = Math.round(100 * e.loaded / e.total); said.textContent = 'Sending ' + bar.value + '%'; }
          };
          xhr.onload = function () {
            if (xhr.status === 200) { said.textContent = 'Uploaded ' + file.name + '.'; location.reload(); }
            else { said.textContent = 'Upload failed (' + xhr.status + ').'; }
          };
          said.textContent = 'Sending…';
          xhr.send(file);
        });
      }
    })();
    """#

    static let styleSheet = #"""
    :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
    body { margin: 0; }
    header nav { display: flex; gap: 1em; align-items: center; padding: .6em 1em; background: #1f3a5f; }
    header nav a, header nav button { color: #fff; }
    header nav button { background: transparent; border: 1px solid #fff; border-radius: 4px; padding: .2em .8em; }
    main { padding: 1em; max-width: 72em; }
    a:focus, button:focus, input:focus, select:focus, [contenteditable]:focus { outline: 3px solid #f0a500; outline-offset: 2px; }
    form.inline { display: inline; }
    .columns { display: flex; gap: 2em; }
    #labels ul, #messages { list-style: none; padding: 0; }
    #labels a[aria-current] { font-weight: bold; }
    .unread-count { background: #1f3a5f; color: #fff; border-radius: 1em; padding: 0 .5em; font-size: .85em; }
    #messages li { padding: .35em 0; border-bottom: 1px solid #ccc8; }
    #messages a { display: flex; gap: 1em; text-decoration: none; color: inherit; }
    #messages .from { width: 14em; overflow: hidden; }
    #messages .subject { flex: 1; }
    #messages .unread .subject { font-weight: bold; }
    .badge { font-size: .8em; border: 1px solid currentColor; border-radius: 3px; padding: 0 .3em; }
    dl.headers { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1em; }
    dl.headers dt { font-weight: bold; }
    #viewer { width: 100%; height: 60vh; border: 1px solid #ccc; background: #fff; }
    #editor { min-height: 12em; border: 1px solid #888; padding: .5em; }
    #e2ee-status.warning, [role=alert] { color: #b00020; font-weight: bold; }
    fieldset { margin: 1em 0; }
    """#
}
