#!/usr/bin/env bash
# Interleaved mount comparison: `cairn serve --mount` against go-fuse's
# loopback filesystem (the yardsticks' fuseloop) over a directory on the
# same disk, A B, B A, ..., and the ratios of the medians.
#
#   bench/fscompare.sh [ROUNDS]                          (default: 3)
#
# Workloads (each run on a fresh mount, fuseloop then Cairn in odd rounds,
# Cairn then fuseloop in even ones):
#   write+fsync   dd if=/dev/zero of=F bs=1M count=SIZE_MIB conv=fsync   MiB/s, close included,
#                 after rm -f F and dropping the page cache
#   write         the same without conv=fsync (close included; `sync` after, untimed)
#   read          dd if=F of=/dev/null bs=1M after dropping the page cache and
#                 READ_SETTLE s                                             MiB/s
#   cp -r         cp -r of FILES files of FILE_KIB KiB from local disk      s and files/s
#   ls -lR        ls -lR of a tree of ~ENTRIES entries, cold (fresh mount,
#                 caches dropped), warm (again at once) and later (again 2 s
#                 after that, once a 1 s timeout has run out), with the default
#                 1 s attribute/entry timeout and with 1 h on both sides    s
#
# Environment (defaults in brackets):
#   SIZE_MIB [1024]  FILES [1000]  FILE_KIB [4]  ENTRIES [10000]
#   DRIVES [4]  PARITY [2]         Cairn's --drives and --parity
#   WORKLOADS ["wsync write read cp ls1s ls1h"]   a subset runs only those
#   FUSELOOP_FLAGS ["-maxwrite 1048576"]  extra fuseloop flags (Cairn's MaxWrite is 1 MiB)
#   WORKDIR          where data, the loopback's directory and the mount points
#                    go [a new directory under /tmp]; Cairn's data and the
#                    loopback's directory share its filesystem. Removed at exit
#                    unless KEEP=1 or WORKDIR was given.
#   CAIRN_BIN, FUSELOOP_BIN  prebuilt binaries instead of building them
#   CAIRN_FLAGS      extra flags for `cairn serve`
#   PORT [9311]      Cairn's HTTP port (loopback; a baseline gets PORT+1)
#   SETTLE [65]      seconds to wait after the set-up, before the first round
#                    (see the comment there); 0 skips it
#   READ_SETTLE [10] seconds to wait after dropping the page cache, before a
#                    timed read. Read at once, the file came at 2-2.5 GB/s or
#                    at 0.6-0.8 GB/s depending on which side had written just
#                    before (the VM's host still held recent writes); after
#                    10 s both sides read from the device, at 0.6-1.1 GB/s.
#
# Before/after: BASELINE=/path/to/cairn (a prebuilt binary) or
# BASELINE_REV=REV (a git revision, exported with `git archive` into the
# work dir and built there) adds a third side, another Cairn with its own
# data directory and mount on the same disk, measured in the same rounds.
# The order of the three rotates through all six permutations (rounds 1-2
# swap cairn and the baseline with fuseloop first, 3-4 with it last, 5-6
# in the middle), so use an even number of rounds, six for full balance.
# The summary then gives, per workload, cairn/fuseloop, baseline/fuseloop
# and cairn/baseline: the ratio of the medians, the median of the
# per-round ratios and their range. BASELINE_FLAGS [CAIRN_FLAGS] are the
# baseline's extra flags. Unset, the run is the two-sided one above.
#
# Quick run: SIZE_MIB=256 FILES=200 ENTRIES=2000 bench/fscompare.sh 1
#
# Must run as root (mounts, drop_caches). fuseloop is built from
# CAIRN_SHARED_BENCH [../shared/bench next to the repository] unless
# FUSELOOP_BIN is set. Everything it starts is stopped and unmounted on
# exit.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
shared=${CAIRN_SHARED_BENCH:-$top/../shared/bench}
rounds=${1:-3}
size_mib=${SIZE_MIB:-1024}
files=${FILES:-1000}
file_kib=${FILE_KIB:-4}
entries=${ENTRIES:-10000}
drives=${DRIVES:-4}
parity=${PARITY:-2}
workloads=${WORKLOADS:-wsync write read cp ls1s ls1h}
fl_flags=${FUSELOOP_FLAGS:--maxwrite 1048576}
port=${PORT:-9311}
[ -z "${BASELINE:-}" ] || [ -z "${BASELINE_REV:-}" ] || { echo "fscompare: set BASELINE or BASELINE_REV, not both" >&2; exit 2; }
if [ -n "${BASELINE:-}" ]; then
  [ -x "$BASELINE" ] || { echo "fscompare: BASELINE=$BASELINE is not an executable" >&2; exit 2; }
elif [ -n "${BASELINE_REV:-}" ]; then
  rev=$(git -C "$top" rev-parse --verify --quiet "$BASELINE_REV^{commit}") ||
    { echo "fscompare: BASELINE_REV=$BASELINE_REV is not a commit" >&2; exit 2; }
fi

[ "$(id -u)" = 0 ] || { echo "fscompare: must run as root" >&2; exit 2; }
[ -e /dev/fuse ] || { echo "fscompare: no /dev/fuse" >&2; exit 2; }

if [ -n "${WORKDIR:-}" ]; then
  work=$WORKDIR; mkdir -p "$work"; keep=1
else
  work=$(mktemp -d /tmp/fscompare.XXXXXX); keep=${KEEP:-0}
fi
mnt_fl=$work/mnt-fuseloop mnt_ca=$work/mnt-cairn mnt_bl=$work/mnt-baseline
orig=$work/loop-orig data=$work/cairn-data bl_data=$work/baseline-data src=$work/src
mkdir -p "$mnt_fl" "$mnt_ca" "$orig" "$src"
results=$work/results.tsv
: >"$results"
fl_pid= ca_pid= bl_pid=

prog=fscompare
# shellcheck source=bench/mountlib.sh
. "$top/bench/mountlib.sh"
trap cleanup EXIT
trap 'exit 130' INT TERM

# Room for the big file: the loopback's copy, Cairn's staging copy, and its
# shards (at most twice the bytes) for the current version and an old one
# the cleaner has not freed yet; as much again for a baseline.
need_mib=$((size_mib * 6 + 512))
[ -z "${BASELINE:-}${BASELINE_REV:-}" ] || need_mib=$((need_mib + size_mib * 5))
avail_mib=$(df -Pm "$work" | awk 'NR == 2 { print $4 }')
if [ "$avail_mib" -lt "$need_mib" ]; then
  echo "fscompare: $work has $avail_mib MiB free, needs about $need_mib MiB (lower SIZE_MIB)" >&2; exit 2
fi

# --- binaries and mounting (bench/mountlib.sh) -------------------------------
build_sides

mount_sys() { # sys ttl
  if [ "$1" = fuseloop ]; then mount_fuseloop "$2"; else mount_cairn "$1" "$2"; fi
}
umount_sys() { if [ "$1" = fuseloop ]; then umount_fuseloop; else umount_cairn "$1"; fi; }
base() {
  case $1 in fuseloop) echo "$mnt_fl/bench" ;; cairn) echo "$mnt_ca/bench" ;; baseline) echo "$mnt_bl/bench" ;; esac
}

drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }
now() { date +%s.%N; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.4f}')" "$1" "$2"; }
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$results"; } # workload sys round seconds

# --- sources on local disk ----------------------------------------------------
python3 - "$src" "$files" "$file_kib" "$entries" <<'PY'
import math, os, sys
src, files, kib, entries = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
small = os.path.join(src, "small")
os.makedirs(small, exist_ok=True)
for i in range(files):
    with open(os.path.join(small, f"f{i:06d}"), "wb") as f:
        f.write(os.urandom(kib * 1024))
# ~entries entries: nd directories of (entries/nd - 1) empty files each.
nd = max(1, round(math.sqrt(entries)))
per = max(0, entries // nd - 1)
tree = os.path.join(src, "tree")
for d in range(nd):
    p = os.path.join(tree, f"d{d:04d}")
    os.makedirs(p, exist_ok=True)
    for i in range(per):
        open(os.path.join(p, f"e{i:05d}"), "wb").close()
PY
tree_entries=$(find "$src/tree" -mindepth 1 | wc -l)

echo "fscompare: $rounds round(s); file ${size_mib} MiB; cp -r of $files x ${file_kib} KiB;" \
  "ls -lR of $tree_entries entries; cairn $drives drives parity $parity; fuseloop flags: $fl_flags" >&2
echo "fscompare: cairn at $cairn_desc${base_bin:+, baseline $base_desc}" >&2
echo "fscompare: work dir $work (on $(df --output=source "$work" | tail -1))" >&2
if [ -d /sys/module/page_reporting/parameters ]; then
  echo "fscompare: this VM hands freed pages back to its host (page_reporting:" \
    "$(cd /sys/module/page_reporting/parameters && grep -H . ./* 2>/dev/null | sed 's|^\./||' | tr '\n' ' '))" >&2
fi

# --- setup: the bench bucket and the ls tree on both sides --------------------
need_ls=0; case " $workloads " in *" ls1s "*|*" ls1h "*) need_ls=1;; esac
need_big=0; case " $workloads " in *" read "*) need_big=1;; esac
mkdir -p "$orig/bench"
[ $need_ls = 1 ] && cp -r "$src/tree" "$orig/bench/tree"
for sys in $sides; do
  [ "$sys" = fuseloop ] && continue
  mount_cairn "$sys" 1s
  b=$(base "$sys"); mkdir -p "$b"
  if [ $need_ls = 1 ]; then
    t0=$(now); cp -r "$src/tree" "$b/tree"; t1=$(now)
    echo "fscompare: setup: cp -r of the ls tree into $sys took $(elapsed "$t0" "$t1") s" >&2
  fi
  umount_cairn "$sys"
done
sync
# ext4 without a journal (this machine's root) skips inodes freed in the
# last 60 s when it allocates one, scanning past each: for a minute after
# a large delete (another benchmark's clean-up), creating files is several
# times slower, which would slow the loopback's cp -r and not Cairn's
# (whose small files go into pack segments). Let them age first.
if [ "${SETTLE:-65}" != 0 ]; then
  echo "fscompare: waiting ${SETTLE:-65} s for recently freed inodes to age (SETTLE=0 skips)" >&2
  sleep "${SETTLE:-65}"
fi

# --- workloads ---------------------------------------------------------------
# Before a timed write, as before a timed read, the page cache is dropped.
# On this VM (see the page_reporting line printed at the start) a write
# into the page cache runs at 3.5-5 GB/s or at 0.4-1.5 GB/s depending on
# the memory the kernel hands out, and a write right after `rm -f` of a
# cached 1 GiB file (the loopback's old copy, freed a moment before) gets
# the fast kind while Cairn (whose old version's shards are not cached)
# got the slow kind in most rounds. After drop_caches both sides get the
# fast kind, round after round.
w_wsync() { # sys round
  local b; b=$(base "$1"); rm -f "$b/big"; drop_caches
  local t0 t1; t0=$(now)
  dd if=/dev/zero of="$b/big" bs=1M count="$size_mib" conv=fsync status=none
  t1=$(now); record "write+fsync" "$1" "$2" "$(elapsed "$t0" "$t1")"
}
w_write() {
  local b; b=$(base "$1"); rm -f "$b/big"; drop_caches
  local t0 t1; t0=$(now)
  dd if=/dev/zero of="$b/big" bs=1M count="$size_mib" status=none
  t1=$(now); record "write" "$1" "$2" "$(elapsed "$t0" "$t1")"
  sync
}
w_read() {
  local b; b=$(base "$1")
  if [ ! -f "$b/big" ] || [ "$(stat -c %s "$b/big")" != $((size_mib << 20)) ]; then
    dd if=/dev/zero of="$b/big" bs=1M count="$size_mib" conv=fsync status=none
  fi
  drop_caches; sleep "${READ_SETTLE:-10}"
  local t0 t1; t0=$(now)
  dd if="$b/big" of=/dev/null bs=1M status=none
  t1=$(now); record "read" "$1" "$2" "$(elapsed "$t0" "$t1")"
}
w_cp() {
  local b; b=$(base "$1"); sync
  # The source files are read into the page cache first, untimed: after
  # the read workload dropped it, whichever side copied first read them
  # from the disk (0.29-0.35 s against 0.21-0.25 s second, both sides).
  cat "$src"/small/* >/dev/null
  local t0 t1; t0=$(now)
  cp -r "$src/small" "$b/cp-$2"
  t1=$(now); record "cp -r" "$1" "$2" "$(elapsed "$t0" "$t1")"
  local n; n=$(find "$b/cp-$2" -type f | wc -l)
  [ "$n" = "$files" ] || echo "fscompare: $1 has $n of $files files after cp -r" >&2
  sync
}
w_ls() { # sys round ttl
  local b; b=$(base "$1"); drop_caches
  local t0 t1 t2 t3 t4 n1 n2 n3; t0=$(now)
  ls -lR "$b/tree" >"$work/ls-$1.out"
  t1=$(now)
  ls -lR "$b/tree" >"$work/ls-$1.out2"
  t2=$(now)
  # Once more after the 1 s timeout has run out: the kernel then asks
  # again about every entry, unless its timeout is long.
  sleep 2
  t3=$(now)
  ls -lR "$b/tree" >"$work/ls-$1.out3"
  t4=$(now)
  record "ls -lR cold, ttl $3" "$1" "$2" "$(elapsed "$t0" "$t1")"
  record "ls -lR warm, ttl $3" "$1" "$2" "$(elapsed "$t1" "$t2")"
  record "ls -lR later, ttl $3" "$1" "$2" "$(elapsed "$t3" "$t4")"
  n1=$(grep -c '^-' "$work/ls-$1.out" || true); n2=$(grep -c '^-' "$work/ls-$1.out2" || true)
  n3=$(grep -c '^-' "$work/ls-$1.out3" || true)
  [ "$n1" = "$n2" ] && [ "$n1" = "$n3" ] || echo "fscompare: $1 ls -lR listed $n1, $n2, then $n3 files" >&2
  echo "$n1" >"$work/ls-$1.count"
}

for r in $(seq "$rounds"); do
  order=$(order_of "$r" fuseloop)
  for w in $workloads; do
    for sys in $order; do
      before=$(wc -l <"$results")
      case $w in
        ls1h) ttl=1h ;;
        *) ttl=1s ;;
      esac
      mount_sys "$sys" "$ttl"
      case $w in
        wsync) w_wsync "$sys" "$r" ;;
        write) w_write "$sys" "$r" ;;
        read) w_read "$sys" "$r" ;;
        cp) w_cp "$sys" "$r" ;;
        ls1s) w_ls "$sys" "$r" 1s ;;
        ls1h) w_ls "$sys" "$r" 1h ;;
        *) echo "fscompare: unknown workload $w" >&2; exit 2 ;;
      esac
      umount_sys "$sys"
      tail -n +$((before + 1)) "$results" | while IFS=$'\t' read -r wl _ _ t; do
        echo "fscompare: round $r, $sys, $wl: $t s" >&2
      done
    done
  done
  for sys in $sides; do
    [ "$sys" = fuseloop ] && continue
    if [ -f "$work/ls-fuseloop.count" ] && [ -f "$work/ls-$sys.count" ] &&
       [ "$(cat "$work/ls-fuseloop.count")" != "$(cat "$work/ls-$sys.count")" ]; then
      echo "fscompare: ls -lR listed $(cat "$work/ls-fuseloop.count") files on fuseloop, $(cat "$work/ls-$sys.count") on $sys" >&2
    fi
  done
done

if [ -z "$base_bin" ]; then
python3 - "$results" "$size_mib" "$files" "$tree_entries" "$rounds" "$drives" "$parity" <<'PY'
import sys, statistics as st
path, size_mib, files, entries, rounds, drives, parity = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
rows = [l.rstrip("\n").split("\t") for l in open(path) if l.strip()]
groups, order = {}, []
for w, s, r, t in rows:
    if w not in order:
        order.append(w)
    groups.setdefault((w, s), []).append(float(t))
print(f"cairn ({drives} drives, parity {parity}) vs go-fuse loopback, same disk; medians of {rounds} interleaved round(s)")
print("ratio = cairn/fuseloop of throughput (for timed runs: fuseloop s / cairn s); > 1 means cairn is faster")
print(f"{'workload':<24} {'fuseloop':>20} {'cairn':>20} {'ratio':>7}   per round (fuseloop | cairn)")
def fmt(ts, w):
    m = st.median(ts)
    if w.startswith("write") or w == "read":
        return f"{size_mib / m:8.0f} MiB/s", size_mib / m
    if w == "cp -r":
        return f"{m:6.2f} s {files / m:6.0f} f/s", files / m
    return f"{m:8.3f} s", 1 / m
def per(ts, w):
    if w.startswith("write") or w == "read":
        return " ".join(f"{size_mib / t:.0f}" for t in ts)
    return " ".join(f"{t:.2f}" for t in ts)
label = {"write+fsync": f"write {size_mib} MiB, fsync", "write": f"write {size_mib} MiB", "read": f"read {size_mib} MiB, cold",
         "cp -r": f"cp -r {files} files"}
for w in order:
    f, c = groups.get((w, "fuseloop")), groups.get((w, "cairn"))
    if not f or not c:
        continue
    fs_, fv = fmt(f, w)
    cs, cv = fmt(c, w)
    name = label.get(w, w.replace("ls -lR", f"ls -lR {entries}"))
    print(f"{name:<24} {fs_:>20} {cs:>20} {cv / fv:>6.2f}x   {per(f, w)} | {per(c, w)}")
# The design target for ls -lR: cairn with long caches against the loopback's default 1 s.
for temp in ("cold", "warm", "later"):
    f, c = groups.get((f"ls -lR {temp}, ttl 1s", "fuseloop")), groups.get((f"ls -lR {temp}, ttl 1h", "cairn"))
    if f and c:
        print(f"{'ls -lR ' + temp + ', cairn 1h/loop 1s':<24} {st.median(f):>18.3f} s {st.median(c):>18.3f} s {st.median(f) / st.median(c):>6.2f}x")
PY
else
python3 - "$results" "$size_mib" "$files" "$tree_entries" "$rounds" "$drives" "$parity" "$cairn_desc" "$base_desc" <<'PY'
import sys, statistics as st
path, size_mib, files, entries = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rounds, drives, parity, cdesc, bdesc = sys.argv[5:10]
rows = [l.rstrip("\n").split("\t") for l in open(path) if l.strip()]
groups, order = {}, []
for w, s, r, t in rows:
    if w not in order:
        order.append(w)
    groups.setdefault((w, s), {})[int(r)] = float(t)
sides = ("fuseloop", "cairn", "baseline")
print(f"cairn ({cdesc}) and baseline ({bdesc}), {drives} drives, parity {parity}, vs go-fuse loopback, same disk; "
      f"{rounds} round(s), order rotated")
print("ratios of throughput (for timed runs: the inverse ratio of the seconds), > 1 means the first is faster;")
print("ratio: of the medians; median and range: of the per-round ratios")
def value(w, t):  # throughput of one timed run
    if w.startswith("write") or w == "read":
        return size_mib / t
    if w == "cp -r":
        return files / t
    return 1 / t
def shown(w, v):
    if w.startswith("write") or w == "read":
        return f"{v:.0f} MiB/s"
    if w == "cp -r":
        return f"{files / v:.3f} s ({v:.0f} f/s)"
    return f"{1 / v:.3f} s"
label = {"write+fsync": f"write {size_mib} MiB, fsync", "write": f"write {size_mib} MiB", "read": f"read {size_mib} MiB, cold",
         "cp -r": f"cp -r {files} files"}
def block(w, name, per_side):  # per_side: side -> {round: throughput}
    med = {s: st.median(v.values()) for s, v in per_side.items()}
    print(f"{name:<28} " + "   ".join(f"{s} {shown(w, med[s])}" for s in per_side))
    for a, b in (("cairn", "fuseloop"), ("baseline", "fuseloop"), ("cairn", "baseline")):
        rs = sorted(set(per_side[a]) & set(per_side[b]))
        per = [per_side[a][r] / per_side[b][r] for r in rs]
        print(f"  {a + '/' + b:<19} {med[a] / med[b]:>6.3f}x   median {st.median(per):.3f}x"
              f"   range {min(per):.3f}-{max(per):.3f}   per round " + " ".join(f"{p:.3f}" for p in per))
for w in order:
    if all((w, s) in groups for s in sides):
        block(w, label.get(w, w.replace("ls -lR", f"ls -lR {entries}")),
              {s: {r: value(w, t) for r, t in groups[(w, s)].items()} for s in sides})
# The design target for ls -lR: Cairn with long caches against the loopback's default 1 s.
for temp in ("cold", "warm", "later"):
    f = groups.get((f"ls -lR {temp}, ttl 1s", "fuseloop"))
    c, b = groups.get((f"ls -lR {temp}, ttl 1h", "cairn")), groups.get((f"ls -lR {temp}, ttl 1h", "baseline"))
    if f and c and b:
        block("ls", f"ls -lR {temp}, 1h / loop 1s", {s: {r: 1 / t for r, t in g.items()}
              for s, g in (("fuseloop", f), ("cairn", c), ("baseline", b))})
PY
fi
