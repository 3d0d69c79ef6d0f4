// meetcite demo UI. All heavy work (wasm, model, verification) runs in a Web Worker: the package's
// own meetcite/worker (pkg/worker.js), as an app would use it.
import { VerifierWorker } from './pkg/worker.js';
import { modelFromFiles } from './pkg/model.js';

const $ = (id) => document.getElementById(id);

const MODEL_URLS = {
  model: 'models/nli-minilm-l6-int8.onnx',
  tokenizer: 'models/tokenizer.json',
  config: 'models/config.json',
};
let examples = null; // data/examples.json, written by scripts/build-wasm.sh

// ------------------------------------------------------------------ worker
// (`let`: a picked model folder that needs tract swaps in meetcite/full's worker, see useModelFolder)
let started = VerifierWorker.create();
started.catch((e) => showError(e));
const call = async (method, ...args) => (await started)[method](...args);

// ------------------------------------------------------------------ state
const state = {
  modelReady: false,
  modelFailed: false,
  context: null, // result of buildContext for the current chunks/options
  contextKey: null,
  report: null,
  timings: {},
  imported: null, // chunks read from a transcript file (JS objects, UTF-16 offsets), while the text box is not edited
  userMedia: false, // a recording the user picked (an object URL; never uploaded)
};
window.meetciteDemo = state; // for tests and curious users

function showError(e) {
  const el = $('error');
  if (!e) {
    el.hidden = true;
    el.textContent = '';
    return;
  }
  el.hidden = false;
  el.textContent = `${e.code ? `[${e.code}] ` : ''}${e.message}`;
}

function fmtBytes(n) {
  return n > 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.round(n / 1e3)} kB`;
}

function clock(s) {
  s = Math.max(0, Math.floor(s));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${String(m).padStart(2, '0')}:${sec}`;
}

function showTimings() {
  const t = state.timings;
  const parts = [];
  if (t.load) parts.push(`model ${t.load.cached ? 'from cache' : 'downloaded'} + ready in ${t.load.totalMs} ms`);
  if (t.verify != null) parts.push(`last verification ${t.verify} ms`);
  $('timings').textContent = parts.join(' · ');
}

// ------------------------------------------------------------------ silent media for seeking
// The fixture has no recording: generate a silent 8-bit mono WAV long enough to cover every
// chunk, so citations can seek it. No network request, nothing leaves the page.
function silentWav(seconds, rate = 8000) {
  const n = Math.ceil(seconds * rate);
  const buf = new ArrayBuffer(44 + n);
  const v = new DataView(buf);
  const str = (o, s) => [...s].forEach((c, i) => v.setUint8(o + i, c.charCodeAt(0)));
  str(0, 'RIFF');
  v.setUint32(4, 36 + n, true);
  str(8, 'WAVE');
  str(12, 'fmt ');
  v.setUint32(16, 16, true);
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, 1, true); // mono
  v.setUint32(24, rate, true);
  v.setUint32(28, rate, true); // byte rate
  v.setUint16(32, 1, true); // block align
  v.setUint16(34, 8, true); // bits
  str(36, 'data');
  v.setUint32(40, n, true);
  new Uint8Array(buf, 44).fill(128); // 8-bit PCM silence
  return new Blob([buf], { type: 'audio/wav' });
}

let mediaUrl = null;
function prepareMedia(chunks) {
  if (state.userMedia) return; // the user's own recording stays
  const end = Math.max(60, ...chunks.map((c) => Number(c.end) || 0));
  const media = $('media');
  if (mediaUrl) URL.revokeObjectURL(mediaUrl);
  mediaUrl = URL.createObjectURL(silentWav(Math.ceil(end) + 5));
  media.src = mediaUrl;
  media.dataset.duration = String(Math.ceil(end) + 5);
  const withUrl = chunks.find((c) => c.recording_url);
  $('media-note').textContent = withUrl
    ? 'Silent placeholder track (recordings open in a new tab from each citation).'
    : 'No recording in these chunks: a silent placeholder track stands in so citations can seek.';
}

function seek(seconds) {
  const media = $('media');
  const go = () => {
    media.currentTime = seconds;
    media.dataset.seekedTo = String(seconds);
  };
  if (media.readyState >= 1) go();
  else media.addEventListener('loadedmetadata', go, { once: true });
}

// ------------------------------------------------------------------ inputs
function readChunks() {
  const raw = $('chunks').value;
  let chunks;
  try {
    chunks = JSON.parse(raw);
  } catch (e) {
    const err = new Error(`chunks: ${e.message}`);
    err.code = 'invalid_json';
    throw err;
  }
  return Array.isArray(chunks) ? chunks : chunks.chunks || [];
}

function contextOptions() {
  const q = $('question').value.trim();
  return { order: $('order').value, question: q || undefined };
}

// Build (or reuse) the context: the lookup table verification needs.
async function ensureContext() {
  const key = JSON.stringify([$('chunks').value, contextOptions()]);
  if (state.context && state.contextKey === key) return state.context;
  readChunks(); // surface JSON errors with a clear message
  // The textarea holds the file format (JSON string, UTF-8 byte offsets), exactly what the CLI reads;
  // chunks imported from a transcript file are JS objects (UTF-16 offsets) until the box is edited.
  const ctx = await call('buildContext', state.imported ?? $('chunks').value, contextOptions());
  state.context = ctx;
  state.contextKey = key;
  prepareMedia(ctx.sources.map((s) => s.chunk));
  return ctx;
}

async function onBuild() {
  showError(null);
  try {
    const ctx = await ensureContext();
    $('prompt').textContent = ctx.prompt;
    $('prompt-meta').textContent = `${ctx.sources.length} sources, ${ctx.prompt.length} characters${ctx.dropped.length ? `, ${ctx.dropped.length} dropped` : ''}`;
    $('prompt-box').open = true;
    $('copy').disabled = false;
  } catch (e) {
    showError(e);
  }
}

async function onCopy() {
  const text = $('prompt').textContent;
  try {
    await navigator.clipboard.writeText(text);
    $('copy-status').textContent = 'Copied.';
  } catch {
    // clipboard permission denied (e.g. headless): select the text instead
    const r = document.createRange();
    r.selectNodeContents($('prompt'));
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(r);
    $('copy-status').textContent = 'Selected — press Ctrl/Cmd+C.';
  }
}

// The "stream" toggle: the answer is replayed into the text box at an LLM's pace (4 characters
// every 20 ms, about 50 tokens a second) and pushed to the worker's stream as it goes; each claim's
// verdict is shown as soon as its JSON object is complete, and finish() replaces them all with the
// report (the one verify gives) once the history check has run.
const TOKEN_CHARS = 4;
const TOKEN_MS = 20;

async function onStream(worker, ctx, policy) {
  const answer = $('answer').value;
  const s = await worker.stream(ctx.sources, { policy });
  const claims = new Map(); // index -> verdict, as they arrive
  const nli = worker.loaded;
  const t0 = performance.now();
  state.streamEvents = [];
  const show = (events) => {
    for (const e of events) {
      state.streamEvents.push({ type: e.type, index: e.type === 'retract' ? e.index : e.claim.index, at: Math.round(performance.now() - t0), typed: $('answer').value.length });
      if (e.type === 'retract') claims.delete(e.index);
      else claims.set(e.claim.index, e.claim);
    }
    if (events.length) {
      const sorted = [...claims.values()].sort((a, b) => a.index - b.index);
      renderReport({ claims: sorted, conflicts: [], dropped: [], abstain: false, nli_used: nli }, ctx);
    }
  };
  // the previous report goes: what shows from here on is this answer's
  $('claims').replaceChildren();
  $('summary').replaceChildren();
  $('answer-errors').replaceChildren();
  document.body.dataset.streaming = 'true';
  $('answer').readOnly = true;
  const pushes = [];
  try {
    for (let i = 0; i < answer.length; i += TOKEN_CHARS) {
      const piece = answer.slice(i, i + TOKEN_CHARS);
      $('answer').value = answer.slice(0, i + TOKEN_CHARS);
      $('verify-status').textContent = `Streaming… ${claims.size} verdict(s) so far`;
      pushes.push(s.push(piece).then(show));
      await new Promise((r) => setTimeout(r, TOKEN_MS));
    }
    await Promise.all(pushes);
    const end = await s.finish();
    show(end.events);
    return end.report;
  } finally {
    $('answer').value = answer;
    $('answer').readOnly = false;
    document.body.dataset.streaming = 'false';
  }
}

async function onVerify() {
  showError(null);
  $('verify').disabled = true;
  $('verify-status').textContent = 'Verifying…';
  try {
    const ctx = await ensureContext();
    const t0 = performance.now();
    const worker = await started;
    const streamed = $('stream').checked;
    const report = streamed ? await onStream(worker, ctx, $('policy').value) : await worker.verify($('answer').value, ctx.sources, { policy: $('policy').value });
    const ms = Math.round(performance.now() - t0);
    const nli = report.nli_used;
    const workers = nli ? worker.loadInfo.workers : 1;
    state.report = report;
    state.timings.verify = ms;
    state.lastVerifyUsedModel = nli;
    state.lastVerifyWorkers = workers;
    renderReport(report, ctx);
    renderTranscript(report, ctx);
    $('verify-status').textContent = `${streamed ? 'Streamed and verified' : 'Done'} in ${ms} ms${nli ? (workers > 1 ? ` (${workers} workers)` : '') : ' (quote check only: model not loaded)'}.`;
    call('renderMarkdown', report).then((md) => ($('markdown').textContent = md)).catch(() => {});
    document.body.dataset.verified = 'true';
  } catch (e) {
    showError(e);
    $('verify-status').textContent = '';
  } finally {
    $('verify').disabled = false;
    showTimings();
  }
}

// ------------------------------------------------------------------ transcript file and recording
// A transcript in any format meetcite reads (WhisperX, OpenAI, AssemblyAI, Deepgram, Google Meet,
// VTT, SRT, chunk JSON) is read and chunked in the worker; the recording plays from a local object
// URL. Neither is uploaded: the page makes no request with them.
async function onTranscriptFile(dropped) {
  const file = dropped instanceof File ? dropped : $('transcript-file').files[0];
  if (!file) return;
  showError(null);
  const status = $('transcript-status');
  try {
    const text = await file.text();
    const stem = file.name.replace(/\.[^.]+$/, '');
    const id = stem.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'meeting';
    const date = $('meeting-date').value || new Date().toISOString().slice(0, 10);
    const out = await call('chunkTranscript', text, { meeting_id: id, title: stem, date });
    state.imported = out.chunks;
    $('chunks').value = JSON.stringify(out.chunks, null, 1);
    state.context = null;
    state.report = null;
    $('claims').replaceChildren();
    $('summary').replaceChildren();
    $('transcript').replaceChildren();
    const warn = out.warnings.map((w) => w.message).join('; ');
    status.textContent = `${file.name}: read as ${out.format}, ${out.chunks.length} chunk(s)${warn ? ` (${warn})` : ''}.`;
    document.body.dataset.transcript = out.format;
    prepareMedia(out.chunks);
    renderTranscript(null, { sources: out.chunks.map((chunk, i) => ({ label: `S${i + 1}`, chunk })) });
  } catch (e) {
    status.textContent = '';
    showError(e);
  }
}

function onRecordingFile(dropped) {
  const file = dropped instanceof File ? dropped : $('recording-file').files[0];
  if (!file) return;
  if (mediaUrl) URL.revokeObjectURL(mediaUrl);
  mediaUrl = URL.createObjectURL(file);
  state.userMedia = true;
  $('media').src = mediaUrl;
  $('media-note').textContent = `${file.name} (played from this computer, never uploaded)`;
}

// The meeting turn by turn, each cited span marked on its exact characters (UTF-16 offsets into the
// chunk text: plain slice()) in the colour of its verdict; a mark seeks the media, by click or Enter.
function renderTranscript(report, ctx) {
  const box = $('transcript');
  const marks = new Map(); // chunk id -> [{start, end, claim, link, index}]
  const ids = new Set(); // claims whose first mark is placed
  (report?.claims || []).forEach((c, index) => {
    // the claim's own quote and its further ones, each in its own chunk, in the claim's colour
    for (const q of [c, ...(c.more_quotes || [])]) {
      if (!q.span || !q.chunk_id) continue;
      if (!marks.has(q.chunk_id)) marks.set(q.chunk_id, []);
      marks.get(q.chunk_id).push({ start: q.span[0], end: q.span[1], claim: c, link: q.link, index });
    }
  });
  const blocks = [];
  for (const src of ctx.sources) {
    const ch = src.chunk;
    blocks.push(el('p', { class: 'source-h', text: `${src.label} · ${ch.meeting_title || ch.meeting_id} · ${ch.date} · ${clock(ch.start)}` }));
    const spans = (marks.get(ch.id) || []).sort((a, b) => a.start - b.start || a.end - b.end);
    const turns = ch.turns && ch.turns.length ? ch.turns : [{ speaker: '', start: ch.start, text_start: 0, text_end: ch.text.length }];
    for (const t of turns) {
      const p = el('p', { class: 'turn', 'data-chunk': ch.id },
        el('span', { class: 'when', text: clock(t.start) }), t.speaker ? el('span', { class: 'who', text: t.speaker }) : null);
      // the turn's text without its "Speaker: " label, with the marks that fall in it
      let at = t.text_start;
      const label = `${t.speaker}: `;
      if (t.speaker && ch.text.startsWith(label, at)) at += label.length;
      for (const m of spans) {
        const a = Math.max(m.start, at);
        const b = Math.min(m.end, t.text_end);
        if (b <= a) continue;
        p.append(ch.text.slice(at, a));
        const c = m.claim;
        // the claim's first mark carries its id (showInTranscript scrolls there); a span across
        // turns, or a claim's further quotes, get marks without one
        const id = ids.has(m.index) ? null : `cite-span-${m.index}`;
        ids.add(m.index);
        p.append(el('mark', {
          class: `cite-span status-${c.status}`, id, tabindex: 0, 'data-claim': m.index, 'data-seconds': m.link?.seconds,
          title: `Claim ${m.index + 1} (${c.status}): ${c.text}`,
          onclick: () => m.link && seek(m.link.seconds),
          onkeydown: (e) => { if (e.key === 'Enter' && m.link) seek(m.link.seconds); },
          text: ch.text.slice(a, b),
        }));
        at = b;
      }
      p.append(ch.text.slice(at, t.text_end));
      blocks.push(p);
    }
  }
  box.replaceChildren(...blocks);
}

// A citation clicked in the claims list: the transcript scrolls to the cited words.
function showInTranscript(index) {
  const m = document.getElementById(`cite-span-${index}`);
  if (!m) return;
  document.querySelectorAll('mark.cite-span.current').forEach((x) => x.classList.remove('current'));
  m.classList.add('current');
  m.scrollIntoView({ block: 'nearest' });
}

// ------------------------------------------------------------------ report rendering
const STATUS_CLASS = { supported: 'ok', flagged: 'warn', unknown_source: 'bad', unparsable: 'bad' };
const STATUS_LABEL = { supported: 'supported', flagged: 'flagged', unknown_source: 'unknown source', unparsable: 'unparsable' };

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c != null) e.append(c);
  return e;
}

function sourceFor(ctx, claim) {
  if (claim.chunk_id) {
    const byId = ctx.sources.find((s) => s.chunk.id === claim.chunk_id);
    if (byId) return byId;
  }
  const label = claim.source == null ? null : String(claim.source).startsWith('S') ? claim.source : `S${claim.source}`;
  return ctx.sources.find((s) => s.label === label) || null;
}

// The quote tooltip: the matched span in its surrounding text (offsets are UTF-16: plain slice()).
function quoteTip(claim, src) {
  const tip = el('span', { class: 'tip', role: 'tooltip' });
  const [start, end] = claim.span || [0, 0]; // UTF-16 offsets into the chunk text
  const text = src && src.chunk.text;
  if (text && end > start) {
    const a = Math.max(0, start - 120);
    const b = Math.min(text.length, end + 120);
    const who = claim.speaker ? `${claim.speaker} · ` : '';
    const nli = claim.nli ? ` · entailment ${(claim.nli.context ?? claim.nli.quote).entailment.toFixed(2)}` : '';
    tip.append(el('strong', { text: `${who}${src.label} · match ${claim.quote_score ?? '?'}%${nli}` }), el('br'),
      a > 0 ? '…' : '', text.slice(a, start), el('mark', { text: text.slice(start, end) }), text.slice(end, b), b < text.length ? '…' : '');
  } else if (claim.matched_text) {
    tip.append('Matched: ', el('mark', { text: claim.matched_text }));
  } else {
    tip.append('Quote not found in the cited source.');
  }
  return tip;
}

function renderReport(report, ctx) {
  const list = $('claims');
  list.replaceChildren();
  const counts = {};
  for (const c of report.claims) counts[c.status] = (counts[c.status] || 0) + 1;
  const summary = Object.entries(counts).map(([s, n]) => el('span', { class: `badge ${STATUS_CLASS[s] || ''}`, 'data-count': s, text: `${n} ${STATUS_LABEL[s] || s}` }));
  if (report.abstain) summary.push(el('span', { class: 'badge bad', 'data-abstain': '', text: report.abstain_message || 'abstained' }));
  summary.push(el('span', { class: 'muted', text: report.nli_used ? 'quote + NLI check' : 'quote check only' }));
  $('summary').replaceChildren(...summary);
  report.claims.forEach((c, i) => {
    const src = sourceFor(ctx, c);
    const reasons = c.reasons || [];
    const head = el('div', { class: 'claim-head' },
      el('span', { class: `badge ${STATUS_CLASS[c.status] || ''}`, 'data-role': 'status', text: STATUS_LABEL[c.status] || c.status }),
      el('span', { class: 'claim-text', text: c.text }));
    const meta = el('div', { class: 'claim-meta' });
    // the claim's own quote, then its further ones (a claim drawn from several turns or meetings)
    for (const q of [c, ...(c.more_quotes || [])]) {
      const qsrc = q === c ? src : sourceFor(ctx, q);
      if (q.quote) {
        meta.append(el('span', { class: 'quote', tabindex: 0, 'aria-label': `Quote: ${q.quote}` }, `“${q.quote}”`, quoteTip(q, qsrc)));
      }
      if (q.link) {
        meta.append(el('button', {
          type: 'button', class: 'cite', 'data-seconds': q.link.seconds, 'data-meeting': q.link.meeting_id,
          title: `Play from ${clock(q.link.seconds)}`, onclick: () => { seek(q.link.seconds); showInTranscript(i); }, text: `▶ ${q.link.label}`,
        }));
        if (q.link.url) meta.append(el('a', { href: q.link.url, target: '_blank', rel: 'noopener noreferrer', text: 'recording ↗' }));
      } else if (q.source) {
        meta.append(el('span', { class: 'badge', text: String(q.source) }));
      }
      // a misattributed quote: where the words really are (another source the viewer may see)
      if (q.found_in) {
        const f = q.found_in;
        meta.append(el('button', {
          type: 'button', class: 'cite found', 'data-found': f.source, 'data-seconds': f.link.seconds, 'data-meeting': f.link.meeting_id,
          title: `The quote is in ${f.source}: play from ${clock(f.link.seconds)}`, onclick: () => seek(f.link.seconds), text: `found in ${f.source}: ▶ ${f.link.label}`,
        }));
      }
    }
    for (const r of reasons) {
      meta.append(el('span', { class: `badge ${r.severity === 'info' ? '' : 'warn'}`, 'data-reason': r.code || '', title: r.message || '', text: `⚠ ${(r.code || r.message || '').replace(/_/g, ' ')}` }));
    }
    const li = el('li', { class: `claim status-${c.status} ${c.status === 'supported' ? '' : 'flagged'}`, 'data-status': c.status, 'data-index': i }, head, meta);
    if (reasons.length) li.append(el('ul', { class: 'reasons' }, reasons.map((r) => el('li', { text: r.message || r.code }))));
    list.append(li);
  });
  const notes = [];
  for (const c of report.conflicts || []) notes.push(el('p', { class: 'conflict badge warn', 'data-conflict': '', text: `⚠ ${c.message}` }));
  if (report.dropped && report.dropped.length) notes.push(el('p', { class: 'muted', text: `${report.dropped.length} claim(s) removed by the drop policy.` }));
  if (report.feedback) notes.push(el('pre', { text: report.feedback }));
  $('answer-errors').replaceChildren(...notes);
}

// ------------------------------------------------------------------ model
// ", 2 workers, relaxed-simd build": how a loaded model runs (LoadInfo), for the model status line
const runsOn = (info) => `${info.workers > 1 ? `, ${info.workers} workers` : ''}${info.build ? `, ${info.build} build` : ''}`;

async function loadModel() {
  const bar = $('model-progress');
  const text = $('model-text');
  try {
    const worker = await started;
    $('verify').disabled = false; // quote-only verification works without the model
    text.textContent = 'Downloading the NLI model…';
    // ?workers=N: NLI workers (1 = the model in the demo's worker, no pool); default: the cores, at most 4
    const workers = Number(new URLSearchParams(location.search).get('workers')) || 'auto';
    const t0 = performance.now();
    const info = await worker.load(MODEL_URLS, {
      workers,
      onProgress: ({ cached, overall }) => {
        // `overall.total` is null while a size is unknown (no Content-Length behind a compressing
        // server): show what has arrived, never "x / 0.0 MB"
        if (overall.total) bar.value = overall.loaded / overall.total;
        else bar.removeAttribute('value');
        text.textContent = `${cached ? 'Loading the NLI model from cache' : 'Downloading the NLI model'}: ${fmtBytes(overall.loaded)}${overall.total ? ` / ${fmtBytes(overall.total)}` : ''}`;
        if (overall.total && overall.loaded >= overall.total) text.textContent = 'Preparing the model…';
      },
    });
    bar.value = 1;
    state.modelReady = true;
    state.timings.load = { ...info, totalMs: Math.round(performance.now() - t0) };
    if (info.poolError) console.warn('meetcite: worker pool unavailable, verifying in one worker', info.poolError);
    text.textContent = `NLI model ready (${fmtBytes(info.modelBytes || 0)}, ${info.cached ? 'from cache' : 'downloaded'}, ${state.timings.load.totalMs} ms${runsOn(info)}).`;
    document.body.dataset.model = 'ready';
    showTimings();
  } catch (e) {
    state.modelFailed = true;
    document.body.dataset.model = 'failed';
    text.textContent = `NLI model unavailable (${e.code || 'error'}): quotes are still checked.`;
    bar.hidden = true;
    console.error(e);
  }
}

// A checker the user exported (models/export_hf.py) and picked from disk: the files are read in the
// page and handed to the worker; nothing is uploaded. Name, size and load time are shown so models
// can be compared.
async function useModelFolder(files) {
  const text = $('model-text');
  try {
    let worker = await started;
    const t0 = performance.now();
    const picked = await modelFromFiles(files);
    text.textContent = `Loading ${picked.name} (${fmtBytes(picked.bytes)})…`;
    const workers = Number(new URLSearchParams(location.search).get('workers')) || 'auto';
    const files3 = { model: picked.model, tokenizer: picked.tokenizer, config: picked.config };
    let info;
    try {
      info = await worker.load(files3, { workers });
    } catch (e) {
      if (e.code !== 'model_needs_tract') throw e;
      // The page runs `meetcite` (no tract: the shipped model's int8 encoder only, a third of the
      // download). Another family or an f32 file needs `meetcite/full`: fetched now, for this folder
      // only; the worker in use keeps its model until the new one is ready.
      text.textContent = `Loading ${picked.name} (${fmtBytes(picked.bytes)}) with tract (meetcite/full)…`;
      const { VerifierWorker: FullWorker } = await import('./pkg/full/worker.js');
      const full = await FullWorker.create();
      try {
        info = await full.load(files3, { workers });
      } catch (e2) {
        full.terminate();
        throw e2;
      }
      started = Promise.resolve(full);
      worker.terminate();
      worker = full;
    }
    const ms = Math.round(performance.now() - t0);
    state.modelReady = true;
    state.modelFailed = false;
    state.timings.load = { ...info, totalMs: ms };
    document.body.dataset.model = 'ready';
    const cfg = worker.config || {};
    const kind = Object.keys(cfg.id2label || {}).length === 2 ? '2-way checker' : '3-way NLI';
    text.textContent = `Model ${picked.name} ready (${cfg.architecture || 'bert'}, ${kind}, ${fmtBytes(picked.bytes)}, loaded in ${ms} ms${runsOn(info)}).`;
    const name = $('model-name');
    name.textContent = `${picked.name} (from your disk)`;
    name.removeAttribute('href');
    document.body.dataset.modelName = picked.name;
    showTimings();
  } catch (e) {
    // the model loaded before stays in use: a failed load replaces nothing
    text.textContent = `Could not use that folder (${e.code || 'error'}): ${e.message}`;
    console.error(e);
  }
}

async function exampleList() {
  if (!examples) {
    examples = await fetch('data/examples.json').then((r) => (r.ok ? r.json() : { examples: [] }));
    const sel = $('example-select');
    sel.replaceChildren(...examples.examples.map((e) => el('option', { value: e.name, text: e.name, selected: e.name === examples.default })));
  }
  return examples;
}

async function loadExample() {
  showError(null);
  try {
    const list = await exampleList();
    const ex = list.examples.find((e) => e.name === $('example-select').value) || list.examples[0];
    if (!ex) return;
    const [chunks, answer] = await Promise.all([fetch(ex.chunks).then((r) => r.text()), fetch(ex.answer).then((r) => r.text())]);
    $('chunks').value = chunks;
    state.imported = null;
    let q = '';
    let ans = answer;
    try {
      const a = JSON.parse(answer);
      // the fixture may wrap the LLM answer: {question, answer}
      if (a && typeof a === 'object' && !Array.isArray(a) && !a.claims && (a.answer || a.text)) {
        q = a.question || '';
        ans = typeof (a.answer || a.text) === 'string' ? a.answer || a.text : JSON.stringify(a.answer || a.text, null, 2);
      } else {
        q = a.question || '';
        ans = JSON.stringify(a.claims ? { claims: a.claims } : a, null, 2);
      }
    } catch {
      // not JSON: an answer with prose around the JSON, keep as is
    }
    $('answer').value = ans;
    $('question').value = q;
    state.context = null;
    state.report = null;
    $('claims').replaceChildren();
    $('summary').replaceChildren();
    try {
      prepareMedia(readChunks());
    } catch {}
  } catch (e) {
    showError({ code: 'example', message: `could not load the example: ${e.message}` });
  }
}

$('build').addEventListener('click', onBuild);
$('transcript-file').addEventListener('change', onTranscriptFile);
$('recording-file').addEventListener('change', onRecordingFile);
// files dropped on the input panel: audio or video is the recording, anything else the transcript
const drop = document.querySelector('.panel.inputs');
drop.addEventListener('dragover', (e) => {
  e.preventDefault();
  drop.classList.add('dropping');
});
drop.addEventListener('dragleave', () => drop.classList.remove('dropping'));
drop.addEventListener('drop', (e) => {
  e.preventDefault();
  drop.classList.remove('dropping');
  for (const f of e.dataTransfer?.files || []) {
    if (/^(audio|video)\//.test(f.type)) onRecordingFile(f);
    else onTranscriptFile(f);
  }
});
// an edited text box is the source of the chunks again
$('chunks').addEventListener('input', () => { state.imported = null; });
$('copy').addEventListener('click', onCopy);
$('verify').addEventListener('click', onVerify);
$('example').addEventListener('click', loadExample);
$('example-select').addEventListener('change', loadExample);
loadExample();
loadModel();
$('model-folder').addEventListener('change', (ev) => {
  if (ev.target.files?.length) useModelFolder(ev.target.files);
});
