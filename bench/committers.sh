#!/usr/bin/env bash
# Spark's output committers on Cairn: job-commit time of a job writing
# FILES Parquet files, and the S3 requests each job made, per committer.
#
#   bench/committers.sh [ROUNDS] [FILES]          (defaults: 3 1000)
#
# One `cairn serve --drives DRIVES --parity PARITY` with a mount, on
# loopback; one local Spark session (integration/engines/spark/
# commit_bench.py, under the engines' venv) runs each job in turn,
# configured by `cairn admin spark-conf` verbatim: magic, directory and
# partitioned staging (conflict mode append), FileOutputCommitter v1 and
# v2 over s3a, and FileOutputCommitter v1 and v2 writing file:// to the
# mount. Rounds are interleaved (the committers in order, then reversed),
# after one unrecorded warm-up job of each; the summary gives the
# medians and the range per committer, then the S3 requests of a job.
#
# Environment (defaults in brackets):
#   CAIRN_ENGINES [${XDG_CACHE_HOME:-$HOME/.cache}/cairn/engines]  the cache
#                 `make engines` filled
#   VARIANTS      comma-separated subset of magic,directory,partitioned,
#                 file-v1,file-v2,mount-v1,mount-v2
#   DRIVES [4]  PARITY [2]  ADDR [127.0.0.1:9121]
#   TIMEOUT [3000]  seconds the Spark run may take before it is stopped
#   OUT           also copy the per-job JSON report there
# Must run as root (FUSE). Everything it starts is stopped on exit.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}; files=${2:-1000}
engines=${CAIRN_ENGINES:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn/engines}
[ -x "$engines/venv/bin/python" ] || { echo "committers: no engines in $engines: run make engines" >&2; exit 1; }
addr=${ADDR:-127.0.0.1:9121}
work=$(mktemp -d)
mnt=$work/mnt
pid=
cleanup() {
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  mountpoint -q "$mnt" 2>/dev/null && umount -l "$mnt"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
(cd "$top" && go build -o "$work/cairn" ./cmd/cairn)
export CAIRN_ROOT_USER=bench CAIRN_ROOT_PASSWORD=benchsecret
mkdir -p "$mnt"
"$work/cairn" serve --data "$work/data" --drives "${DRIVES:-4}" --parity "${PARITY:-2}" --address "$addr" \
  --mount "$mnt" --log-level warn 2>"$work/cairn.log" &
pid=$!
for _ in $(seq 200); do
  mountpoint -q "$mnt" && curl -sf "http://$addr/health/ready" >/dev/null && break
  kill -0 "$pid" 2>/dev/null || { echo "committers: cairn serve exited:" >&2; cat "$work/cairn.log" >&2; exit 1; }
  sleep 0.1
done
mountpoint -q "$mnt" || { echo "committers: $mnt not mounted" >&2; exit 1; }
bucket=commit-bench
mkdir "$mnt/$bucket" # a directory at the mount's root is a bucket

mkdir "$work/conf"
for c in magic directory partitioned file; do
  "$work/cairn" admin spark-conf --endpoint "http://$addr" --committer "$c" >"$work/conf/$c.conf"
done
echo "committers: $rounds round(s) of $files files; cairn $(git -C "$top" rev-parse --short HEAD)$(git -C "$top" diff --quiet HEAD -- . ':!docs' || echo +changes)," \
  "${DRIVES:-4} drives parity ${PARITY:-2}; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
mkdir "$work/spark"
CAIRN_ENGINES=$engines timeout --kill-after 30 "${TIMEOUT:-3000}" "$engines/venv/bin/python" \
  "$top/integration/engines/spark/commit_bench.py" "$work/conf" "$bucket" "http://$addr" "$work/spark" \
  "$work/report.json" "$mnt" "$rounds" "$files" "${VARIANTS:-}" 2>"$work/spark.log" ||
  { rc=$?; echo "committers: the Spark run failed ($rc):" >&2; tail -40 "$work/spark.log" >&2; exit "$rc"; }
echo "committers: done; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
[ -z "${OUT:-}" ] || cp "$work/report.json" "$OUT"
python3 - "$work/report.json" <<'PY'
import json, statistics, sys
rep = json.load(open(sys.argv[1]))
jobs = rep["jobs"]
names = list(dict.fromkeys(j["variant"] for j in jobs))
rounds = max(j["round"] for j in jobs)
print(f"{rep['files']} files of {rep['rows_per_file']} rows, medians of {rounds} interleaved rounds (min–max)")
print()
print("| committer | job commit (s) | tasks' commits, summed (s) | tasks (s) | whole write (s) | S3 requests |")
print("|---|---|---|---|---|---|")
def cell(vals):
    m = statistics.median(vals)
    return f"**{m:.2f}** ({min(vals):.2f}–{max(vals):.2f})" if len(vals) > 1 else f"**{m:.2f}**"
for n in names:
    js = [j for j in jobs if j["variant"] == n]
    reqs = [sum(j["requests"].values()) for j in js]
    print(f"| {n} | {cell([j['commit_ms'] / 1000 for j in js])} | {cell([j['task_commit_ms'] / 1000 for j in js])}"
          f" | {cell([j['tasks_ms'] / 1000 for j in js])} | {cell([j['job_ms'] / 1000 for j in js])}"
          f" | {statistics.median(reqs):.0f} ({min(reqs)}–{max(reqs)}) |")
apis = sorted({a for j in jobs for a in j["requests"]}, key=lambda a: -max(j["requests"].get(a, 0) for j in jobs))
print()
print("S3 requests of one job, median of the rounds (those answered 3xx/4xx/5xx in brackets)")
print()
print("| committer | " + " | ".join(apis) + " |")
print("|---|" + "---|" * len(apis))
for n in names:
    js = [j for j in jobs if j["variant"] == n]
    row = []
    for a in apis:
        v = statistics.median([j["requests"].get(a, 0) for j in js])
        f = statistics.median([j["requests_failed"].get(a, 0) for j in js])
        row.append((f"{v:.0f}" if v else "–") + (f" ({f:.0f})" if f else ""))
    print(f"| {n} | " + " | ".join(row) + " |")
PY
