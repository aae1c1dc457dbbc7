package erasure

// DefaultParity returns the parity shard count for a set of n drives:
// 1 drive: 0; 2-3: 1; 4-5: 2; 6-7: 3; 8 or more: 4. It returns 0 for n < 1.
func DefaultParity(drives int) int {
	switch {
	case drives < 2:
		return 0
	case drives < 8:
		return drives / 2
	default:
		return 4
	}
}

// WriteQuorum returns how many shards must be written for a write to
// succeed: k, or k+1 when k == m so that two disjoint halves of the drives
// can never both accept conflicting writes.
func WriteQuorum(k, m int) int {
	if k == m {
		return k + 1
	}
	return k
}
