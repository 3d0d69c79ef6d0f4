// The package's TypeScript declarations against what the runtime really returns.
//
// Real outputs (a context, parsed answers, quote matches, reports with NLI and support scores,
// conflicts, feedback and dropped claims, metrics, a deep link, the model config) are produced
// with the shipped model on the pricing fixture. Checks are generated from them and appended to
// tests/browser/types/consumer.ts (an app using every entry point): each field is read into a
// variable of its declared type, which must not be `any` and must accept the runtime value
// (`null` included), and each object's runtime keys must equal its type's keys (so `object`, a
// missing field or a renamed one such as `sourceRaw` fail). `tsc --strict` then compiles it with
// `lib: ["es2022"]` only (no DOM, no Symbol.dispose), with and without skipLibCheck, under node10,
// node16 and bundler module resolution, against pkg/ and pkg-model/ installed as packages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PKG = path.join(ROOT, 'pkg');
const MODEL_PKG = path.join(ROOT, 'pkg-model');
const TSC = path.join(ROOT, 'tests/browser/node_modules/typescript/bin/tsc');
const fixture = (n) => readFileSync(path.join(ROOT, 'tests/fixtures', n), 'utf8');

// Values typed as free-form JSON on purpose (the answer's JSON schema): their fields are not walked.
const OPAQUE = new Set(['schema']);

/** Checks for value `v` found at TypeScript expression `expr`. */
function walk(expr, v, out) {
  if (v === null) {
    out.push(`{ let x = ${expr}; x = null; }`);
  } else if (Array.isArray(v)) {
    out.push(`typed(${expr});`);
    v.forEach((e, i) => walk(`${expr}[${i}]${e === null ? '' : '!'}`, e, out));
  } else if (typeof v === 'object') {
    out.push(`typed(${expr}); keys(${expr})(${JSON.stringify(Object.keys(v))});`);
    // `!`: an optional field that is present (a field that is null is read as it is)
    for (const [k, e] of Object.entries(v)) if (!OPAQUE.has(k)) walk(`${expr}[${JSON.stringify(k)}]${e === null ? '' : '!'}`, e, out);
  } else {
    out.push(`{ let x = ${expr}; typed(x); x = ${JSON.stringify(v)}; }`);
  }
}

async function realOutputs() {
  const m = await import(path.join(PKG, 'node.js'));
  const models = path.join(ROOT, 'models');
  const { MANIFEST } = await import(path.join(MODEL_PKG, 'manifest.js'));
  const onnx = MANIFEST.files.model.name;
  const v = await m.Verifier.load({
    model: readFileSync(path.join(models, onnx)),
    tokenizer: readFileSync(path.join(models, 'tokenizer.json')),
    config: readFileSync(path.join(models, 'config.json')),
  });
  try {
    const chunks = fixture('pricing_chunks.json');
    const answer = fixture('pricing_answer.json');
    const context = m.buildContext(chunks, { order: 'date' });
    // a chunk with every optional field (words with offsets, an ACL, a score)
    const full = m.parseChunks([{ ...JSON.parse(chunks)[0], words: [{ word: 'Luis', start: 1800, end: 1800.4, offset: 0 }], acl: ['u42'], score: 0.5 }]);
    const reports = ['warn', 'feedback', 'drop'].map((policy) => v.verify(answer, context.sources, { policy }));
    const parsed = m.parseAnswer('{"claims":[{"text":"A","source":"S1","quote":"q"},{"text":"B","source":"X9","quote":"q"},{"source":"S1"}]}');
    const match = m.matchQuote(context.sources[0].chunk.text, 'offer a ten percent discount');
    return {
      context, chunks: full, parsed, match, reports,
      metrics: m.metrics(reports[0], { times: [1807, null], answerable: true }),
      link: m.deepLink('Pricing sync', 'm1', '2024-04-12', 1807, 'Dana Okafor', 'https://example.com/r.mp4'),
      config: v.config,
      probs: v.score([['Dana: we agreed on ten percent.', 'They agreed on ten percent.']]),
    };
  } finally {
    v.free();
  }
}

const TYPES = {
  context: 'M.Context', chunks: 'M.Chunk[]', parsed: 'M.ParsedAnswer', match: 'M.QuoteMatch', reports: 'M.Report[]',
  metrics: 'M.Metrics', link: 'M.DeepLink', config: 'M.ModelConfig', probs: 'M.Probs[]',
};

test('tsc --strict: the declarations type every field of real outputs exactly (no DOM lib, node10/node16/bundler, with and without skipLibCheck)', { timeout: 300_000 }, async () => {
  assert.ok(existsSync(TSC), 'typescript is installed in tests/browser (npm ci)');
  const outputs = await realOutputs();
  // the outputs exercise the optional parts: NLI and support scores, conflicts, feedback, dropped claims, claim errors
  const [warn, feedback, drop] = outputs.reports;
  assert.ok(warn.claims.some((c) => c.nli && c.support && c.support.parts.length), 'NLI and support scores present');
  assert.ok(warn.claims.some((c) => c.nli === null), 'a claim without NLI');
  assert.ok(warn.conflicts.length > 0 && typeof warn.conflicts[0].older.date === 'string');
  assert.equal(typeof feedback.feedback, 'string');
  assert.ok(drop.dropped.length > 0);
  assert.ok(outputs.parsed.errors.some((e) => e.source === 'X9'), 'ClaimError carries `source`');

  const checks = [];
  for (const [name, value] of Object.entries(outputs)) {
    checks.push(`declare const real_${name}: ${TYPES[name]};`);
    walk(`real_${name}`, value, checks);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'meetcite-tsc-'));
  try {
    mkdirSync(path.join(dir, 'node_modules'));
    symlinkSync(PKG, path.join(dir, 'node_modules/meetcite'), 'dir');
    symlinkSync(MODEL_PKG, path.join(dir, 'node_modules/meetcite-model-minilm'), 'dir');
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    const consumer = readFileSync(path.join(ROOT, 'tests/browser/types/consumer.ts'), 'utf8');
    writeFileSync(path.join(dir, 'consumer.ts'), `${consumer}\nimport type * as M from 'meetcite';\n${checks.join('\n')}\n`);
    const variants = [];
    for (const [module, resolution] of [['esnext', 'node10'], ['node16', 'node16'], ['esnext', 'bundler']]) {
      for (const skipLibCheck of [false, true]) {
        const name = `tsconfig.${resolution}.${skipLibCheck ? 'skip' : 'check'}.json`;
        writeFileSync(path.join(dir, name), JSON.stringify({
          compilerOptions: { strict: true, noEmit: true, target: 'es2022', lib: ['es2022'], types: [], module, moduleResolution: resolution, skipLibCheck },
          files: ['consumer.ts'],
        }));
        let out = '';
        try {
          execFileSync(process.execPath, [TSC, '-p', name], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
        } catch (e) {
          out = `${e.stdout}${e.stderr}`;
        }
        variants.push({ name, out });
      }
    }
    const failed = variants.filter((v) => v.out);
    assert.deepEqual(failed.map((v) => v.name), [], failed.map((v) => `${v.name}:\n${v.out.split('\n').slice(0, 30).join('\n')}`).join('\n'));
    console.log(`# node: tsc --strict passed in ${variants.length} configurations, ${checks.length} generated checks`);

    // the checks can fail: a field typed `object`, and a field the runtime does not send
    for (const [bad, why] of [
      ['declare const o: { older: object }; keys(o.older)(["date"]);', 'object'],
      ['declare const e: M.ClaimError & { sourceRaw: string }; keys(e)(["index","field","problem","text","source"]);', 'sourceRaw'],
      ['declare const a: any; typed(a);', 'any'],
    ]) {
      writeFileSync(path.join(dir, 'bad.ts'), `import type * as M from 'meetcite';\nimport { keys, typed } from './consumer.js';\n${bad}\n`);
      writeFileSync(path.join(dir, 'tsconfig.bad.json'), JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, target: 'es2022', lib: ['es2022'], types: [], module: 'esnext', moduleResolution: 'bundler', skipLibCheck: true },
        files: ['bad.ts'],
      }));
      assert.throws(() => execFileSync(process.execPath, [TSC, '-p', 'tsconfig.bad.json'], { cwd: dir, stdio: 'pipe' }), `a type with ${why} is rejected`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
