#!/usr/bin/env bash
# Interleaved S3 comparison: ../shared/bench's naive server against
# `cairn serve`, both driven by ../shared/bench's loadgen (the yardstick's
# own client), A B, B A, A B ..., and the ratios of the medians.
#
#   bench/s3compare.sh [DRIVES] [ROUNDS] [DURATION]      (defaults: 4 3 10s)
#
# WORKLOADS="put 64MiB,get 4KiB" limits the run to those workloads (default:
# put and get of 4KiB and 64MiB). CAIRN_FLAGS adds flags to `cairn serve`
# (CAIRN_FLAGS="--read-cache 0" measures without the block cache). Each round
# starts both servers on empty directories and deletes the last round's
# data first (then waits 65 s; see next_round). GAP (default 30) is the
# pause after each large PUT run.
# Needs ../shared/bench next to the repository. Loopback only; everything it
# starts is stopped on exit.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
shared=${CAIRN_SHARED_BENCH:-$top/../shared/bench}
drives=${1:-4}; rounds=${2:-3}; dur=${3:-10s}
work=$(mktemp -d)
report_errors() { # cairn's own account of failed requests, before the work dir goes
  [ -f "$work/cairn.log" ] || return 0
  local n; n=$(grep -c '"level":"error"' "$work/cairn.log" || true)
  [ "$n" = 0 ] || { echo "s3compare: cairn logged $n errors; the first:" >&2; grep -m1 '"level":"error"' "$work/cairn.log" | cut -c1-2000 >&2; }
}
trap 'report_errors; kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

cp -r "$shared"/. "$work/src"
(cd "$work/src" && go build -o "$work/naives3" ./naives3 && go build -o "$work/loadgen" ./loadgen)
(cd "$top" && go build -o "$work/cairn" ./cmd/cairn)

# start_servers starts both servers on empty directories (round $1).
start_servers() {
  "$work/naives3" -addr 127.0.0.1:9101 -dir "$work/naive-$1" >/dev/null 2>&1 &
  naive_pid=$!
  CAIRN_ROOT_USER=bench CAIRN_ROOT_PASSWORD=benchsecret \
    "$work/cairn" serve --data "$work/cairn-data-$1" --drives "$drives" --address 127.0.0.1:9102 --log-level warn ${CAIRN_FLAGS:-} >>"$work/cairn.log" 2>&1 &
  cairn_pid=$!
  for port in 9101 9102; do
    for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/health/ready" >/dev/null 2>&1 && break
      [ $port = 9101 ] && curl -s "http://127.0.0.1:$port/" >/dev/null 2>&1 && break; sleep 0.1; done
  done
  # A server left running on one of the ports would answer instead of ours.
  for pid in $naive_pid $cairn_pid; do
    kill -0 "$pid" 2>/dev/null || { echo "s3compare: a server exited at start (port 9101 or 9102 taken?)" >&2; cat "$work/cairn.log" >&2; exit 1; }
  done
}

# next_round stops both servers and deletes round $1's data, so that the
# disk does not fill (a round of all four workloads writes ~17 GB), then
# waits 65 s: ext4 without a journal (this machine's root) skips inodes
# freed in the last 60 s when it allocates, which makes creating files
# (the naive server's 4 KiB PUTs) several times slower for a minute
# after a large delete.
next_round() {
  kill "$naive_pid" "$cairn_pid"; wait "$naive_pid" "$cairn_pid" 2>/dev/null || true
  rm -rf "$work/naive-$1" "$work/cairn-data-$1"; sync
  case "${WORKLOADS:-KiB}" in
    *KiB*) echo "s3compare: round $1 done; waiting 65 s for the freed inodes to age" >&2
      sleep 65 ;;
  esac
  start_servers $(($1 + 1))
}

load() { # label endpoint op size
  local creds=()
  [ "$1" = cairn ] && creds=(-access bench -secret benchsecret)
  "$work/loadgen" -endpoint "$2" "${creds[@]}" -op "$3" -size "$4" -c 16 -duration "$dur" \
    -label "$1" -json "$work/results.jsonl" >/dev/null
}
IFS=, read -r -a workloads <<<"${WORKLOADS:-put 4KiB,get 4KiB,put 64MiB,get 64MiB}"
start_servers 1
for r in $(seq "$rounds"); do
  [ "$r" = 1 ] || next_round $((r - 1))
  for w in "${workloads[@]}"; do
    set -- $w
    # Odd rounds run the naive server first, even rounds Cairn (A B, B A):
    # a run leaves the disk busy for the next one (the VM's host flushes
    # what the guest fsynced), which would otherwise always be Cairn's.
    # After a large PUT run the VM's disk stays slow for tens of seconds
    # (a run started at once measured half its speed, 262 against 640
    # MiB/s after a 20 s pause): each such run is followed by a pause of
    # GAP seconds, so that both servers start on an idle disk.
    gap=0; case "$1 $2" in put*MiB|put*GiB) gap=${GAP:-30} ;; esac
    if [ $((r % 2)) = 1 ]; then
      load naive http://127.0.0.1:9101 "$1" "$2"; sync; sleep "$gap"
      load cairn http://127.0.0.1:9102 "$1" "$2"; sync; sleep "$gap"
    else
      load cairn http://127.0.0.1:9102 "$1" "$2"; sync; sleep "$gap"
      load naive http://127.0.0.1:9101 "$1" "$2"; sync; sleep "$gap"
    fi
  done
done
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
