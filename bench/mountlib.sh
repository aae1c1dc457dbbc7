# Shared by fscompare.sh and patchcompare.sh (sourced, not run): building
# the sides' binaries and mounting and unmounting them. The sourcing
# script sets prog (its name, for messages), top, shared, work, rev
# (BASELINE_REV resolved), port, drives, parity, fl_flags, data, bl_data,
# orig, keep and the mount points mnt_fl, mnt_ca, mnt_bl, and the pids
# fl_pid, ca_pid, bl_pid (empty), before calling these. The sides and
# their order are order.sh's (resolve_baseline, order_of).

# shellcheck source=bench/order.sh
. "$top/bench/order.sh"

# unmount_all stops and unmounts whatever is still mounted (cleanup's
# first step, and after a failed round).
unmount_all() {
  if [ -n "$fl_pid" ]; then
    umount "$mnt_fl" 2>/dev/null || umount -l "$mnt_fl" 2>/dev/null || true
    kill -TERM "$fl_pid" 2>/dev/null || true; wait "$fl_pid" 2>/dev/null || true; fl_pid=
  fi
  if [ -n "$ca_pid" ]; then
    kill -TERM "$ca_pid" 2>/dev/null || true; wait "$ca_pid" 2>/dev/null || true; ca_pid=
  fi
  if [ -n "$bl_pid" ]; then
    kill -TERM "$bl_pid" 2>/dev/null || true; wait "$bl_pid" 2>/dev/null || true; bl_pid=
  fi
  for m in "$mnt_fl" "$mnt_ca" "$mnt_bl"; do mountpoint -q "$m" 2>/dev/null && umount -l "$m" 2>/dev/null; done
  return 0
}

# cleanup is the EXIT trap: everything unmounted, the work dir removed
# unless kept.
cleanup() {
  unmount_all
  if [ "$keep" = 1 ]; then echo "$prog: kept $work" >&2; else rm -rf "$work"; fi
}

# build_sides sets fuseloop, cairn and base_bin (the binaries, built
# unless given), cairn_desc and base_desc (what they are) and sides.
build_sides() {
  fuseloop=${FUSELOOP_BIN:-}
  if [ -z "$fuseloop" ]; then
    fuseloop=$work/fuseloop
    (cd "$shared" && go build -o "$fuseloop" ./fuseloop)
  fi
  cairn=${CAIRN_BIN:-}
  if [ -z "$cairn" ]; then
    cairn=$work/cairn
    (cd "$top" && go build -o "$cairn" ./cmd/cairn)
  fi
  cairn_desc=$(git -C "$top" describe --always --dirty 2>/dev/null || echo "$top")
  [ -z "${CAIRN_BIN:-}" ] || cairn_desc=$CAIRN_BIN
  # The baseline: a binary given, or a revision exported and built here.
  sides="fuseloop cairn"
  resolve_baseline
  if [ -n "$base_bin" ]; then sides="fuseloop cairn baseline"; mkdir -p "$mnt_bl"; fi
}

wait_mounted() { # dir pid what
  for _ in $(seq 300); do
    mountpoint -q "$1" && return 0
    kill -0 "$2" 2>/dev/null || { echo "$prog: $3 exited before mounting" >&2; return 1; }
    sleep 0.05
  done
  echo "$prog: $3 did not mount $1" >&2; return 1
}

mount_fuseloop() { # [ttl]
  local ttl=()
  [ -z "${1:-}" ] || ttl=(-ttl "$1")
  # shellcheck disable=SC2086
  "$fuseloop" $fl_flags "${ttl[@]}" "$mnt_fl" "$orig" >>"$work/fuseloop.log" 2>&1 &
  fl_pid=$!
  wait_mounted "$mnt_fl" "$fl_pid" fuseloop
}

umount_fuseloop() {
  umount "$mnt_fl" 2>/dev/null || umount -l "$mnt_fl"
  wait "$fl_pid" 2>/dev/null || true; fl_pid=
}

mount_cairn() { # side (cairn or baseline) [attr-timeout]
  local bin=$cairn dir=$data mnt=$mnt_ca p=$port flags=${CAIRN_FLAGS:-} pid ttl=()
  if [ "$1" = baseline ]; then
    bin=$base_bin dir=$bl_data mnt=$mnt_bl p=$((port + 1)) flags=${BASELINE_FLAGS-${CAIRN_FLAGS:-}}
  fi
  [ -z "${2:-}" ] || ttl=(--attr-timeout "$2")
  # shellcheck disable=SC2086
  CAIRN_ROOT_USER=bench CAIRN_ROOT_PASSWORD=benchsecret \
    "$bin" serve --data "$dir" --drives "$drives" --parity "$parity" \
    --address "127.0.0.1:$p" --mount "$mnt" "${ttl[@]}" \
    $flags --log-level warn >>"$work/$1.log" 2>&1 &
  pid=$!
  if [ "$1" = baseline ]; then bl_pid=$pid; else ca_pid=$pid; fi
  wait_mounted "$mnt" "$pid" "$1"
  for _ in $(seq 200); do
    curl -fs "http://127.0.0.1:$p/health/ready" >/dev/null 2>&1 && return 0; sleep 0.05
  done
  echo "$prog: $1 not ready" >&2; return 1
}

umount_cairn() { # side (cairn or baseline)
  local pid=$ca_pid mnt=$mnt_ca rc=0
  [ "$1" = baseline ] && pid=$bl_pid mnt=$mnt_bl
  kill -TERM "$pid"
  wait "$pid" || rc=$?
  if [ "$1" = baseline ]; then bl_pid=; else ca_pid=; fi
  [ "$rc" = 0 ] || echo "$prog: $1 serve exited $rc (see $work/$1.log)" >&2
  if mountpoint -q "$mnt"; then echo "$prog: $1 left its mount behind" >&2; umount -l "$mnt"; fi
}
