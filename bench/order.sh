# Sourced by s3compare.sh and mountlib.sh (fscompare.sh, patchcompare.sh):
# the sides and their order.
#
# resolve_baseline sets base_bin and base_desc to the baseline side's
# binary and its description: BASELINE as given, or the revision $rev
# (BASELINE_REV, checked by the caller) exported from $top and built in
# $work; both empty without a baseline.
resolve_baseline() {
  base_bin= base_desc=
  if [ -n "${BASELINE:-}" ]; then
    base_bin=$(cd "$(dirname "$BASELINE")" && pwd)/$(basename "$BASELINE"); base_desc=$base_bin
  elif [ -n "${BASELINE_REV:-}" ]; then
    mkdir "$work/baseline-src"
    git -C "$top" archive "$rev" | tar -x -C "$work/baseline-src"
    (cd "$work/baseline-src" && go build -o "$work/cairn-baseline" ./cmd/cairn)
    base_bin=$work/cairn-baseline; base_desc=$(git -C "$top" rev-parse --short "$rev")
  fi
}
#
# order_of ROUND YARDSTICK prints the round's order of the sides, YARDSTICK
# naming the yardstick's side (naive, fuseloop). Two sides (no baseline:
# $base_bin empty): odd rounds the yardstick first, even rounds Cairn
# (A B, B A), so that neither always runs in the state the other leaves
# behind (a busy disk, the host flushing what the guest synced). Three
# sides: all six permutations in turn, in pairs that swap cairn and the
# baseline, so that after any even number of rounds the two Cairns have
# held the same places after the same predecessors.
order_of() {
  local y=$2
  if [ -z "$base_bin" ]; then
    if [ $(($1 % 2)) = 1 ]; then echo "$y cairn"; else echo "cairn $y"; fi
    return
  fi
  case $((($1 - 1) % 6)) in
    0) echo "$y cairn baseline" ;; 1) echo "$y baseline cairn" ;;
    2) echo "cairn baseline $y" ;; 3) echo "baseline cairn $y" ;;
    4) echo "cairn $y baseline" ;; 5) echo "baseline $y cairn" ;;
  esac
}
