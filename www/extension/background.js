// meetcite extension service worker: owns the wasm module and verifies on request.
// Quote, number, speaker and history checks run here; no network access is used or needed.
import init, { buildContext, verify } from './pkg/meetcite.js';

let ready = null;
const ensure = () => (ready ??= init({ module_or_path: chrome.runtime.getURL('pkg/meetcite_bg.wasm') }));

chrome.runtime.onMessage.addListener((msg, _sender, sendResponse) => {
  if (!msg || msg.type !== 'meetcite:verify') return false;
  (async () => {
    try {
      await ensure();
      const ctx = buildContext(msg.chunks, msg.options || {});
      const report = verify(msg.answer, ctx.sources, { policy: 'warn' });
      sendResponse({ ok: true, report, sources: ctx.sources });
    } catch (e) {
      sendResponse({ ok: false, error: { code: e.code || 'error', message: String(e.message || e) } });
    }
  })();
  return true; // async response
});
