package fs

import "testing"

// TestInodes: statfs's inodes add up (total = used + free), leave the
// used ones at most 80% of the total, never claim more free inodes than
// free blocks, and stay below the 2^32 that looked like a default.
func TestInodes(t *testing.T) {
	for _, tc := range []struct {
		name        string
		used, avail uint64
		free        uint64
	}{
		{"empty store", 0, 1 << 30, inodesFree},
		{"few objects", 25, 1 << 30, inodesFree},
		{"80% used stays", 40 << 20, 1 << 40, inodesFree},
		{"over 80% doubles", 40<<20 + 1, 1 << 40, 2 * inodesFree},
		{"many objects", 1 << 30, 1 << 40, 32 * inodesFree},
		{"little room", 25, 1000, 1000},
		{"full", 25, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, free := inodes(tc.used, tc.avail)
			if free != tc.free {
				t.Errorf("free = %d, want %d", free, tc.free)
			}
			if files != tc.used+free {
				t.Errorf("files = %d, want used + free = %d", files, tc.used+free)
			}
			if free > tc.avail {
				t.Errorf("free %d > free blocks %d", free, tc.avail)
			}
			if free > 0 && tc.used*10 > files*8 {
				t.Errorf("used %d of %d: over 80%%", tc.used, files)
			}
			if tc.used < 1<<30 && files >= 1<<32 {
				t.Errorf("files = %d for %d objects", files, tc.used)
			}
		})
	}
}
