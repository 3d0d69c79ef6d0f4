// meetcite content script. Acts only on pages that embed meetcite data:
//   <script type="application/meetcite+json">{"chunks": [...], "answer": "...", "options": {...}}</script>
// and overlays a panel (shadow DOM) with a status per claim; citations seek the page's first
// <video>/<audio> element. Pages without that markup are left untouched.
(() => {
  const blocks = document.querySelectorAll('script[type="application/meetcite+json"]');
  if (!blocks.length) return;

  const STATUS = { supported: ['supported', '#1b7f3b', '#e3f5e8'], flagged: ['flagged', '#8a5a00', '#fff3d6'],
    unknown_source: ['unknown source', '#b3261e', '#fde7e5'], unparsable: ['unparsable', '#b3261e', '#fde7e5'] };

  const host = document.createElement('div');
  host.id = 'meetcite-overlay';
  host.setAttribute('data-meetcite', 'pending');
  const root = host.attachShadow({ mode: 'open' });
  root.innerHTML = `<style>
    :host { all: initial; }
    .panel { position: fixed; right: 12px; bottom: 12px; z-index: 2147483647; width: min(380px, calc(100vw - 24px)); max-height: 70vh; overflow: auto;
      font: 13px/1.4 system-ui, sans-serif; color: #1d1d1f; background: #fff; border: 1px solid #ccc; border-radius: 10px; box-shadow: 0 6px 24px rgba(0,0,0,.2); padding: 10px 12px; }
    h2 { font-size: 14px; margin: 0 0 6px; display: flex; justify-content: space-between; }
    ol { list-style: none; margin: 0; padding: 0; display: grid; gap: 6px; }
    li { border-left: 4px solid #ccc; padding: 4px 8px; border-radius: 4px; background: #fafafa; }
    .badge { font-size: 11px; font-weight: 600; padding: 1px 6px; border-radius: 999px; margin-right: 4px; }
    button.cite { font: 11px ui-monospace, monospace; margin-top: 3px; cursor: pointer; border: 1px solid #ccc; border-radius: 4px; background: #fff; }
    .why { color: #666; font-size: 12px; }
    .close { border: 0; background: none; cursor: pointer; font-size: 14px; }
    .ctx { display: block; margin-top: 3px; font-size: 12px; color: #444; }
    mark { color: inherit; border-radius: 3px; padding: 0 2px; }
  </style><div class="panel" role="complementary" aria-label="meetcite verification"><h2><span>meetcite</span><button class="close" title="Close">✕</button></h2><ol></ol></div>`;
  root.querySelector('.close').addEventListener('click', () => host.remove());
  const list = root.querySelector('ol');
  document.documentElement.append(host);

  const media = () => document.querySelector('video, audio');
  const item = (html) => {
    const li = document.createElement('li');
    li.append(...html);
    return li;
  };
  const span = (cls, text, style) => {
    const s = document.createElement('span');
    s.className = cls;
    s.textContent = text;
    if (style) Object.assign(s.style, style);
    return s;
  };

  let pending = blocks.length;
  for (const block of blocks) {
    let data;
    try {
      data = JSON.parse(block.textContent);
    } catch (e) {
      list.append(item([span('why', `invalid meetcite data: ${e.message}`)]));
      if (--pending === 0) host.setAttribute('data-meetcite', 'done');
      continue;
    }
    const answer = typeof data.answer === 'string' ? data.answer : JSON.stringify(data.answer);
    chrome.runtime.sendMessage({ type: 'meetcite:verify', chunks: data.chunks, answer, options: data.options || {} }, (res) => {
      if (!res || !res.ok) {
        list.append(item([span('why', `meetcite: ${(res && res.error && res.error.message) || chrome.runtime.lastError?.message || 'failed'}`)]));
      } else {
        for (const c of res.report.claims) {
          const [label, fg, bg] = STATUS[c.status] || [c.status, '#333', '#eee'];
          const parts = [span('badge', label, { color: fg, background: bg }), document.createTextNode(c.text)];
          // the claim's own quote and its further ones: a seek button and the marked words each
          for (const q of [c, ...(c.more_quotes || [])]) {
            if (q.link) {
              const b = document.createElement('button');
              b.className = 'cite';
              b.dataset.seconds = String(q.link.seconds);
              b.textContent = `▶ ${q.link.label}`;
              b.addEventListener('click', () => {
                const m = media();
                if (m) {
                  m.currentTime = q.link.seconds;
                  m.dataset.meetciteSeeked = String(q.link.seconds);
                } else if (q.link.url) window.open(q.link.url, '_blank', 'noopener');
              });
              parts.push(document.createElement('br'), b);
            }
            // the cited words in their transcript, marked on the exact characters in the verdict's
            // colour (span: UTF-16 offsets into the source chunk's text)
            const src = q.span && (res.sources || []).find((s) => s.chunk.id === q.chunk_id);
            if (src) {
              const t = src.chunk.text;
              const [a, z] = q.span;
              const from = Math.max(0, a - 60);
              const to = Math.min(t.length, z + 60);
              const m = document.createElement('mark');
              m.textContent = t.slice(a, z);
              Object.assign(m.style, { background: bg, boxShadow: `inset 0 -2px ${fg}` });
              const ctx = span('ctx', `${from > 0 ? '…' : ''}${t.slice(from, a)}`);
              ctx.append(m, `${t.slice(z, to)}${to < t.length ? '…' : ''}`);
              parts.push(ctx);
            }
          }
          if (c.reasons.length) parts.push(document.createElement('br'), span('why', c.reasons.map((r) => r.message).join('; ')));
          const li = item(parts);
          li.style.borderLeftColor = fg;
          li.dataset.status = c.status;
          list.append(li);
        }
        host.dataset.supported = String(res.report.counts.supported);
        host.dataset.flagged = String(res.report.claims.length - res.report.counts.supported);
      }
      if (--pending === 0) host.setAttribute('data-meetcite', 'done');
    });
  }
})();
