"""Merge the result rows of one bench run (target/bench/results/*.jsonl) into a single table,
each meetcite number beside its peer's, and optionally write it into BENCHMARKS.md between
`<!-- bench:begin -->` and `<!-- bench:end -->` (the analysis around it is hand-written).
Usage: python3 bench/report.py [--write BENCHMARKS.md] [results dir]"""
import glob, json, os, platform, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
args = sys.argv[1:]
write = None
if args[:1] == ["--write"]:
    write, args = args[1], args[2:]
RES = args[0] if args else os.path.join(ROOT, "target/bench/results")

rows = []
for f in sorted(glob.glob(os.path.join(RES, "*.jsonl"))):
    rows += [json.loads(l) for l in open(f) if l.strip()]
if not rows:
    sys.exit(f"no results in {RES}")


def peer_of(impl, section):
    """The peer a meetcite number is compared with (None: it is a peer, or has none)."""
    if impl.startswith(("rapidfuzz", "onnxruntime")) or section == "e2e":
        return None
    if section in ("matcher", "scaling") and not impl.startswith("meetcite native,"):
        return "rapidfuzz partial_ratio_alignment"
    if impl.startswith(("tract native", "meetcite-int8 native")):
        return "onnxruntime 1 thread (python)"
    if impl.startswith(("tract wasm", "meetcite-int8 wasm")):
        return "onnxruntime-web wasm 1 thread"
    if section == "size":
        return "onnxruntime-web"
    if section == "transcript" and impl.startswith(("meetcite native", "meetcite wasm")):
        return "python peer"
    return None


LOWER_BETTER = {"ms", "us", "B", "MB"}


def ratio(r, p):
    if p is None or p["value"] == 0 or r["value"] == 0:
        return ""
    if r["unit"] in LOWER_BETTER:
        if r["unit"] in ("B", "MB"):
            return f"{r['value'] / p['value']:.2f}x the size"
        return f"{p['value'] / r['value']:.2f}x"  # > 1: meetcite faster
    if r["unit"] in ("pairs/s",):
        return f"{r['value'] / p['value']:.2f}x"
    return f"{r['value'] - p['value']:+.3f}"


def fmt(v, unit):
    if unit == "B":
        return f"{v / 1e6:.2f} MB" if v >= 1e5 else f"{v / 1e3:.1f} kB"
    if unit == "":
        return f"{v:.3f}"
    if v >= 100:
        return f"{v:,.0f} {unit}"
    return f"{v:.3g} {unit}" if v < 10 else f"{v:.1f} {unit}"


index = {}
for r in rows:
    index[(r["section"], r["case"], r["metric"], r["impl"])] = r
order = ["matcher", "nli", "families", "e2e", "size", "scaling"]
seen, groups = set(), []
for r in rows:
    k = (r["section"], r["case"], r["metric"])
    if k not in seen:
        seen.add(k)
        groups.append(k)
groups.sort(key=lambda k: (order.index(k[0]) if k[0] in order else 9,))

lines = ["| section | case | metric | implementation | value | vs peer (>1x: meetcite faster) | note |", "|---|---|---|---|---|---|---|"]
for sec, case, metric in groups:
    impls = [r for (s, c, m, i), r in index.items() if (s, c, m) == (sec, case, metric)]
    impls.sort(key=lambda r: (r["impl"].startswith(("rapidfuzz", "onnxruntime")), r["impl"]))
    for r in impls:
        p = peer_of(r["impl"], sec)
        pr = index.get((sec, case, metric, p)) if p else None
        note = r.get("note", "")
        lines.append(f"| {sec} | {case} | {metric} | {r['impl']} | {fmt(r['value'], r['unit'])} | {ratio(r, pr)} | {note} |")
table = "\n".join(lines)


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=20).stdout.strip().splitlines()[0]
    except Exception:
        return "n/a"


def pyver(mod):
    try:
        return __import__(mod).__version__
    except Exception:
        return "n/a"


ortweb = "n/a"
try:
    ortweb = json.load(open(os.path.join(ROOT, "bench/browser/node_modules/onnxruntime-web/package.json")))["version"]
except Exception:
    pass
lock = open(os.path.join(ROOT, "Cargo.lock")).read()
crate = lambda n: (re.search(r'name = "%s"\nversion = "([^"]+)"' % re.escape(n), lock) or [None, "n/a"])[1]
cpu = sh("lscpu | sed -n 's/^Model name: *//p'")
mem = sh("free -g | awk '/Mem:/{print $2}'")
dirty = " (dirty tree)" if sh("git status --porcelain | head -1") not in ("", "n/a") else ""
machine = [
    f"- CPU: {cpu}, {os.cpu_count()} cores; memory {mem} GiB; {platform.system()} {platform.release()}",
    f"- Rust: {sh('rustc --version')}; tract-onnx {crate('tract-onnx')}, tokenizers {crate('tokenizers')}, wasm-bindgen {crate('wasm-bindgen')}",
    f"- Python {platform.python_version()}: rapidfuzz {pyver('rapidfuzz')}, onnxruntime {pyver('onnxruntime')}, tokenizers {pyver('tokenizers')}",
    f"- Node {sh('node --version')}; {sh('/usr/bin/chromium --version')}; onnxruntime-web {ortweb}",
    f"- Run: {sh('date -u +%Y-%m-%dT%H:%MZ')}, commit {sh('git rev-parse --short HEAD')}{dirty}",
]
block = "\n".join(machine) + "\n\n" + table + "\n"
print(block)
if write:
    text = open(write).read() if os.path.exists(write) else "# Benchmarks\n\n<!-- bench:begin -->\n<!-- bench:end -->\n"
    a, b = text.index("<!-- bench:begin -->"), text.index("<!-- bench:end -->")
    text = text[: a + len("<!-- bench:begin -->")] + "\n" + block + text[b:]
    open(write, "w").write(text)
    print(f"wrote {write}")
