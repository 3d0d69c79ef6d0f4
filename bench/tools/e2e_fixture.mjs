#!/usr/bin/env node
// Generate the end-to-end browser benchmark fixture from tests/fixtures/qmsum_chunks.json:
//   bench/fixtures/e2e_chunks.json  20 chunks (the 72 QMSum turns, 3-4 consecutive turns per chunk)
//                                   in 4 meetings of 5 chunks, with distinct ids, titles, dates, times
//   bench/fixtures/e2e_answer.json  10 claims citing them: exact quotes, paraphrased quotes, a wrong
//                                   number, a wrong speaker, a fabricated quote, a contradiction
// Deterministic (no randomness); source labels follow buildContext's `order: "date"` numbering.
// Usage: node bench/tools/e2e_fixture.mjs
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const src = JSON.parse(readFileSync(path.join(ROOT, 'tests/fixtures/qmsum_chunks.json'), 'utf8'));
const enc = new TextEncoder();
const bytes = (s) => enc.encode(s).length;

// every turn of the source, in order: {speaker, start, end, line}
const turns = [];
for (const c of src) {
  for (const t of c.turns) {
    const raw = new TextDecoder().decode(enc.encode(c.text).slice(t.text_start, t.text_end));
    turns.push({ speaker: t.speaker, start: t.start, end: t.end, line: raw });
  }
}
const N_CHUNKS = 20, PER_MEETING = 5;
const meetings = [
  { id: 'rc-kickoff', title: 'Remote control kickoff', date: '2024-03-04' },
  { id: 'rc-design', title: 'Remote control design review', date: '2024-03-11' },
  { id: 'rc-team', title: 'Remote control team intro', date: '2024-03-18' },
  { id: 'rc-wrapup', title: 'Remote control wrap-up', date: '2024-03-25' },
];
const chunks = [];
const turnChunk = []; // turn index -> chunk index
for (let k = 0; k < N_CHUNKS; k++) {
  const lo = Math.floor((k * turns.length) / N_CHUNKS), hi = Math.floor(((k + 1) * turns.length) / N_CHUNKS);
  const m = meetings[Math.floor(k / PER_MEETING)];
  const t0 = turns[Math.floor((Math.floor(k / PER_MEETING) * PER_MEETING * turns.length) / N_CHUNKS)].start; // meeting start
  let text = '';
  const ct = [];
  for (let i = lo; i < hi; i++) {
    if (text) text += '\n';
    const s = bytes(text);
    text += turns[i].line;
    ct.push({ speaker: turns[i].speaker, start: +(turns[i].start - t0).toFixed(1), end: +(turns[i].end - t0).toFixed(1), text_start: s, text_end: bytes(text) });
    turnChunk[i] = k;
  }
  chunks.push({
    id: `${m.id}-${(k % PER_MEETING) + 1}`,
    meeting_id: m.id,
    meeting_title: m.title,
    date: m.date,
    start: ct[0].start,
    end: ct[ct.length - 1].end,
    speakers: [...new Set(ct.map((t) => t.speaker))],
    text,
    recording_url: `https://recordings.example.com/${m.id}.mp4#t={t}`,
    turns: ct,
  });
}

// claims: [turn whose chunk is cited, claim text, quote, exact (quote is verbatim in that turn)]
const claims = [
  [13, 'The goal of the project is to create a new remote control for a television.', "What we're aiming to do is to create a new remote control for a television", true],
  [7, 'The team had twenty five minutes for the meeting, until eleven twenty five.', "So we've got twenty five minutes to do that , that's until eleven twenty five", true],
  [7, 'The team had forty five minutes for the meeting.', "we've got twenty five minutes to do that", true], // wrong number
  [54, 'The Project Manager said the rabbit was not furry enough, so they would make it a fluffy rabbit.', "I don't think it's furry enough , so we'll make it a fluffy rabbit", true], // wrong speaker
  [39, 'Marketing said her name is Cat and that she is not very good at drawing.', "my name's Cat and I'm really not very good at this whole drawing malarkey", true],
  [13, 'The project method has three components.', 'the method we will use to complete the project has three components', false], // paraphrased quote
  [25, 'Each person was asked to draw their favourite animal on the whiteboard.', 'go up to the whiteboard and draw your favourite animal', false], // quote with a gap
  [69, 'The team decided to ship the remote control in pink.', 'we will ship the remote control in pink next week', false], // fabricated
  [61, 'Marketing said rabbits come in blue.', "Rabbits don't come in blue but you know", true], // contradiction
  [20, 'The Industrial Designer asked in which design phase the components of the product are identified.', "where do we identify the components of our uh product ?", true],
];
const answer = {
  claims: claims.map(([turn, text, quote, exact]) => {
    if (exact && !turns[turn].line.includes(quote)) throw new Error(`quote of turn ${turn} not verbatim: ${quote}`);
    return { text, source: `S${turnChunk[turn] + 1}`, quote };
  }),
};
// labels assume buildContext order "date": (date, start) ascending is the order above
for (let i = 1; i < chunks.length; i++) {
  const a = chunks[i - 1], b = chunks[i];
  if (!(a.date < b.date || (a.date === b.date && a.start < b.start))) throw new Error(`chunks ${i - 1}/${i} out of date order`);
}
mkdirSync(path.join(ROOT, 'bench/fixtures'), { recursive: true });
writeFileSync(path.join(ROOT, 'bench/fixtures/e2e_chunks.json'), JSON.stringify(chunks, null, 1) + '\n');
writeFileSync(path.join(ROOT, 'bench/fixtures/e2e_answer.json'), JSON.stringify(answer, null, 1) + '\n');
console.log(`bench/fixtures/e2e_chunks.json: ${chunks.length} chunks, ${turns.length} turns; bench/fixtures/e2e_answer.json: ${answer.claims.length} claims`);
