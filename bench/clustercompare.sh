#!/usr/bin/env bash
# Three nodes against one: a cluster of three `cairn serve` nodes (a, b, c
# on 127.0.0.1, .2 and .3, two drives each, 3+3 erasure over the six, the
# index on a one-member etcd) against one `cairn serve` on bbolt (four
# drives, 2+2), both driven by the yardsticks' load generator with 16
# clients in all, in interleaved rounds (A B, B A, A B ...), and the ratios
# of the medians.
#
#   bench/clustercompare.sh [ROUNDS] [DURATION]      (defaults: 3 10s)
#
# The cluster's 16 clients are three loadgen processes run at once, one per
# node, with 6, 5 and 5 clients (CLIENTS="6 5 5": a's, b's and c's); their
# ops/s and MiB/s are added, and the cluster's p50 and p99 are its slowest
# process's. The single node gets one loadgen with all the clients. A GET
# run first uploads its objects (~1 GiB in all, loadgen's default for one
# process, shared between the cluster's three in proportion to their
# clients, so that each client uploads as many and the three measured
# windows start together if their uploads go as fast; the summary gives
# how far apart the three ended) and reads those. A run in which a loadgen
# fails (a GET's upload stops at its first failed PUT) is reported, its
# figures dropped, and run once more.
#
# WORKLOADS="put 64MiB,get 4KiB" limits the run (default: put and get of
# 4KiB and 64MiB). Each round starts both sides on empty directories and a
# fresh etcd (its own data directory and key prefix); between rounds the
# servers stop (the nodes first, then etcd: a node whose etcd went first
# can wait forever in its close, its job elections resigning through a
# client nothing closes), the last round's data is
# deleted and the script waits SETTLE seconds (default 65: ext4 without a
# journal skips recently freed inodes; see s3compare.sh). GAP (default 30)
# is the pause after each large PUT run. ETCD names the etcd binary
# (default: etcd on PATH). LOGDIR=DIR keeps the servers' logs there.
# REV=REV builds that commit (exported with `git archive`) instead of the
# working tree.
# Ports: etcd 127.0.0.1:23790 (peer 23800), each node's S3 on :9201 and
# peer API on :9211 of its own address, the single node 127.0.0.1:9204.
#
# Everything runs on this host: the three nodes, etcd and the clients share
# its cores and its disk, so this measures what the peer hops, etcd and
# 3+3 erasure over six drives cost, not how a cluster scales over hosts.
#
# The summary also gives loadgen's error counts, and the warnings and
# errors each server logged, split into start (before all were ready),
# load, and stop. A server that does not stop within 60 s of SIGTERM gets
# SIGQUIT (its goroutines go to its log) and is reported.
#
# The load generator is built from CAIRN_SHARED_BENCH [../shared/bench
# next to the repository]. Loopback only; everything it starts is stopped
# on exit.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
shared=${CAIRN_SHARED_BENCH:-$top/../shared/bench}
rounds=${1:-3}; dur=${2:-10s}
etcd_bin=${ETCD:-$(command -v etcd || true)}
[ -n "$etcd_bin" ] && [ -x "$etcd_bin" ] ||
  { echo "clustercompare: etcd not found on PATH; install it with: apt-get install etcd-server (or set ETCD=/path/to/etcd)" >&2; exit 2; }
for ip in 127.0.0.2 127.0.0.3; do # the nodes' addresses: 127.0.0.0/8 is loopback on Linux
  python3 -c "import socket; socket.socket().bind(('$ip', 0))" 2>/dev/null ||
    { echo "clustercompare: cannot bind $ip (the nodes need 127.0.0.2 and 127.0.0.3 on loopback)" >&2; exit 2; }
done

work=$(mktemp -d)
nodes="a b c"
ip_of() { case $1 in a) echo 127.0.0.1 ;; b) echo 127.0.0.2 ;; c) echo 127.0.0.3 ;; esac; }
read -r ca cb cc <<<"${CLIENTS:-6 5 5}" # the clients of nodes a, b and c
clients_of() { case $1 in a) echo "$ca" ;; b) echo "$cb" ;; c) echo "$cc" ;; esac; }
clients=$((ca + cb + cc)) # the single node's
etcd_client=127.0.0.1:23790 etcd_peer=127.0.0.1:23800
one_addr=127.0.0.1:9204
cluster_arg="a=127.0.0.1:9211,b=127.0.0.2:9211,c=127.0.0.3:9211"
declare -A pid_of=() # running servers: name -> pid (node-a ... one, etcd)
round=0

# mark appends a phase line to every server's log (the servers append too;
# one short O_APPEND write does not tear theirs).
mark() { local n; for n in node-a node-b node-c one; do echo "{\"level\":\"bench\",\"message\":\"$1 (round $round)\"}" >>"$work/log-$n.txt"; done; }

# report: loadgen's complaints and what the servers logged, before the
# work dir goes.
report() {
  [ -s "$work/stops.txt" ] && cat "$work/stops.txt" >&2
  if [ -s "$work/loadgen.err" ]; then
    echo "clustercompare: loadgen reported (first 20 lines):" >&2
    head -20 "$work/loadgen.err" >&2
  fi
  ls "$work"/log-*.txt >/dev/null 2>&1 || return 0
  python3 - "$work"/log-*.txt <<'PY' >&2
import sys, json, collections, os
for path in sys.argv[1:]:
    name = os.path.basename(path)[4:-4]
    phase, counts, first, raw = "start", collections.Counter(), {}, collections.Counter()
    for line in open(path, errors="replace"):
        try:
            r = json.loads(line)
        except ValueError:
            raw[phase] += 1  # not zerolog's: a panic or a goroutine dump
            continue
        lvl, msg = r.get("level"), r.get("message", "")
        if lvl == "bench":
            phase = "load" if msg.startswith("ready") else "stop" if msg.startswith("stopping") else phase
            if msg.startswith("started"): phase = "start"
            continue
        if lvl not in ("warn", "error", "fatal", "panic"):
            continue
        k = (phase, lvl, msg, str(r.get("error", ""))[:240])
        counts[k] += 1
        first.setdefault(k, line.strip()[:1200])
    by_phase = collections.Counter()
    for (ph, lvl, _, _), n in counts.items(): by_phase[(ph, lvl)] += n
    summary = ", ".join(f"{ph}: {by_phase[(ph, 'error')]} errors, {by_phase[(ph, 'warn')]} warnings"
                        for ph in ("start", "load", "stop"))
    print(f"clustercompare: {name} logged: {summary}" + (f"; {sum(raw.values())} other lines ({dict(raw)})" if raw else ""))
    for ph in ("load", "stop", "start"):
        ks = [k for k in counts if k[0] == ph]
        for k in sorted(ks, key=lambda k: -counts[k])[:6 if ph != "start" else 3]:
            print(f"  {ph:>5} {counts[k]:>6}x {k[1]}: {k[2]}" + (f" ({k[3]})" if k[3] else ""))
        if ph != "start" and ks:
            print(f"        first: {first[sorted(ks, key=lambda k: -counts[k])[0]]}")
PY
}
# stop_servers stops the nodes and the single node (SIGTERM, then SIGQUIT
# after 60 s), then etcd: a node stops while its index still answers.
stop_servers() {
  local n i alive
  [ "${#pid_of[@]}" -gt 0 ] || return 0
  mark "stopping"
  for n in "${!pid_of[@]}"; do [ "$n" = etcd ] || kill "${pid_of[$n]}" 2>/dev/null || true; done
  for i in $(seq 60); do
    alive=; for n in "${!pid_of[@]}"; do [ "$n" = etcd ] || ! kill -0 "${pid_of[$n]}" 2>/dev/null || alive="$alive $n"; done
    [ -n "$alive" ] || break
    sleep 1
  done
  for n in $alive; do
    echo "clustercompare: $n (pid ${pid_of[$n]}, round $round) did not stop within 60 s of SIGTERM; sent SIGQUIT (its goroutines are in its log)" >>"$work/stops.txt"
    kill -QUIT "${pid_of[$n]}" 2>/dev/null || true
  done
  [ -z "$alive" ] || sleep 3
  for n in "${!pid_of[@]}"; do
    [ "$n" = etcd ] && continue
    kill -KILL "${pid_of[$n]}" 2>/dev/null || true; wait "${pid_of[$n]}" 2>/dev/null || true; unset "pid_of[$n]"
  done
  if [ -n "${pid_of[etcd]:-}" ]; then kill "${pid_of[etcd]}" 2>/dev/null || true; wait "${pid_of[etcd]}" 2>/dev/null || true; unset "pid_of[etcd]"; fi
}
cleanup() {
  stop_servers
  kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true
  report
  if [ -n "${LOGDIR:-}" ]; then mkdir -p "$LOGDIR"; cp "$work"/log-*.txt "$work"/etcd.log "$LOGDIR"/ 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM # through cleanup

cp -r "$shared"/. "$work/src"
(cd "$work/src" && go build -o "$work/loadgen" ./loadgen)
if [ -n "${REV:-}" ]; then # a commit, exported and built here: not what is being edited
  rev=$(git -C "$top" rev-parse --verify --quiet "$REV^{commit}") || { echo "clustercompare: REV=$REV is not a commit" >&2; exit 2; }
  mkdir "$work/cairn-src"; git -C "$top" archive "$rev" | tar -x -C "$work/cairn-src"
  (cd "$work/cairn-src" && go build -o "$work/cairn" ./cmd/cairn)
  desc=$(git -C "$top" rev-parse --short "$rev")
else
  (cd "$top" && go build -o "$work/cairn" ./cmd/cairn)
  desc=$(git -C "$top" describe --always --dirty 2>/dev/null || echo "$top")
fi
head -c 32 /dev/urandom | base64 >"$work/secret"
echo "clustercompare: cairn at $desc, $("$etcd_bin" --version | head -1); $rounds rounds of $dur; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# A server already on one of the ports would answer instead of ours.
for a in "$one_addr" 127.0.0.1:9201 127.0.0.2:9201 127.0.0.3:9201 127.0.0.1:9211 127.0.0.2:9211 127.0.0.3:9211 "$etcd_client" "$etcd_peer"; do
  if curl -s -o /dev/null --max-time 1 "http://$a/"; then
    echo "clustercompare: something already answers on $a" >&2; exit 1
  fi
done

wait_ready() { # url log what
  local i
  for i in $(seq 600); do # 60 s: a node waits up to 20 s for its peers
    [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$1" 2>/dev/null)" = 200 ] && return 0
    sleep 0.1
  done
  echo "clustercompare: $3 not ready after 60 s ($1); its log's end:" >&2
  tail -30 "$2" | cut -c1-1000 >&2
  exit 1
}
serve() { # name args...
  local name=$1; shift
  CAIRN_ROOT_USER=bench CAIRN_ROOT_PASSWORD=benchsecret \
    "$work/cairn" serve --no-console --log-level warn "$@" >>"$work/log-$name.txt" 2>&1 &
  pid_of[$name]=$!
}

# start_servers starts etcd, then the three nodes and the single node, on
# empty directories (round $1).
start_servers() {
  local r=$1 n
  round=$r
  mark "started"
  "$etcd_bin" --name default --data-dir "$work/etcd-$r" \
    --listen-client-urls "http://$etcd_client" --advertise-client-urls "http://$etcd_client" \
    --listen-peer-urls "http://$etcd_peer" --initial-advertise-peer-urls "http://$etcd_peer" \
    --initial-cluster "default=http://$etcd_peer" --initial-cluster-state new \
    >>"$work/etcd.log" 2>&1 &
  pid_of[etcd]=$!
  wait_ready "http://$etcd_client/health" "$work/etcd.log" etcd
  for n in $nodes; do
    serve "node-$n" --data "$work/$n-$r" --node "$n" \
      --meta "etcd://$etcd_client/bench$r/" --cluster "$cluster_arg" \
      --cluster-secret-file "$work/secret" --address "$(ip_of "$n"):9201"
  done
  serve one --data "$work/one-$r" --address "$one_addr"
  for n in $nodes; do wait_ready "http://$(ip_of "$n"):9201/health/ready" "$work/log-node-$n.txt" "node $n"; done
  wait_ready "http://$one_addr/health/ready" "$work/log-one.txt" "the single node"
  for n in "${!pid_of[@]}"; do
    kill -0 "${pid_of[$n]}" 2>/dev/null || { echo "clustercompare: $n exited at start (a port taken?)" >&2; exit 1; }
  done
  mark "ready"
}
next_round() {
  stop_servers
  rm -rf "$work/etcd-$1" "$work/one-$1" "$work"/[abc]-"$1"; sync
  echo "clustercompare: round $1 done; waiting ${SETTLE:-65} s for the freed inodes to age" >&2
  sleep "${SETTLE:-65}"
  start_servers $(($1 + 1))
}

size_bytes() { python3 -c "import sys; s=sys.argv[1]; u={'KiB':1<<10,'MiB':1<<20,'GiB':1<<30}; print(int(float(s[:-3])*u[s[-3:]]))" "$1"; }
# run_load runs one side's loadgen processes at once (side op size) and
# appends their lines, with the round, to results.jsonl if all of them
# finished; it fails if one did not (a GET's upload stops at its first
# failed PUT).
run_load() {
  local total n p c addr label ps=() ends=() rc=0 objs=()
  total=$(( (1 << 30) / $(size_bytes "$3") )); total=$(( total < 16 ? 16 : total > 2000 ? 2000 : total ))
  : >"$work/run.jsonl"; rm -f "$work"/run-*.err
  for n in $([ "$1" = one ] && echo one || echo "$nodes"); do
    addr=$one_addr c=$clients label=one
    [ "$n" = one ] || { addr=$(ip_of "$n"):9201; c=$(clients_of "$n"); label=cluster-$n; }
    [ "$2" != get ] || objs=(-objects $(( total * c / clients )))
    "$work/loadgen" -endpoint "http://$addr" -access bench -secret benchsecret -op "$2" -size "$3" -c "$c" \
      "${objs[@]}" -duration "$dur" -label "$label" -json "$work/run.jsonl" >/dev/null 2>"$work/run-$label.err" &
    ps+=($!)
  done
  for p in "${ps[@]}"; do wait "$p" || rc=$?; ends+=("$(date +%s.%N)"); done
  for n in "$work"/run-*.err; do sed "s/^/$(basename "$n" .err | cut -c5-): /" "$n"; done >"$work/run.err"
  sed "s/^/[round $round, $1 $2 $3] /" "$work/run.err" >>"$work/loadgen.err"
  [ "$rc" = 0 ] || return 1
  python3 -c "
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l); r['round'] = int(sys.argv[2]); print(json.dumps(r))" "$work/run.jsonl" "$round" >>"$work/results.jsonl"
  # how far apart the cluster's three processes ended (each measures
  # after its own uploads; a GET's are sized to end together)
  [ "$1" = one ] || echo "{\"spread\": $(python3 -c "import sys; v=[float(x) for x in sys.argv[1:]]; print(round(max(v)-min(v),2))" "${ends[@]}"), \"op\": \"$2\", \"size\": \"$3\"}" >>"$work/ends.jsonl"
}
# load runs a side's workload; a run in which a loadgen failed is
# reported and run once more (its figures are not kept).
load() { # side op size
  local try
  for try in 1 2; do
    run_load "$@" && return 0
    echo "round $round, $1 $2 $3, try $try: a loadgen failed: $(grep -v ' error: ' "$work/run.err" | head -3 | tr '\n' ' ')" >>"$work/failed.txt"
    echo "clustercompare: $(tail -1 "$work/failed.txt")" >&2
  done
  echo "clustercompare: round $round, $1 $2 $3 failed twice; no figure for it" >&2
}

IFS=, read -r -a workloads <<<"${WORKLOADS:-put 4KiB,get 4KiB,put 64MiB,get 64MiB}"
. "$top/bench/order.sh" # order_of
base_bin= # two sides: A B, B A, ...
start=$(date +%s)
: >"$work/ends.jsonl"; : >"$work/results.jsonl"; : >"$work/failed.txt"
start_servers 1
for r in $(seq "$rounds"); do
  [ "$r" = 1 ] || next_round $((r - 1))
  for w in "${workloads[@]}"; do
    set -- $w
    gap=0; case "$1 $2" in put*MiB|put*GiB) gap=${GAP:-30} ;; esac
    for s in $(order_of "$r" one | sed 's/cairn/cluster/'); do
      load "$s" "$1" "$2"; sync; sleep "$gap"
    done
  done
  echo "clustercompare: round $r measured ($(( $(date +%s) - start )) s since the start; load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
done
stop_servers
python3 - "$work/results.jsonl" "$work/ends.jsonl" "$work/failed.txt" "$desc" "$rounds" "$dur" "$clients" "$ca+$cb+$cc" <<'PY'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1])]
ends = [json.loads(l) for l in open(sys.argv[2])]
failed = open(sys.argv[3]).read().splitlines()
desc, nrounds, dur = sys.argv[4], int(sys.argv[5]), sys.argv[6]
def key(r): return (r["op"], r["size_bytes"])
runs = {}  # (side, op, size) -> {round: [lines]}
for r in rows:
    runs.setdefault(("one" if r["label"] == "one" else "cluster",) + key(r), {}).setdefault(r["round"], []).append(r)
def per_round(side, k):  # round -> the figures of that round's run
    out = {}
    for rnd, t in sorted(runs.get((side,) + k, {}).items()):
        t.sort(key=lambda x: x["label"])
        assert [x["label"] for x in t] == (["one"] if side == "one" else ["cluster-a", "cluster-b", "cluster-c"]), t
        out[rnd] = dict(ops=sum(x["ops_per_sec"] for x in t), mib=sum(x["mib_per_sec"] for x in t),
                        p50=max(x["p50_ms"] for x in t), p99=max(x["p99_ms"] for x in t),
                        err=sum(x["errors"] for x in t),
                        nodes="/".join(f"{x['ops_per_sec']:.0f}" for x in t) +
                              " (p99 " + "/".join(f"{x['p99_ms']:.0f}" for x in t) + ")")
    return out
ratio = lambda a, b: a / b if b else float("nan")
keys = sorted({key(r) for r in rows}, key=lambda k: (k[1], k[0]))
print(f"cairn {desc}: three nodes (6 drives, 3+3, index on a one-member etcd) vs one node (bbolt, 4 drives, 2+2)")
print(f"{sys.argv[7]} clients (cluster: {sys.argv[8]}, one loadgen per node, figures added), {nrounds} rounds of {dur}, order alternated")
print("medians of the rounds; ratio: cluster/one of the medians; p50/p99 in ms: medians over the rounds"
      " (cluster: its slowest loadgen's); errors: requests loadgen saw fail while measuring, all rounds")
print(f"{'workload':<10} {'one':>15} {'cluster':>15} {'ratio':>7}  {'p50 one / cl':>16} {'p99 one / cl':>18}  errors one/cl  rounds one/cl")
detail = []
for k in keys:
    op, size = k
    big = size >= 1 << 20
    f, unit = ("mib", "MiB/s") if big else ("ops", "ops/s")
    name = f"{op.upper()} {size >> 20}MiB" if big else f"{op.upper()} {size >> 10}KiB"
    o, c = per_round("one", k), per_round("cluster", k)
    med = lambda g, q: st.median(x[q] for x in g.values()) if g else float("nan")
    mo, mc = med(o, f), med(c, f)
    print(f"{name:<10} {mo:>9.0f} {unit} {mc:>9.0f} {unit} {ratio(mc, mo):>6.3f}x  "
          f"{med(o, 'p50'):>7.1f} / {med(c, 'p50'):<7.1f} {med(o, 'p99'):>8.1f} / {med(c, 'p99'):<8.1f} "
          f"{sum(x['err'] for x in o.values())} / {sum(x['err'] for x in c.values())}"
          f"{'':>8}{len(o)} / {len(c)}")
    both = [r for r in o if r in c]
    per = [ratio(c[r][f], o[r][f]) for r in both]
    fmt = lambda g: " ".join(f"{g[r][f]:.0f}" if r in g else "-" for r in range(1, nrounds + 1))
    detail.append(f"{name:<10} one {fmt(o)} | cluster {fmt(c)} {unit}; cluster/one per round "
                  + " ".join(f"{v:.3f}" for v in per) + (f" (range {min(per):.3f}-{max(per):.3f})" if per else ""))
    detail.append(f"{'':<10} cluster ops/s per node a/b/c (p99 ms): " + ", ".join(c[r]["nodes"] for r in c) +
                  "; errors per round one " + " ".join(str(o[r]["err"]) for r in o) + " | cluster " + " ".join(str(c[r]["err"]) for r in c))
print("per round, in round order:")
for d in detail: print("  " + d)
spread = {}
for e in ends: spread.setdefault(f"{e['op']} {e['size']}", []).append(e["spread"])
print("the cluster's three loadgens ended within (s): " + "; ".join(f"{k} {' '.join(str(v) for v in vs)}" for k, vs in spread.items()))
if failed:
    print("runs in which a loadgen failed (figures not kept; run once more):")
    for l in failed: print("  " + l)
PY
echo "clustercompare: total $(( $(date +%s) - start )) s" >&2
