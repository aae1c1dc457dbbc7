#!/usr/bin/env bash
# Peak memory of `cairn serve` under one `cairn bench s3` run: starts the
# server on an empty temporary data directory, samples its
# /proc/PID/status (RssAnon and VmHWM) every 100 ms while the bench runs,
# and prints the peaks and the bench's own result.
#
#   bench/rss.sh [BENCH ARGS...]
#   bench/rss.sh --op put --size 64MiB --clients 64 --duration 20s
#
# CAIRN=path/to/cairn uses that binary (default: built from this tree into
# the work dir). CAIRN_FLAGS adds flags to `cairn serve`; ADDRESS is its
# listen address (default 127.0.0.1:9110). SAMPLES=file keeps every sample
# (ms since start, RssAnon kB, VmHWM kB), SERVE_LOG=file the server's
# output (with GODEBUG=gctrace=1, say). Loopback only; the server is
# stopped and its data removed on exit.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
address=${ADDRESS:-127.0.0.1:9110}
work=$(mktemp -d)
srv=
trap '[ -z "$srv" ] || kill "$srv" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

bin=${CAIRN:-}
if [ -z "$bin" ]; then
  bin=$work/cairn
  (cd "$top" && go build -o "$bin" ./cmd/cairn)
fi

# shellcheck disable=SC2086 # CAIRN_FLAGS is a list of flags
"$bin" serve --data "$work/data" --address "$address" --log-level warn ${CAIRN_FLAGS:-} \
  >"${SERVE_LOG:-$work/serve.log}" 2>&1 &
srv=$!
for _ in $(seq 100); do
  curl -s -o /dev/null "http://$address/" && break
  kill -0 "$srv" 2>/dev/null || { echo "rss: cairn serve exited:" >&2; cat "${SERVE_LOG:-$work/serve.log}" >&2; exit 1; }
  sleep 0.1
done

# status_kb FIELD: FIELD's value (kB) in the server's /proc status.
status_kb() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$srv/status" 2>/dev/null || true; }

samples=${SAMPLES:-$work/samples}
: >"$samples"
(
  start=$(date +%s%N)
  while kill -0 "$srv" 2>/dev/null; do
    echo "$(( ($(date +%s%N) - start) / 1000000 )) $(status_kb RssAnon) $(status_kb VmHWM)" >>"$samples"
    sleep 0.1
  done
) &
sampler=$!

"$bin" bench s3 --endpoint "http://$address" "$@"
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true

awk '$2 > a { a = $2 } $3 > h { h = $3 } END {
  printf "rss: peak RssAnon %.0f MiB, VmHWM %.0f MiB (%d samples)\n", a / 1024, h / 1024, NR }' "$samples"
