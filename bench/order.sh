# Sourced by s3compare.sh and fscompare.sh: the order of the sides.
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
