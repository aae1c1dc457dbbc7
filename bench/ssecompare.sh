#!/usr/bin/env bash
# SSE-S3 against plain objects on one `cairn serve`, side by side:
# `cairn bench s3` PUT and GET of SIZE objects, the two sides interleaved
# (A B, B A, ...) for ROUNDS rounds, then the medians and their ratio.
#
#   bench/ssecompare.sh [ROUNDS] [DURATION] [SIZE]     (defaults: 3 8s 64MiB)
#
# SSE (default s3) is the --sse mode of the encrypted side (s3, kms, c);
# CLIENTS (16), DRIVES (4), PARITY (2), GAP (20: seconds of pause after
# each PUT run, for the disk to settle) and ADDR (127.0.0.1:9111) tune the
# run. Loopback only; everything it starts is stopped on exit.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}; dur=${2:-8s}; size=${3:-64MiB}
mode=${SSE:-s3}; clients=${CLIENTS:-16}; gap=${GAP:-20}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
(cd "$top" && go build -o "$work/cairn" ./cmd/cairn)
export CAIRN_ROOT_USER=bench CAIRN_ROOT_PASSWORD=benchsecret
addr=${ADDR:-127.0.0.1:9111}
printf '%s\n' 1111111111111111111111111111111111111111111111111111111111111111 >"$work/master.key"
printf 'bench %s\n' 2222222222222222222222222222222222222222222222222222222222222222 >"$work/ring"
"$work/cairn" serve --data "$work/data" --drives "${DRIVES:-4}" --parity "${PARITY:-2}" --address "$addr" \
  --sse-master-key-file "$work/master.key" --sse-kms-keyring "$work/ring" --log-level warn 2>"$work/cairn.log" &
for _ in $(seq 100); do curl -sf "http://$addr/health/ready" >/dev/null && break; sleep 0.2; done

run() { # side op
  local sse=()
  [ "$1" = plain ] || sse=(--sse "$mode")
  "$work/cairn" bench s3 --endpoint "http://$addr" --bucket "bench-$1" --op "$2" --size "$size" \
    --clients "$clients" --keys 16 --duration "$dur" --json "${sse[@]}" |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print(sys.argv[1], sys.argv[2], r["mib_per_s"], r["errors"])' "$1" "$2" \
    >>"$work/results"
  tail -1 "$work/results" >&2
  [ "$2" = put ] && sleep "$gap" || true
}
for r in $(seq "$rounds"); do
  for op in put get; do
    if [ $((r % 2)) = 1 ]; then run plain "$op"; run sse "$op"; else run sse "$op"; run plain "$op"; fi
  done
done
python3 - "$work/results" "$rounds" "$size" "$mode" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print(f"SSE-{sys.argv[4].upper()} vs plain, {sys.argv[3]} objects, medians of {sys.argv[2]} interleaved rounds (MiB/s)")
print("| op | plain | SSE | ratio | rounds plain | rounds SSE |")
print("|---|---|---|---|---|---|")
for op in ("put", "get"):
    p = [float(r[2]) for r in rows if r[0] == "plain" and r[1] == op]
    s = [float(r[2]) for r in rows if r[0] == "sse" and r[1] == op]
    errs = sum(int(r[3]) for r in rows if r[1] == op)
    mp, ms = statistics.median(p), statistics.median(s)
    print(f"| {op.upper()} {sys.argv[3]} | {mp:.0f} | {ms:.0f} | {ms/mp:.2f}x | {', '.join(f'{v:.0f}' for v in p)} | {', '.join(f'{v:.0f}' for v in s)} |" + (f" ({errs} errors)" if errs else ""))
PY
