// A TypeScript app using every entry point of the package, compiled (never run) by
// tests/browser/node/types.test.mjs with `tsc --strict`, `lib: ["es2022"]` (no DOM), with and
// without skipLibCheck, under node10, node16 and bundler module resolution. The test appends
// checks generated from real reports: every field the runtime sends is read here with the type
// its value has, and every object's keys must be the keys its type declares.
import init, { buildContext, chunkTranscript, deepLink, matchQuote, metrics, parseAnswer, parseChunks, renderHtml, renderMarkdown, stream, verify, version, Verifier } from 'meetcite';
import type { AnswerStream, Chunk, Chunked, ClaimVerdict, Context, Finished, FoundIn, MeetciteError, ModelConfig, ParsedAnswer, Probs, QuoteMatch, QuoteVerdict, Report, Source, StreamEvent, Support } from 'meetcite';
import { VerifierPool } from 'meetcite/pool';
import { relaxedSimd, wasmUrl } from 'meetcite/wasm-url';
import { VerifierWorker } from 'meetcite/worker';
import type { LoadInfo, ModelProgress, RemoteStream } from 'meetcite/worker';
import { loadModel as fetchModel } from 'meetcite/model';
import { loadModel, modelFiles, sha256, sizes } from 'meetcite-model-minilm';
// meetcite/full: the same API with tract inside (other families, f32 files, runtime "tract")
import initFull, { Verifier as FullVerifier } from 'meetcite/full';
import { VerifierWorker as FullWorker } from 'meetcite/full/worker';
import { VerifierPool as FullPool } from 'meetcite/full/pool';

// the documented snake_case input, UTF-16 offsets
const chunks: Chunk[] = [
  {
    id: 'c1', meeting_id: 'm1', meeting_title: 'Pricing sync', date: '2024-04-12', start: 1807, end: 1900,
    speakers: ['Dana Okafor'], text: 'Dana: we agreed on ten percent.', recording_url: 'https://example.com/r.mp4',
    turns: [{ speaker: 'Dana Okafor', start: 1807, end: 1900, text_start: 0, text_end: 31 }],
    words: [{ word: 'Dana', start: 1807, end: 1808, offset: 0 }], acl: ['u42'], score: 0.9,
  },
];

export async function app(answer: string, onError: (e: MeetciteError) => void): Promise<string> {
  await init();
  const v: string = version();
  const ctx: Context = buildContext(chunks, { order: 'date', viewer: 'u42', max_tokens: 4000, question: 'What discount?' });
  const again: Chunk[] = parseChunks(JSON.stringify(chunks));
  const parsed: ParsedAnswer = parseAnswer(answer);
  const m: QuoteMatch = matchQuote(chunks[0]!.text, 'ten percent', { threshold: 80, max_gap: 40 });
  const plain: Report = verify(answer, ctx.sources, { policy: 'drop', premise_tokens: 128, matching: { threshold: 85 } });
  const files = await loadModel({ onProgress: (p: ModelProgress) => p.overall.total ?? p.loaded, cache: 'my-cache' });
  const same = await fetchModel({ model: modelFiles.model, tokenizer: modelFiles.tokenizer, config: modelFiles.config }, { sizes, sha256 });
  const verifier: Verifier = await Verifier.load(files);
  await initFull();
  const onTract = await FullVerifier.load({ ...files, runtime: 'tract' });
  const runsOn: string = onTract.runtime;
  onTract.free();
  const fullWorker = await FullWorker.load(modelFiles, { workers: 2 });
  fullWorker.terminate();
  (await FullPool.create(same, { size: 2 })).terminate();
  const config: ModelConfig = verifier.config;
  const report: Report = verifier.verify(answer, { sources: ctx.sources }, { policy: 'feedback' });
  const pairs: [string, string][] = verifier.plan(answer, ctx.sources);
  const probs: Probs[] = verifier.score(pairs);
  const scored = verifier.verify(answer, ctx.sources, { scores: pairs.map(([premise, hypothesis], i) => ({ premise, hypothesis, probs: probs[i]! })) });
  // an answer as it streams: verdicts per completed claim, then verify's report
  const live: AnswerStream = verifier.stream(ctx.sources, { policy: 'warn' });
  const firstEvents: StreamEvent[] = live.push(answer.slice(0, 10));
  const sent: number[] = firstEvents.map((e) => (e.type === 'retract' ? e.index : e.claim.index));
  const ended: Finished = live.finish();
  const endedReport: Report = ended.report;
  const plainStream: StreamEvent[] = stream(ctx.sources).push(answer);
  verifier.free();
  // the build init() would fetch, passed on as a pool's wasmUrl
  const fast: boolean = relaxedSimd();
  const best: { readonly href: string } = wasmUrl();
  const bestPool = await VerifierPool.create(same, { size: fast ? 2 : 1, wasmUrl: best });
  bestPool.terminate();
  const pool = await VerifierPool.create(same, { size: 2, workerUrl: '/assets/pool-worker.js', wasmUrl: { href: 'https://example.com/x.wasm' } });
  const pooled: Report = await pool.verify(answer, ctx.sources);
  pool.terminate();
  const worker = await VerifierWorker.load(modelFiles, { sizes, sha256, workers: 'auto', workerUrl: '/w.js', wasmUrl: '/m.wasm', onProgress: (p) => p.file });
  const info: LoadInfo | null = worker.loadInfo;
  const build: 'relaxed-simd' | 'simd128' | null = info ? info.build : null;
  const ctx2: Context = await worker.buildContext(chunks, { order: 'relevance' });
  const fromWorker: Report = await worker.verify(answer, ctx2.sources, { policy: 'warn' });
  const remote: RemoteStream = await worker.stream(ctx2.sources);
  const remoteEvents: StreamEvent[] = await remote.push(answer);
  const remoteEnd: Finished = await remote.finish();
  // transcripts in: format detected or named, options in snake_case
  const chunked: Chunked = chunkTranscript('WEBVTT\n', { meeting_id: 'm1', max_words: 120, overlap_turns: 1 });
  const named: Chunk[] = chunkTranscript('1\n00:00:01,000 --> 00:00:02,000\nhi\n', { meeting_id: 'm1' }, 'srt').chunks;
  const viaWorker: Chunked = await worker.chunkTranscript('WEBVTT\n', { meeting_id: 'm1', recording_url: null });
  const detected: string = chunked.format + named.length + viaWorker.chunks.length;
  const html: string = await worker.renderHtml(fromWorker, { hide_flagged: true });
  worker.terminate();
  const support: Support | null = report.claims[0]?.support ?? null;
  const first: ClaimVerdict | undefined = scored.claims[0];
  // a misattributed quote: where it is, with a UTF-16 span and a deep link
  const found: FoundIn | null = first?.found_in ?? null;
  const foundAt: string = found ? `${found.source} ${found.span[0]}-${found.span[1]} ${found.link.label} ${found.speaker ?? ''}` : '';
  // a claim's further quotes, each with its own place and link; which quote a reason is about
  const more: QuoteVerdict[] = first?.more_quotes ?? [];
  const places: string = more.map((q) => `${q.source} ${q.found} ${q.span ? q.span[0] : ''} ${q.link?.label ?? ''} ${q.found_in?.source ?? ''}`).join(';');
  const about: number | null | undefined = first?.reasons[0]?.quote;
  const link = deepLink('Pricing sync', 'm1', '2024-04-12', 1807, 'Dana Okafor', null);
  const met = metrics(pooled, { times: [1807, null], answerable: true });
  try {
    parseAnswer('no json');
  } catch (e) {
    onError(e as MeetciteError);
  }
  const sources: Source[] = ctx.sources;
  return [v, again.length, parsed.errors.length, m.start, plain.counts.supported, config.max_length, html, support?.score, first?.status,
    link.url, met.citation_recall, renderHtml(report), renderMarkdown(report, { hide_flagged: false }), sources.length, info?.workers, build, fast, best.href, detected, foundAt, places, about,
    sent.length, endedReport.counts.supported, ended.events.length, plainStream.length, remoteEvents.length, remoteEnd.report.abstain, live.text].join();
}

// ---- checks generated from real reports follow
type IsAny<T> = 0 extends 1 & T ? true : false;
type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];
/** `x` must not be typed `any`. */
export function typed<T>(_x: T & (IsAny<T> extends true ? never : unknown)): void {}
/** The runtime keys `ks` of `x`: each declared by its type, and every required key of the type among them. */
export function keys<T>(_x: T) {
  return <const K extends readonly string[]>(
    _ks: K &
      ([Exclude<K[number], keyof NonNullable<T>>] extends [never] ? unknown : { runtimeKeysNotInType: Exclude<K[number], keyof NonNullable<T>> }) &
      ([Exclude<RequiredKeys<NonNullable<T>>, K[number]>] extends [never] ? unknown : { requiredKeysNotSent: Exclude<RequiredKeys<NonNullable<T>>, K[number]> }),
  ): void => {};
}
