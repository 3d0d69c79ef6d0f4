// Write the model package's manifest.js, package.json and README.md (scripts/build-wasm.sh).
// Sizes and digests are computed from the files as they are now, never written by hand.
//   node scripts/model-package.mjs pkg-model/ nli-minilm-l6-int8.onnx 0.1.0
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const [dir, onnx, version] = process.argv.slice(2);
const NAME = 'meetcite-model-minilm';
const file = (name) => {
  const bytes = readFileSync(path.join(dir, name));
  return { name, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
};
const files = { model: file(onnx), tokenizer: file('tokenizer.json'), config: file('config.json') };
const config = JSON.parse(readFileSync(path.join(dir, 'config.json'), 'utf8'));
const manifest = { name: config.name || NAME, version, files };
writeFileSync(path.join(dir, 'manifest.js'), `// Written by scripts/model-package.mjs from the files in this folder.\nexport const MANIFEST = ${JSON.stringify(manifest, null, 2)};\n`);

const shipped = readdirSync(dir).filter((f) => statSync(path.join(dir, f)).isFile()).sort();
const pkg = {
  name: NAME,
  version,
  description: "meetcite's NLI model (MiniLM-L6 cross-encoder, int8 ONNX) with its tokenizer, config, model card and licences, and a loader with progress and caching.",
  license: 'Apache-2.0',
  type: 'module',
  main: './index.js',
  types: './index.d.ts',
  exports: {
    '.': { types: './index.d.ts', node: './node.js', default: './index.js' },
    './load': { types: './load.d.ts', default: './load.js' },
    [`./${onnx}`]: `./${onnx}`,
    './tokenizer.json': './tokenizer.json',
    './config.json': './config.json',
    './manifest.js': './manifest.js',
    './package.json': './package.json',
  },
  files: [...shipped.filter((f) => f !== 'package.json'), 'README.md'].filter((f, i, a) => a.indexOf(f) === i),
  sideEffects: false,
  keywords: ['meetcite', 'nli', 'onnx', 'minilm', 'cross-encoder'],
};
writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');

const mb = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${(n / 1e3).toFixed(1)} kB`);
const rows = Object.entries(files).map(([k, f]) => `| \`${f.name}\` | ${k} | ${f.bytes.toLocaleString('en')} bytes (${mb(f.bytes)}) | \`${f.sha256}\` |`);
writeFileSync(path.join(dir, 'README.md'), `# ${NAME}

The NLI model of [meetcite](https://www.npmjs.com/package/meetcite): a MiniLM-L6 cross-encoder
fine-tuned from sentence-transformers/all-MiniLM-L6-v2 for natural language inference (weight-only
int8 ONNX), its WordPiece \`tokenizer.json\` and \`config.json\` (labels, thresholds, support-score
weights). Model card: \`MODEL_CARD.md\` (data, accuracy, weaknesses). Licence: Apache-2.0
(\`LICENSE\`); training-data attribution, including share-alike sources: \`NOTICE.md\`.

| file | role | size | SHA-256 |
|---|---|---|---|
${rows.join('\n')}

Total ${mb(Object.values(files).reduce((a, f) => a + f.bytes, 0))}.

\`\`\`js
import { Verifier } from 'meetcite';
import { loadModel } from '${NAME}';
const files = await loadModel({ onProgress: (p) => console.log(p.overall.loaded, p.overall.total) });
const verifier = await Verifier.load(files);
\`\`\`

In a browser, \`loadModel\` fetches the files from this package's URLs (\`new URL('./file',
import.meta.url)\`, which bundlers emit as assets) with progress events and the Cache API; in Node it
reads them from disk. \`modelFiles\`, \`sizes\` and \`sha256\` give the URLs, exact sizes and digests,
for \`VerifierWorker.load(modelFiles, { sizes, sha256 })\` from \`meetcite/worker\`.
`);
console.log(`${NAME} ${version}: ${Object.values(files).map((f) => `${f.name} ${f.bytes} bytes`).join(', ')}`);
