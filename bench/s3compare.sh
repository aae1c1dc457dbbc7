#!/usr/bin/env bash
# Interleaved S3 comparison: the yardsticks' naive server (one file per PUT:
# write, fsync, rename) against `cairn serve`, both driven by the
# yardsticks' load generator, A B, B A, A B ..., and the ratios of the
# medians.
#
#   bench/s3compare.sh [DRIVES] [ROUNDS] [DURATION]      (defaults: 4 3 10s)
#
# WORKLOADS="put 64MiB,get 4KiB" limits the run to those workloads (default:
# put and get of 4KiB and 64MiB). CAIRN_FLAGS adds flags to `cairn serve`
# (CAIRN_FLAGS="--read-cache 0" measures without the block cache). Each round
# starts the servers on empty directories and deletes the last round's
# data first (then waits 65 s; see next_round). GAP (default 30) is the
# pause after each large PUT run.
#
# Before/after: BASELINE=/path/to/cairn (a prebuilt binary) or
# BASELINE_REV=REV (a git revision, exported with `git archive` into the
# work dir and built there) adds a third side, another Cairn on port 9103,
# measured in the same rounds; the order of the three rotates through all
# six permutations (rounds 1-2 swap cairn and the baseline with the naive
# server first, 3-4 with it last, 5-6 in the middle), so use an even
# number of rounds, six for full balance. The summary then gives, per
# workload, cairn/naive, baseline/naive and cairn/baseline: the ratio of
# the medians, the median of the per-round ratios and their range.
# BASELINE_FLAGS [CAIRN_FLAGS] are the baseline's extra flags. Unset,
# the run is the two-sided one above.
#
# The yardsticks (naives3, loadgen) are built from CAIRN_SHARED_BENCH
# [../shared/bench next to the repository]. Loopback only; everything it
# starts is stopped on exit.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
shared=${CAIRN_SHARED_BENCH:-$top/../shared/bench}
drives=${1:-4}; rounds=${2:-3}; dur=${3:-10s}
[ -z "${BASELINE:-}" ] || [ -z "${BASELINE_REV:-}" ] || { echo "s3compare: set BASELINE or BASELINE_REV, not both" >&2; exit 2; }
if [ -n "${BASELINE:-}" ]; then
  [ -x "$BASELINE" ] || { echo "s3compare: BASELINE=$BASELINE is not an executable" >&2; exit 2; }
elif [ -n "${BASELINE_REV:-}" ]; then
  rev=$(git -C "$top" rev-parse --verify --quiet "$BASELINE_REV^{commit}") ||
    { echo "s3compare: BASELINE_REV=$BASELINE_REV is not a commit" >&2; exit 2; }
fi
work=$(mktemp -d)
report_errors() { # the Cairns' own account of failed requests, before the work dir goes
  local log n
  for log in "$work/cairn.log" "$work/baseline.log"; do
    [ -f "$log" ] || continue
    n=$(grep -c '"level":"error"' "$log" || true)
    [ "$n" = 0 ] || { echo "s3compare: $(basename "$log" .log) logged $n errors; the first:" >&2; grep -m1 '"level":"error"' "$log" | cut -c1-2000 >&2; }
  done
}
trap 'report_errors; kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

cp -r "$shared"/. "$work/src"
(cd "$work/src" && go build -o "$work/naives3" ./naives3 && go build -o "$work/loadgen" ./loadgen)
(cd "$top" && go build -o "$work/cairn" ./cmd/cairn)
cairn_desc=$(git -C "$top" describe --always --dirty 2>/dev/null || echo "$top")

# The baseline: a binary given, or a revision exported and built here.
. "$top/bench/order.sh" # resolve_baseline, order_of
sides="naive cairn"
resolve_baseline
[ -z "$base_bin" ] || sides="naive cairn baseline"
echo "s3compare: cairn at $cairn_desc${base_bin:+, baseline $base_desc}; $drives drives, $rounds rounds of $dur" >&2

port_of() { case $1 in naive) echo 9101 ;; cairn) echo 9102 ;; baseline) echo 9103 ;; esac; }

start_cairn() { # binary data port log flags...
  local bin=$1 data=$2 port=$3 log=$4; shift 4
  CAIRN_ROOT_USER=bench CAIRN_ROOT_PASSWORD=benchsecret \
    "$bin" serve --data "$data" --drives "$drives" --address "127.0.0.1:$port" --log-level warn "$@" >>"$log" 2>&1 &
}
# start_servers starts the servers on empty directories (round $1).
start_servers() {
  "$work/naives3" -addr 127.0.0.1:9101 -dir "$work/naive-$1" >/dev/null 2>&1 &
  naive_pid=$!
  # shellcheck disable=SC2086
  start_cairn "$work/cairn" "$work/cairn-data-$1" 9102 "$work/cairn.log" ${CAIRN_FLAGS:-}
  cairn_pid=$!
  pids="$naive_pid $cairn_pid"
  if [ -n "$base_bin" ]; then
    # shellcheck disable=SC2086
    start_cairn "$base_bin" "$work/baseline-data-$1" 9103 "$work/baseline.log" ${BASELINE_FLAGS-${CAIRN_FLAGS:-}}
    baseline_pid=$!
    pids="$pids $baseline_pid"
  fi
  for s in $sides; do
    port=$(port_of "$s")
    for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/health/ready" >/dev/null 2>&1 && break
      [ "$s" = naive ] && curl -s "http://127.0.0.1:$port/" >/dev/null 2>&1 && break; sleep 0.1; done
  done
  # A server left running on one of the ports would answer instead of ours.
  for pid in $pids; do
    kill -0 "$pid" 2>/dev/null || { echo "s3compare: a server exited at start (port 9101, 9102 or 9103 taken?)" >&2
      cat "$work/cairn.log" >&2; [ -f "$work/baseline.log" ] && cat "$work/baseline.log" >&2; exit 1; }
  done
}

# next_round stops the servers and deletes round $1's data, so that the
# disk does not fill (a round of all four workloads writes ~17 GB, ~25 GB
# with a baseline), then waits 65 s: ext4 without a journal (this
# machine's root) skips inodes freed in the last 60 s when it allocates,
# which makes creating files (the naive server's 4 KiB PUTs) several
# times slower for a minute after a large delete.
next_round() {
  # shellcheck disable=SC2086
  kill $pids; wait $pids 2>/dev/null || true
  rm -rf "$work/naive-$1" "$work/cairn-data-$1" "$work/baseline-data-$1"; sync
  case "${WORKLOADS:-KiB}" in
    *KiB*) echo "s3compare: round $1 done; waiting 65 s for the freed inodes to age" >&2
      sleep 65 ;;
  esac
  start_servers $(($1 + 1))
}

load() { # side op size
  local creds=()
  [ "$1" = naive ] || creds=(-access bench -secret benchsecret)
  "$work/loadgen" -endpoint "http://127.0.0.1:$(port_of "$1")" "${creds[@]}" -op "$2" -size "$3" -c 16 -duration "$dur" \
    -label "$1" -json "$work/results.jsonl" >/dev/null
}
IFS=, read -r -a workloads <<<"${WORKLOADS:-put 4KiB,get 4KiB,put 64MiB,get 64MiB}"
start_servers 1
for r in $(seq "$rounds"); do
  [ "$r" = 1 ] || next_round $((r - 1))
  for w in "${workloads[@]}"; do
    set -- $w
    # After a large PUT run the VM's disk stays slow for tens of seconds
    # (a run started at once measured half its speed, 262 against 640
    # MiB/s after a 20 s pause): each such run is followed by a pause of
    # GAP seconds, so that every server starts on an idle disk.
    gap=0; case "$1 $2" in put*MiB|put*GiB) gap=${GAP:-30} ;; esac
    for s in $(order_of "$r" naive); do
      load "$s" "$1" "$2"; sync; sleep "$gap"
    done
  done
done
if [ -z "$base_bin" ]; then
python3 - "$work/results.jsonl" "$drives" <<'PY'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1])]
def key(r): return (r["op"], r["size_bytes"])
groups = {}
for r in rows:
    groups.setdefault((r["label"],) + key(r), []).append(r)
print(f"cairn with {sys.argv[2]} drives vs naive, 16 clients, medians of {len(rows)//(2*len({key(r) for r in rows}))} rounds")
print(f"{'workload':<12} {'naive':>14} {'cairn':>14} {'ratio':>7}   p99 naive / cairn (ms)   per round (naive | cairn)")
for op, size in sorted({key(r) for r in rows}, key=lambda k: (k[1], k[0])):
    n, c = groups[("naive", op, size)], groups[("cairn", op, size)]
    big = size >= 1 << 20
    m = (lambda g: st.median(x["mib_per_sec"] for x in g)) if big else (lambda g: st.median(x["ops_per_sec"] for x in g))
    unit = "MiB/s" if big else "ops/s"
    p99 = lambda g: st.median(x.get("p99_ms", 0) for x in g)
    name = f"{op.upper()} {size >> 20}MiB" if big else f"{op.upper()} {size >> 10}KiB"
    v = (lambda x: x["mib_per_sec"]) if big else (lambda x: x["ops_per_sec"])
    rounds = " ".join(f"{v(x):.0f}" for x in n) + " | " + " ".join(f"{v(x):.0f}" for x in c)
    print(f"{name:<12} {m(n):>8.0f} {unit} {m(c):>8.0f} {unit} {m(c)/m(n):>6.2f}x   {p99(n):.1f} / {p99(c):.1f}   {rounds}")
PY
else
python3 - "$work/results.jsonl" "$drives" "$cairn_desc" "$base_desc" <<'PY'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1])]
drives, cdesc, bdesc = sys.argv[2], sys.argv[3], sys.argv[4]
def key(r): return (r["op"], r["size_bytes"])
groups = {}
for r in rows:  # in round order: each side appends one line per workload and round
    groups.setdefault((r["label"],) + key(r), []).append(r)
keys = sorted({key(r) for r in rows}, key=lambda k: (k[1], k[0]))
print(f"cairn ({cdesc}) and baseline ({bdesc}) with {drives} drives vs naive, 16 clients, "
      f"{len(groups[('naive',) + keys[0]])} rounds, order rotated")
print("ratio: of the medians; median and range: of the per-round ratios")
for op, size in keys:
    big = size >= 1 << 20
    unit = "MiB/s" if big else "ops/s"
    v = (lambda x: x["mib_per_sec"]) if big else (lambda x: x["ops_per_sec"])
    name = f"{op.upper()} {size >> 20}MiB" if big else f"{op.upper()} {size >> 10}KiB"
    vals = {s: [v(x) for x in groups[(s, op, size)]] for s in ("naive", "cairn", "baseline")}
    p99 = {s: st.median(x.get("p99_ms", 0) for x in groups[(s, op, size)]) for s in vals}
    med = {s: st.median(vals[s]) for s in vals}
    print(f"{name:<12} " + "   ".join(f"{s} {med[s]:.0f} {unit} (p99 {p99[s]:.1f} ms)" for s in vals))
    for a, b in (("cairn", "naive"), ("baseline", "naive"), ("cairn", "baseline")):
        per = [x / y for x, y in zip(vals[a], vals[b])]
        print(f"  {a + '/' + b:<16} {med[a] / med[b]:>6.3f}x   median {st.median(per):.3f}x"
              f"   range {min(per):.3f}-{max(per):.3f}   per round " + " ".join(f"{p:.3f}" for p in per))
    print("  per round (naive | cairn | baseline): " + " | ".join(" ".join(f"{x:.0f}" for x in vals[s]) for s in vals))
PY
fi
