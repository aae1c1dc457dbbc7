#!/usr/bin/env bash
# The cost of access evaluation, side by side on one `cairn serve`:
# `cairn bench s3` PUTs and GETs as three callers in turn,
#   root    the root user on a plain bucket (root is never evaluated: the
#           figure without access control),
#   anon    unsigned requests on an anonymous-read bucket: its policy lets
#           anyone get objects, its ACL (public-read-write) lets anyone put
#           them (the anonymous caller through the bucket policy, the ACL
#           and the public-access block),
#   policy  a second user with the readwrite user policy on a bucket with
#           a 20-statement bucket policy (user policy, bucket policy and
#           ACL all evaluated; the statement that allows comes last),
# rotated through the six orders of the three, then per workload the
# medians, each side's ratio to root (the median of per-round ratios and
# its range).
#
#   bench/policycompare.sh [ROUNDS] [DURATION]       (defaults: 3 10s)
#
# WORKLOADS (default "put 4KiB,get 4KiB,put 64MiB,get 64MiB"), DRIVES (4),
# LARGE (default 30s: the duration of the 64 MiB runs, long enough for
# every client to finish some) and GAP (20: seconds of pause after each
# large PUT run) tune the run.
# Loopback only; everything it starts is stopped on exit.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}; dur=${2:-10s}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
(cd "$top" && go build -o "$work/cairn" ./cmd/cairn)
desc=$(git -C "$top" describe --always --dirty)
export CAIRN_ROOT_USER=bench CAIRN_ROOT_PASSWORD=benchsecret
ep=http://127.0.0.1:9104
"$work/cairn" serve --data "$work/data" --drives "${DRIVES:-4}" --address "${ep#http://}" --log-level warn 2>"$work/cairn.log" &
for _ in $(seq 100); do curl -sf "$ep/health/ready" >/dev/null && break; sleep 0.2; done
"$work/cairn" admin user add benchuser --secret benchusersecret --endpoint "$ep" >/dev/null

s3() { # user:secret method path [curl args...]: a SigV4-signed request
  local u=$1 m=$2 p=$3; shift 3
  curl -sf -o /dev/null --aws-sigv4 "aws:amz:us-east-1:s3" --user "$u" -X "$m" "$@" "$ep$p" ||
    { echo "policycompare: $m $p failed" >&2; exit 1; }
}
s3 bench:benchsecret PUT /bench-root
s3 bench:benchsecret PUT /bench-anon -H "x-amz-acl: public-read-write"
s3 bench:benchsecret PUT /bench-policy
python3 - >"$work/policy.json" <<'PY'
import json
st = []
# 19 statements that do not decide benchuser's requests, of the shapes a
# real policy has: other principals, other prefixes, conditions that fail.
for i in range(6):
    st.append({"Sid": f"OtherUser{i}", "Effect": "Allow", "Principal": {"AWS": [f"arn:aws:iam::000000000000:user/team{i}"]},
               "Action": ["s3:GetObject", "s3:PutObject"], "Resource": [f"arn:aws:s3:::bench-policy/team{i}/*"]})
for i in range(5):
    st.append({"Sid": f"DenyOther{i}", "Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObject",
               "Resource": f"arn:aws:s3:::bench-policy/locked{i}/*"})
for i in range(4):
    st.append({"Sid": f"FromNet{i}", "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
               "Resource": "arn:aws:s3:::bench-policy/*", "Condition": {"IpAddress": {"aws:SourceIp": f"10.{i}.0.0/16"}}})
for i in range(4):
    st.append({"Sid": f"Tagged{i}", "Effect": "Allow", "Principal": "*", "Action": "s3:PutObject",
               "Resource": "arn:aws:s3:::bench-policy/*", "Condition": {"StringEquals": {"s3:RequestObjectTag/team": f"t{i}"}}})
st.append({"Sid": "Bench", "Effect": "Allow", "Principal": {"AWS": ["arn:aws:iam::000000000000:user/benchuser"]},
           "Action": ["s3:GetObject", "s3:PutObject", "s3:ListBucket"],
           "Resource": ["arn:aws:s3:::bench-policy", "arn:aws:s3:::bench-policy/*"]})
assert len(st) == 20
print(json.dumps({"Version": "2012-10-17", "Statement": st}))
PY
# "?policy=": curl 7.88 signs a bare "?policy" without its "=".
s3 bench:benchsecret PUT "/bench-policy?policy=" --data-binary @"$work/policy.json"
echo '{"Version":"2012-10-17","Statement":[{"Sid":"AnonRead","Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bench-anon/*"}]}' >"$work/anon.json"
s3 bench:benchsecret PUT "/bench-anon?policy=" --data-binary @"$work/anon.json"

load() { # side op size
  local creds=() keys=64
  case $1 in
    root) creds=(--access-key bench --secret-key benchsecret) ;;
    policy) creds=(--access-key benchuser --secret-key benchusersecret) ;;
    anon) creds=(--anonymous) ;;
  esac
  local d=$dur
  case $3 in *MiB|*GiB) keys=16 d=${LARGE:-30s} ;; esac
  "$work/cairn" bench s3 --endpoint "$ep" "${creds[@]}" --bucket "bench-$1" --op "$2" --size "$3" \
    --clients 16 --keys "$keys" --duration "$d" --json |
    python3 -c 'import json,sys; r=json.load(sys.stdin); r["label"]=sys.argv[1]; print(json.dumps(r))' "$1" >>"$work/results.jsonl"
}
order() {
  case $((($1 - 1) % 6)) in
    0) echo "root anon policy" ;; 1) echo "anon policy root" ;; 2) echo "policy root anon" ;;
    3) echo "root policy anon" ;; 4) echo "policy anon root" ;; 5) echo "anon root policy" ;;
  esac
}
IFS=, read -r -a workloads <<<"${WORKLOADS:-put 4KiB,get 4KiB,put 64MiB,get 64MiB}"
for r in $(seq "$rounds"); do
  for w in "${workloads[@]}"; do
    set -- $w
    gap=0; case "$1 $2" in put*MiB|put*GiB) gap=${GAP:-20} ;; esac
    for s in $(order "$r"); do
      load "$s" "$1" "$2"; sync; sleep "$gap"
    done
  done
  echo "policycompare: round $r done" >&2
done
n=$(grep -c '"level":"error"' "$work/cairn.log" || true)
[ "$n" = 0 ] || { echo "policycompare: cairn logged $n errors; the first:" >&2; grep -m1 '"level":"error"' "$work/cairn.log" >&2; }
python3 - "$work/results.jsonl" "$desc" <<'PY'
import json, sys, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1])]
groups = {}
for r in rows:
    if r["errors"]:
        print(f"{r['label']} {r['op']} {r['size']}: {r['errors']} errors, the first: {r.get('first_error')}")
    groups.setdefault((r["label"], r["op"], r["size"]), []).append(r)
keys = sorted({(r["op"], r["size"]) for r in rows}, key=lambda k: (k[1], k[0]))
print(f"access evaluation at {sys.argv[2]}: root (none) vs anon (bucket policy + ACL) vs policy (user + 20-statement bucket policy),"
      f" 16 clients, {len(groups[('root',) + keys[0]])} rounds, order rotated")
print("| workload | root | anon | policy | anon/root (median, range) | policy/root (median, range) |")
print("|---|---|---|---|---|---|")
for op, size in keys:
    big = size >= 1 << 20
    v = (lambda x: x["mib_per_s"]) if big else (lambda x: x["ops_per_s"])
    unit = "MiB/s" if big else "ops/s"
    name = f"{op.upper()} {size >> 20} MiB" if big else f"{op.upper()} {size >> 10} KiB"
    vals = {s: [v(x) for x in groups[(s, op, size)]] for s in ("root", "anon", "policy")}
    cells = []
    for s in ("anon", "policy"):
        per = [a / b for a, b in zip(vals[s], vals["root"]) if b > 0]
        cells.append(f"{st.median(per):.3f}x ({min(per):.3f}-{max(per):.3f})" if per else "n/a (no root figure)")
    print(f"| {name} | " + " | ".join(f"{st.median(vals[s]):.0f} {unit}" for s in vals) + " | " + " | ".join(cells) + " |")
PY
