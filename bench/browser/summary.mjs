// Print result rows (JSON lines on stdin) as one table per section: cases x impls, per metric.
import { readFileSync } from 'node:fs';

const rows = readFileSync(0, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
const fmt = (v) => (Number.isInteger(v) ? String(v) : Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 1 ? v.toFixed(1) : v.toFixed(3));
for (const section of [...new Set(rows.map((r) => r.section))]) {
  const rs = rows.filter((r) => r.section === section);
  const impls = [...new Set(rs.map((r) => r.impl))];
  const keys = [...new Set(rs.map((r) => `${r.case} | ${r.metric}`))];
  const table = [['', ...impls]];
  for (const k of keys) {
    const unit = rs.find((r) => `${r.case} | ${r.metric}` === k).unit;
    table.push([`${k}${unit ? ` (${unit})` : ''}`, ...impls.map((i) => {
      const r = rs.find((r) => r.impl === i && `${r.case} | ${r.metric}` === k);
      return r ? fmt(r.value) : '-';
    })]);
  }
  const w = table[0].map((_, c) => Math.max(...table.map((r) => r[c].length)));
  console.log(`\n[${section}]`);
  for (const r of table) console.log(r.map((x, c) => (c ? x.padStart(w[c]) : x.padEnd(w[c]))).join('  '));
}
