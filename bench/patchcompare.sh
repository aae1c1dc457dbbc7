#!/usr/bin/env bash
# Writes into existing files on the mount (issue 20): `cairn serve
# --mount` against go-fuse's loopback filesystem (the yardsticks'
# fuseloop) over a directory on the same disk, interleaved A B, B A, ...,
# and the ratios of the medians. What it measures is what a small change
# to a large existing file costs. Until e9315c8 the mount copied the
# file's current version at the open for writing and put the whole file
# again at every close and fsync; since, it writes only the changed
# ranges (fs/patch.go, objstore.PatchFuncAsync), and since a4e8ca4 it
# holds a file's commit for more closes and keeps its write state for the
# next writer (fs/park.go).
#
#   bench/patchcompare.sh [ROUNDS]                        (default: 3)
#
# Workloads (each run on a fresh mount, fuseloop then Cairn in odd rounds,
# Cairn then fuseloop in even ones):
#   append   a file of SIZE_MIB MiB, created once per side at the set-up
#            (untimed, `sync` after); per round, after dropping the page
#            cache, APPENDS times `dd if=/dev/zero of=F bs=4k count=1
#            oflag=append conv=notrunc` (open O_APPEND, write 4 KiB, close),
#            each timed alone (date +%s%N around the dd, its fork and exec
#            included on both sides): the median ms of an append; and the
#            whole series plus an fsync of the file after it, in s (Cairn's
#            close registers its commit and holds it for more closes, the
#            next open goes on with the file's kept write state, and the
#            fsync commits what they wrote: fs/park.go). The file must grow by
#            APPENDS x 4 KiB a round.
#   fsx      `fsx -ops OPS -maxlen FSX_MAXLEN -seed SEED` (bench/fsx: random
#            writes, reads checked byte for byte, truncations, extensions,
#            a close and reopen every 8 operations, a final check) on a
#            file of its own, created (O_TRUNC) by fsx each round: s. A
#            failure is reported with fsx's message and fails the run at
#            the end.
#   fio      Debian's fio, `fio --name=rw --filename=F --size=SIZE_MIBm
#            --rw=randwrite --bs=4k --fsync=64 --ioengine=psync --time_based
#            --runtime=RUNTIME --output-format=json` on a file preallocated
#            to SIZE_MIB MiB at the set-up (dd, then `sync`; the same file
#            every round): write MiB/s, the mean fsync latency (ms) from
#            the JSON, and the wall time of the fio command (s; includes
#            the open, where the mount copies the file first, and the final
#            close).
#
# The no-regression checks of the mount (write, write+fsync, read, cp -r,
# ls -lR) are bench/fscompare.sh's; this script does not repeat them.
#
# Environment (defaults in brackets):
#   SIZE_MIB [1024]  the append and fio files
#   APPENDS [20]     appends a round
#   OPS [200000]  FSX_MAXLEN [10485760]  SEED [1]   fsx's -ops, -maxlen, -seed
#   FSX_TIMEOUT [0]  seconds after which an fsx run is stopped (and reported
#                    as failed); 0: no limit. fsx itself fails when one
#                    operation takes more than 2 min (-op-timeout).
#   FSX_GODEBUG []  GODEBUG for fsx. Go's runtime preempts goroutines with
#                    SIGURG, which interrupts a FUSE request in flight. Until
#                    e9315c8 an interrupted open left the mount's reader of
#                    the file bound to the cancelled request, so every later
#                    read or truncate came back EINTR and fsx stalled (17 749
#                    EINTRs in 2 s at 2f0b54c); that run was measured with
#                    FSX_GODEBUG=asyncpreemptoff=1. Set it so again to compare.
#   RUNTIME [30]     fio's --runtime, s
#   DRIVES [4]  PARITY [2]         Cairn's --drives and --parity
#   WORKLOADS ["append fsx fio"]   a subset runs only those
#   FUSELOOP_FLAGS ["-maxwrite 1048576"]  extra fuseloop flags (Cairn's MaxWrite is 1 MiB)
#   WORKDIR          where data, the loopback's directory and the mount points
#                    go [a new directory under /tmp]; Cairn's data and the
#                    loopback's directory share its filesystem. Removed at exit
#                    unless KEEP=1 or WORKDIR was given.
#   CAIRN_BIN, FUSELOOP_BIN, FSX_BIN  prebuilt binaries instead of building them
#   CAIRN_FLAGS      extra flags for `cairn serve`
#   PORT [9321]      Cairn's HTTP port (loopback; a baseline gets PORT+1)
#
# Before/after, as in fscompare.sh: BASELINE=/path/to/cairn or
# BASELINE_REV=REV (exported with `git archive` and built in the work dir)
# adds a third side, another Cairn with its own data directory and mount,
# measured in the same rounds, the order of the three rotating through
# all six permutations (bench/order.sh); BASELINE_FLAGS [CAIRN_FLAGS].
# The summary then also gives baseline/fuseloop and cairn/baseline.
#
# Quick run: SIZE_MIB=256 OPS=20000 RUNTIME=10 bench/patchcompare.sh 1
#
# Must run as root (mounts, drop_caches); needs fio (apt-get install fio)
# for the fio workload and python3. fuseloop is built from
# CAIRN_SHARED_BENCH [../shared/bench next to the repository] unless
# FUSELOOP_BIN is set. Everything it starts is stopped and unmounted on
# exit.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
shared=${CAIRN_SHARED_BENCH:-$top/../shared/bench}
rounds=${1:-3}
size_mib=${SIZE_MIB:-1024}
appends=${APPENDS:-20}
ops=${OPS:-200000}
fsx_maxlen=${FSX_MAXLEN:-10485760}
seed=${SEED:-1}
fsx_timeout=${FSX_TIMEOUT:-0}
fsx_godebug=${FSX_GODEBUG-}
runtime=${RUNTIME:-30}
drives=${DRIVES:-4}
parity=${PARITY:-2}
workloads=${WORKLOADS:-append fsx fio}
fl_flags=${FUSELOOP_FLAGS:--maxwrite 1048576}
port=${PORT:-9321}
[ -z "${BASELINE:-}" ] || [ -z "${BASELINE_REV:-}" ] || { echo "patchcompare: set BASELINE or BASELINE_REV, not both" >&2; exit 2; }
if [ -n "${BASELINE:-}" ]; then
  [ -x "$BASELINE" ] || { echo "patchcompare: BASELINE=$BASELINE is not an executable" >&2; exit 2; }
elif [ -n "${BASELINE_REV:-}" ]; then
  rev=$(git -C "$top" rev-parse --verify --quiet "$BASELINE_REV^{commit}") ||
    { echo "patchcompare: BASELINE_REV=$BASELINE_REV is not a commit" >&2; exit 2; }
fi
for w in $workloads; do
  case $w in append|fsx|fio) ;; *) echo "patchcompare: unknown workload $w" >&2; exit 2 ;; esac
done

[ "$(id -u)" = 0 ] || { echo "patchcompare: must run as root" >&2; exit 2; }
[ -e /dev/fuse ] || { echo "patchcompare: no /dev/fuse" >&2; exit 2; }
case " $workloads " in
  *" fio "*) command -v fio >/dev/null || { echo "patchcompare: no fio (apt-get install -y fio)" >&2; exit 2; } ;;
esac

if [ -n "${WORKDIR:-}" ]; then
  work=$WORKDIR; mkdir -p "$work"; keep=1
else
  work=$(mktemp -d /tmp/patchcompare.XXXXXX); keep=${KEEP:-0}
fi
mnt_fl=$work/mnt-fuseloop mnt_ca=$work/mnt-cairn mnt_bl=$work/mnt-baseline
orig=$work/loop-orig data=$work/cairn-data bl_data=$work/baseline-data
mkdir -p "$mnt_fl" "$mnt_ca" "$orig"
results=$work/results.tsv
: >"$results"
fl_pid= ca_pid= bl_pid=
failures=0

prog=patchcompare
# shellcheck source=bench/mountlib.sh
. "$top/bench/mountlib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

# Room: per side the append and fio files; on Cairn's side their shards
# (at most twice the bytes) for the current version and old ones the
# cleaner has not freed yet, and the staging copies of the open files.
need_mib=$((size_mib * 2 * 8 + 1024))
[ -z "${BASELINE:-}${BASELINE_REV:-}" ] || need_mib=$((need_mib + size_mib * 2 * 7))
avail_mib=$(df -Pm "$work" | awk 'NR == 2 { print $4 }')
if [ "$avail_mib" -lt "$need_mib" ]; then
  echo "patchcompare: $work has $avail_mib MiB free, needs about $need_mib MiB (lower SIZE_MIB)" >&2; exit 2
fi

# --- binaries and mounting (bench/mountlib.sh) -------------------------------
build_sides
fsx=${FSX_BIN:-}
if [ -z "$fsx" ]; then
  fsx=$work/fsx
  (cd "$top" && go build -o "$fsx" ./bench/fsx)
fi

mount_sys() { if [ "$1" = fuseloop ]; then mount_fuseloop; else mount_cairn "$1"; fi; }
umount_sys() { if [ "$1" = fuseloop ]; then umount_fuseloop; else umount_cairn "$1"; fi; }
base() {
  case $1 in fuseloop) echo "$mnt_fl/bench" ;; cairn) echo "$mnt_ca/bench" ;; baseline) echo "$mnt_bl/bench" ;; esac
}

drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
now_ns() { date +%s%N; }
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$results"; } # workload sys round value
fsync_file() { python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd); os.close(fd)' "$1"; }

echo "patchcompare: $rounds round(s); workloads: $workloads; files ${size_mib} MiB; $appends appends of 4 KiB;" \
  "fsx -ops $ops -maxlen $fsx_maxlen -seed $seed (GODEBUG=$fsx_godebug); fio runtime ${runtime}s; cairn $drives drives parity $parity;" \
  "fuseloop flags: $fl_flags" >&2
echo "patchcompare: cairn at $cairn_desc${base_bin:+, baseline $base_desc}; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "patchcompare: work dir $work (on $(df --output=source "$work" | tail -1))" >&2

# --- setup: the append and fio files on every side ----------------------------
need_append=0; case " $workloads " in *" append "*) need_append=1;; esac
need_fio=0; case " $workloads " in *" fio "*) need_fio=1;; esac
for sys in $sides; do
  mount_sys "$sys"
  b=$(base "$sys"); mkdir -p "$b"
  t0=$(now_ns)
  [ $need_append = 1 ] && dd if=/dev/zero of="$b/append.dat" bs=1M count="$size_mib" conv=fsync status=none
  [ $need_fio = 1 ] && dd if=/dev/zero of="$b/fio.dat" bs=1M count="$size_mib" conv=fsync status=none
  t1=$(now_ns)
  echo "patchcompare: setup: the files of $sys took $(((t1 - t0) / 1000000)) ms" >&2
  umount_sys "$sys"
done
sync

# --- workloads ---------------------------------------------------------------
w_append() { # sys round
  local b f size0 size1 t0 t1 tstart tend i
  b=$(base "$1"); f=$b/append.dat
  size0=$(stat -c %s "$f")
  drop_caches
  tstart=$(now_ns)
  for i in $(seq "$appends"); do
    t0=$(now_ns)
    dd if=/dev/zero of="$f" bs=4k count=1 oflag=append conv=notrunc status=none
    t1=$(now_ns)
    printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$i" "$(((t1 - t0) / 1000))" >>"$work/appends.tsv" # µs
  done
  fsync_file "$f"
  tend=$(now_ns)
  size1=$(stat -c %s "$f")
  [ "$size1" = $((size0 + appends * 4096)) ] ||
    { echo "patchcompare: $1: append.dat went from $size0 to $size1 bytes, expected $((size0 + appends * 4096))" >&2; failures=$((failures + 1)); }
  record "append" "$1" "$2" "$(python3 - "$work/appends.tsv" "$1" "$2" <<'PY'
import sys, statistics as st
path, sys_, rnd = sys.argv[1:4]
us = [int(l.split("\t")[3]) for l in open(path) if l.split("\t")[:2] == [sys_, rnd]]
print(f"{st.median(us) / 1000:.3f}")
PY
)"
  record "append series" "$1" "$2" "$(((tend - tstart) / 1000000))"
}
w_fsx() { # sys round
  local b t0 t1 rc=0 log=$work/fsx-$1-$2.log
  b=$(base "$1"); sync
  t0=$(now_ns)
  if [ "$fsx_timeout" != 0 ]; then
    GODEBUG=$fsx_godebug timeout "$fsx_timeout" "$fsx" -ops "$ops" -maxlen "$fsx_maxlen" -seed "$seed" -file "$b/fsx.dat" >"$log" 2>&1 || rc=$?
  else
    GODEBUG=$fsx_godebug "$fsx" -ops "$ops" -maxlen "$fsx_maxlen" -seed "$seed" -file "$b/fsx.dat" >"$log" 2>&1 || rc=$?
  fi
  t1=$(now_ns)
  if [ "$rc" != 0 ]; then
    failures=$((failures + 1))
    [ "$rc" = 124 ] && echo "patchcompare: $1 round $2: fsx stopped after FSX_TIMEOUT=$fsx_timeout s" >&2
    echo "patchcompare: $1 round $2: fsx FAILED (exit $rc) after $(((t1 - t0) / 1000000)) ms:" >&2
    head -c 4000 "$log" >&2
    return 0
  fi
  grep '^fsx ops=' "$log" >&2 || true
  record "fsx" "$1" "$2" "$(sed -n 's/^fsx ops=[0-9]* seconds=\([0-9.]*\) .*/\1/p' "$log")"
}
w_fio() { # sys round
  local b t0 t1 rc=0 out=$work/fio-$1-$2.json
  b=$(base "$1"); drop_caches
  t0=$(now_ns)
  fio --name=rw --filename="$b/fio.dat" --size="${size_mib}m" --rw=randwrite --bs=4k --fsync=64 \
    --ioengine=psync --time_based --runtime="$runtime" --output-format=json --output="$out" \
    >"$work/fio-$1-$2.log" 2>&1 || rc=$?
  t1=$(now_ns)
  if [ "$rc" != 0 ]; then
    failures=$((failures + 1))
    echo "patchcompare: $1 round $2: fio exited $rc:" >&2; cat "$work/fio-$1-$2.log" >&2
    return 0
  fi
  python3 - "$out" "$1" "$2" "$(((t1 - t0) / 1000000))" >>"$results" <<'PY'
import json, sys
path, sys_, rnd, wall_ms = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
text = open(path).read()
j = json.loads(text[text.index("{"):])  # fio may print notes before the JSON
job = j["jobs"][0]
if job.get("error"):
    sys.exit(f"fio reported error {job['error']}")
w = job["write"]
print(f"fio\t{sys_}\t{rnd}\t{w['bw_bytes'] / 2**20:.4f}")
sync = job.get("sync", {})
lat = sync.get("lat_ns", {})
if sync.get("total_ios", 0) and lat.get("mean") is not None:
    print(f"fio fsync\t{sys_}\t{rnd}\t{lat['mean'] / 1e6:.3f}")
print(f"fio wall\t{sys_}\t{rnd}\t{wall_ms / 1000:.3f}")
print(f"fio writes\t{sys_}\t{rnd}\t{w['total_ios']}")
PY
}

for r in $(seq "$rounds"); do
  order=$(order_of "$r" fuseloop)
  for w in $workloads; do
    for sys in $order; do
      before=$(wc -l <"$results")
      mount_sys "$sys"
      case $w in
        append) w_append "$sys" "$r" ;;
        fsx) w_fsx "$sys" "$r" ;;
        fio) w_fio "$sys" "$r" ;;
      esac
      umount_sys "$sys"
      tail -n +$((before + 1)) "$results" | while IFS=$'\t' read -r wl _ _ v; do
        echo "patchcompare: round $r, $sys, $wl: $v" >&2
      done
    done
  done
done

python3 - "$results" "$rounds" "$drives" "$parity" "$size_mib" "$appends" "$ops" "$runtime" "$cairn_desc" "$base_desc" <<'PY'
import sys, statistics as st
path, rounds, drives, parity, size_mib, appends, ops, runtime, cdesc, bdesc = sys.argv[1:11]
rows = [l.rstrip("\n").split("\t") for l in open(path) if l.strip()]
groups, order = {}, []
for w, s, r, v in rows:
    if w not in order:
        order.append(w)
    groups.setdefault((w, s), {})[int(r)] = float(v)
sides = ["fuseloop", "cairn"] + (["baseline"] if any(s == "baseline" for _, s, _, _ in rows) else [])
# name, unit, higher is better
meta = {
    "append": (f"append 4 KiB to {size_mib} MiB, median", "ms", False),
    "append series": (f"{appends} appends + fsync", "ms", False),
    "fsx": (f"fsx {ops} ops", "s", False),
    "fio": (f"fio randwrite 4k, fsync/64, {runtime}s", "MiB/s", True),
    "fio fsync": ("fio fsync latency, mean", "ms", False),
    "fio wall": ("fio command, wall", "s", False),
    "fio writes": ("fio 4 KiB writes done", "", True),
}
print(f"cairn ({cdesc}{', baseline ' + bdesc if len(sides) == 3 else ''}; {drives} drives, parity {parity}) "
      f"vs go-fuse loopback, same disk; medians of {rounds} interleaved round(s)")
print("ratio: of the speeds (for times, the inverse ratio), > 1 means the first is faster; "
      "(1/N): the first is N times slower; range: of the per-round ratios")
pairs = [("cairn", "fuseloop")] + ([("baseline", "fuseloop"), ("cairn", "baseline")] if len(sides) == 3 else [])
def num(v):
    return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.4g}"
def fmt(v, unit):
    return f"{num(v)} {unit}".strip()
def rfmt(x):
    return f"{x:.3g}x" + (f" (1/{1 / x:.3g})" if 0 < x < 0.5 else "")
for w in order:
    name, unit, higher = meta.get(w, (w, "", True))
    per = {s: groups.get((w, s), {}) for s in sides}
    if not all(per.values()):
        print(f"{name:<40} " + "   ".join(f"{s} {fmt(st.median(v.values()), unit) if v else '-'}" for s, v in per.items()))
        continue
    med = {s: st.median(v.values()) for s, v in per.items()}
    print(f"{name:<40} " + "   ".join(f"{s} {fmt(med[s], unit)}" for s in sides)
          + "   per round: " + " | ".join(" ".join(num(per[s][r]) for r in sorted(per[s])) for s in sides))
    for a, b in pairs:
        speed = (lambda x, y: x / y) if higher else (lambda x, y: y / x)
        rs = sorted(set(per[a]) & set(per[b]))
        pr = [speed(per[a][r], per[b][r]) for r in rs if per[a][r] and per[b][r]]
        if not pr or not med[a] or not med[b]:
            continue
        print(f"  {a + '/' + b:<19} {rfmt(speed(med[a], med[b])):>18}   range {min(pr):.3g}-{max(pr):.3g}")
PY
if [ "$failures" != 0 ]; then
  echo "patchcompare: $failures failure(s) (see above)" >&2; exit 1
fi
