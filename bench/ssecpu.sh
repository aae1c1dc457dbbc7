#!/usr/bin/env bash
# CPU seconds per GiB of SIZE GETs, SSE-S3 against plain objects on one
# `cairn serve`: the server's (from /proc/PID/stat) and the load client's
# (`cairn bench s3`, timed by /usr/bin/time), sides interleaved (A B, B A,
# ...) for ROUNDS rounds after one warm-up run each (which writes the keys
# and fills the read cache). Unlike a throughput ratio, a CPU cost per byte
# hardly moves with what else the machine runs.
#
#   bench/ssecpu.sh [ROUNDS] [DURATION] [SIZE]     (defaults: 3 10s 64MiB)
#
# CLIENTS (16), DRIVES (4), PARITY (2) and ADDR (127.0.0.1:9112) tune the
# run. Loopback only; everything it starts is stopped on exit.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}; dur=${2:-10s}; size=${3:-64MiB}
clients=${CLIENTS:-16}; addr=${ADDR:-127.0.0.1:9112}
work=$(mktemp -d)
(cd "$top" && go build -o "$work/cairn" ./cmd/cairn)
export CAIRN_ROOT_USER=bench CAIRN_ROOT_PASSWORD=benchsecret
printf '%s\n' 1111111111111111111111111111111111111111111111111111111111111111 >"$work/master.key"
"$work/cairn" serve --data "$work/data" --drives "${DRIVES:-4}" --parity "${PARITY:-2}" --address "$addr" \
  --sse-master-key-file "$work/master.key" --log-level warn 2>"$work/cairn.log" &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -sf "http://$addr/health/ready" >/dev/null && break; sleep 0.2; done

cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; } # utime + stime, in clock ticks
run() { # side duration
  local sse=() before after
  [ "$1" = plain ] || sse=(--sse s3)
  before=$(cpu)
  /usr/bin/time -f "%U %S" -o "$work/ctime" "$work/cairn" bench s3 --endpoint "http://$addr" --bucket "bench-$1" \
    --op get --size "$size" --clients "$clients" --keys 16 --duration "$2" --json "${sse[@]}" >"$work/out.json"
  after=$(cpu)
  python3 - "$1" "$before" "$after" "$(getconf CLK_TCK)" "$work/ctime" "$work/out.json" <<'PY' >>"$work/results"
import json, sys
side, before, after, tck = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
user, system = map(float, open(sys.argv[5]).read().split()[-2:])
r = json.load(open(sys.argv[6]))
gib = r["ops"] * r["size"] / 2**30
print(side, r["mib_per_s"], (after - before) / tck / gib, (user + system) / gib)
PY
  tail -1 "$work/results" >&2
}
run plain 5s; run sse 5s; : >"$work/results"
for r in $(seq "$rounds"); do
  if [ $((r % 2)) = 1 ]; then run plain "$dur"; run sse "$dur"; else run sse "$dur"; run plain "$dur"; fi
done
python3 - "$work/results" "$rounds" "$size" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print(f"GET {sys.argv[3]}, SSE-S3 vs plain, CPU seconds per GiB, medians of {sys.argv[2]} interleaved rounds")
print("| side | MiB/s | server | client | total |")
print("|---|---|---|---|---|")
tot = {}
for side in ("plain", "sse"):
    rs = [r for r in rows if r[0] == side]
    med = lambda i: statistics.median(float(r[i]) for r in rs)
    tot[side] = statistics.median(float(r[2]) + float(r[3]) for r in rs)
    print(f"| {side} | {med(1):.0f} | {med(2):.3f} | {med(3):.3f} | {tot[side]:.3f} |")
print(f"total CPU per byte, plain / SSE: {tot['plain'] / tot['sse']:.2f}x (the throughput ratio a CPU-bound machine would give)")
PY
