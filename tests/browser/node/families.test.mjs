// Bring your own checker, in wasm: every family tract runs (tests/fixtures/families, exported by
// models/export_hf.py) scores as PyTorch and onnxruntime did; a model folder loads by URL
// (config.json names the files) or from picked files; a config that does not fit is refused.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
// tract runs these families: meetcite/full (the default package runs the shipped int8 BERT form only)
const PKG = path.join(ROOT, 'pkg/full');
const FAMILIES = path.join(ROOT, 'tests/fixtures/families');
const RUNS = ['bert', 'roberta', 'deberta-v1', 'deberta-v3', 'electra-2way'];

let m;
let model;
before(async () => {
  m = await import(path.join(PKG, 'meetcite.js'));
  m.initSync({ module: readFileSync(path.join(PKG, 'meetcite_bg.wasm')) });
  model = await import(path.join(PKG, 'model.js'));
});

const file = (family, name) => readFileSync(path.join(FAMILIES, family, name));
const parity = (family) => file(family, 'parity.jsonl').toString().trim().split('\n').map((l) => JSON.parse(l));

// |got - want| over meetcite's slots; a 2-way checker's p(supported) is `entailment`
function diff(got, want) {
  if ('supported' in want) {
    assert.equal(got.contradiction, 0);
    return Math.max(Math.abs(got.entailment - want.supported), Math.abs(got.neutral - want.unsupported));
  }
  return Math.max(...['entailment', 'neutral', 'contradiction'].map((k) => Math.abs(got[k] - want[k])));
}

test('every family in wasm matches PyTorch (f32) and onnxruntime (f32, int8)', async () => {
  for (const family of RUNS) {
    const rows = parity(family);
    const pairs = rows.map((r) => [r.premise, r.hypothesis]);
    const cfg = JSON.parse(file(family, 'config.json'));
    const int8 = await m.Verifier.load({ model: file(family, cfg.model_file), tokenizer: file(family, 'tokenizer.json'), config: file(family, 'config.json') });
    const f32 = await m.Verifier.load({ model: file(family, 'model.onnx'), tokenizer: file(family, 'tokenizer.json'), config: JSON.stringify({ ...cfg, model_file: 'model.onnx' }) });
    const [a, b] = [f32.score(pairs), int8.score(pairs)];
    let dTorch = 0, dOrt = 0, dInt8 = 0;
    rows.forEach((r, i) => {
      dTorch = Math.max(dTorch, diff(a[i], r.torch));
      dOrt = Math.max(dOrt, diff(a[i], r.onnxruntime));
      dInt8 = Math.max(dInt8, diff(b[i], r.onnxruntime_int8));
    });
    console.log(`# node: ${family} wasm max |dp| f32 vs PyTorch ${dTorch.toExponential(1)}, vs onnxruntime ${dOrt.toExponential(1)}; int8 vs onnxruntime ${dInt8.toExponential(1)}`);
    assert.ok(dTorch <= 1e-4 && dOrt <= 1e-4 && dInt8 <= 1e-4, family);
    assert.equal(int8.config.architecture, cfg.architecture);
    f32.free();
    int8.free();
  }
});

// fetch over the fixtures folder, as a static server would answer
const served = [];
const fileFetch = async (url) => {
  served.push(url);
  try {
    return new Response(readFileSync(fileURLToPath(url)), { status: 200 });
  } catch {
    return new Response('not found', { status: 404 });
  }
};

test('a model folder by URL: config.json first, then the files it names', async () => {
  const dir = pathToFileURL(path.join(FAMILIES, 'deberta-v3')).href; // no trailing slash: still a folder
  served.length = 0;
  const events = [];
  const files = await model.loadModel(dir, { fetch: fileFetch, cache: false, onProgress: (p) => events.push(p.file) });
  assert.deepEqual(served.map((u) => u.split('/').pop()), ['config.json', 'model-int8.onnx', 'tokenizer.json']);
  assert.deepEqual(Buffer.from(files.model), file('deberta-v3', 'model-int8.onnx'));
  assert.ok(events.includes('model') && events.includes('config'));
  const v = await m.Verifier.load(files);
  assert.equal(v.config.name, 'deberta-v3');
  v.free();
  // {config} alone, and a folder whose config.json names a file that is not there
  const viaConfig = await model.loadModel({ config: `${dir}/config.json` }, { fetch: fileFetch, cache: false });
  assert.deepEqual(Buffer.from(viaConfig.tokenizer), file('deberta-v3', 'tokenizer.json'));
  const missing = async (url) => (url.endsWith('config.json') ? new Response(JSON.stringify({ model_file: 'gone.onnx' })) : fileFetch(url));
  await assert.rejects(model.loadModel(dir, { fetch: missing, cache: false }), (e) => e.code === 'model_fetch' && /gone\.onnx.*404/.test(e.message));
  await assert.rejects(model.loadModel({ tokenizer: 'x' }), (e) => e.code === 'invalid_input' && /model/.test(e.message));
});

test('a model folder picked from disk (File objects), and what is missing is named', async () => {
  const pick = (family, names = readdirSync(path.join(FAMILIES, family))) =>
    names.map((name) => ({ name, webkitRelativePath: `${family}/${name}`, arrayBuffer: async () => new Uint8Array(file(family, name)).buffer }));
  const got = await model.modelFromFiles(pick('electra-2way'));
  assert.equal(got.name, 'electra-2way');
  assert.equal(got.bytes, file('electra-2way', 'model-int8.onnx').length + file('electra-2way', 'tokenizer.json').length + file('electra-2way', 'config.json').length);
  const v = await m.Verifier.load(got);
  const [p] = v.score([[parity('electra-2way')[0].premise, parity('electra-2way')[0].hypothesis]]);
  assert.ok(diff(p, parity('electra-2way')[0].onnxruntime_int8) <= 1e-4);
  v.free();
  await assert.rejects(model.modelFromFiles(pick('bert', ['model.onnx', 'tokenizer.json'])), (e) => e.code === 'invalid_input' && /config\.json/.test(e.message));
  await assert.rejects(model.modelFromFiles(pick('bert', ['config.json', 'tokenizer.json'])), (e) => e.code === 'invalid_input' && /model-int8\.onnx/.test(e.message));
  await assert.rejects(model.modelFromFiles([]), (e) => e.code === 'invalid_input');
});

test('a config that does not fit the model is a coded error naming the field', async () => {
  const cfg = JSON.parse(file('roberta', 'config.json'));
  const load = (over) => m.Verifier.load({ model: file('roberta', 'model-int8.onnx'), tokenizer: file('roberta', 'tokenizer.json'), config: JSON.stringify({ ...cfg, ...over }) });
  await assert.rejects(load({ id2label: { 0: 'LABEL_0', 1: 'LABEL_1', 2: 'LABEL_2' } }), (e) => e.code === 'model_config' && /id2label/.test(e.message));
  await assert.rejects(load({ inputs: ['input_ids', 'attention_mask', 'token_type_ids'] }), (e) => e.code === 'model_config' && /inputs/.test(e.message));
  await assert.rejects(load({ architecture: 'gpt2' }), (e) => e.code === 'model_config' && /architecture/.test(e.message));
  await assert.rejects(load({ output: 'scores' }), (e) => e.code === 'model_config' && /output/.test(e.message));
});
