#!/usr/bin/env bash
# Fuzz the answer parser, the quote matcher and the context builder with cargo-fuzz (libFuzzer).
# Not run in CI; run it before a release or after touching src/answer.rs, src/context.rs,
# src/quote.rs, src/text.rs, src/verify.rs or src/render.rs.
#
#   scripts/fuzz.sh                                  # every target, FUZZ_SECONDS each (default 60)
#   FUZZ_SECONDS=600 scripts/fuzz.sh quote_matcher   # one target, ten minutes
#
#   FUZZ_SECONDS     seconds per target (libFuzzer -max_total_time)
#   FUZZ_SANITIZER   address | none (default: address when it builds, else none)
#   FUZZ_JOBS        parallel libFuzzer workers per target (default 1)
#   FUZZ_ARGS        extra libFuzzer flags, e.g. "-dict=... -only_ascii=1"
#
# The toolchain may be stable: RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its -Z flags. Installs
# cargo-fuzz when missing. Seeds fuzz/corpus/<target>/ from tests/fixtures (*.json files and
# *.jsonl lines) on every run (idempotent; the corpus grows across runs and is git-ignored).
# Exits non-zero when a target crashes and prints the crashing input's path (fuzz/artifacts/...);
# reproduce with:  RUSTC_BOOTSTRAP=1 cargo fuzz run -s none <target> <artifact>
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
ALL=(answer_parser quote_matcher context_builder)
SECONDS_EACH=${FUZZ_SECONDS:-60}
JOBS=${FUZZ_JOBS:-1}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${ALL[@]}")
export RUSTC_BOOTSTRAP=1

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "== installing cargo-fuzz"
  cargo install cargo-fuzz --locked || exit 1
fi

echo "== seeding fuzz/corpus from tests/fixtures"
python3 - "$ROOT" <<'PY'
import hashlib, json, pathlib, sys
root = pathlib.Path(sys.argv[1])
fx = root / "tests" / "fixtures"
corpus = root / "fuzz" / "corpus"

def put(target, data: bytes):
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    (d / ("seed-" + hashlib.sha1(data).hexdigest())).write_bytes(data)

jsons = sorted(fx.glob("*.json"))
lines = [l for f in sorted(fx.glob("*.jsonl")) for l in f.read_text("utf-8").splitlines() if l.strip()]
for f in jsons:
    b = f.read_bytes()
    put("answer_parser", b)
    put("context_builder", b"\x01" + b)  # odd first byte: the raw JSON path
    if f.name.endswith("_answer.json"):
        # also wrapped in prose and a code fence, as LLMs write it
        put("answer_parser", b"Sure, here is the answer:\n```json\n" + b + b"\n```\nHope this helps.")
n = 0
for l in lines[:400]:
    try:
        v = json.loads(l)
    except ValueError:
        continue
    put("answer_parser", l.encode())
    if isinstance(v, dict) and isinstance(v.get("text"), str) and isinstance(v.get("quote"), str):
        put("quote_matcher", v["text"].encode() + b"\x00" + v["quote"].encode())
        n += 1
# chunk texts with the answer quotes of the hand-written scenario
try:
    chunks = json.loads((fx / "pricing_chunks.json").read_text("utf-8"))
    chunks = chunks if isinstance(chunks, list) else chunks["chunks"]
    answer = json.loads((fx / "pricing_answer.json").read_text("utf-8"))
    for c in chunks:
        for cl in answer.get("claims", []):
            put("quote_matcher", c["text"].encode() + b"\x00" + str(cl.get("quote", "")).encode())
except (OSError, ValueError, KeyError, TypeError):
    pass
for t in ("answer_parser", "quote_matcher", "context_builder"):
    d = corpus / t
    print(f"  {t}: {len(list(d.iterdir())) if d.exists() else 0} files in fuzz/corpus/{t}")
PY
[ $? -eq 0 ] || { echo "error: seeding failed" >&2; exit 1; }

sanitizer=${FUZZ_SANITIZER:-}
if [ -z "$sanitizer" ]; then
  if cargo fuzz build -s address "${targets[0]}" >/tmp/meetcite-fuzz-asan.log 2>&1; then
    sanitizer=address
  else
    echo "warning: the AddressSanitizer build failed (see /tmp/meetcite-fuzz-asan.log); using --sanitizer none" >&2
    sanitizer=none
  fi
fi
echo "== sanitizer: $sanitizer, $SECONDS_EACH s per target, $JOBS job(s)"

mkdir -p fuzz/logs
failed=0
summary=()
for t in "${targets[@]}"; do
  log=fuzz/logs/$t.log
  echo "== $t (log: $log)"
  extra=()
  [ "$JOBS" -gt 1 ] && extra+=(-jobs="$JOBS" -workers="$JOBS")
  # shellcheck disable=SC2086
  cargo fuzz run -s "$sanitizer" "$t" -- -max_total_time="$SECONDS_EACH" -max_len=16384 -timeout=20 -rss_limit_mb=4096 \
    -print_final_stats=1 "${extra[@]}" ${FUZZ_ARGS:-} 2>&1 | tee "$log" | grep -E '^(#[0-9]+ +(INITED|DONE|pulse|REDUCE|NEW)|==|stat::|Test unit written|SUMMARY|thread .* panicked|Failing input)' | grep -vE '^#[0-9]+ +(NEW|REDUCE)' | tail -40
  rc=${PIPESTATUS[0]}
  execs=$(awk '/stat::number_of_executed_units/{s+=$2} END{print s+0}' "$log")
  rate=$(awk '/stat::average_exec_per_sec/{s+=$2} END{print s+0}' "$log")
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | awk '{print $2}')
  if [ "$rc" -ne 0 ]; then
    failed=1
    art=$(grep -oE '[^ 	]*fuzz/artifacts/[^ ]+' "$log" | tail -1)
    summary+=("$t: CRASH (exit $rc) after $execs execs; input: ${art:-see $log}")
    echo "!! $t crashed; reproduce: RUSTC_BOOTSTRAP=1 cargo fuzz run -s $sanitizer $t ${art:-<artifact>}" >&2
  else
    summary+=("$t: ok, $execs execs, $rate exec/s, coverage ${cov:-?}")
  fi
done
echo "---- fuzz summary ----"
printf '%s\n' "${summary[@]}"
exit "$failed"
