package drive

import (
	"context"
	"errors"
	"testing"
)

func TestParseDirty(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want int64
		err  bool
	}{
		{"meminfo", "MemTotal:       24540000 kB\nDirty:              8340 kB\nWriteback:             0 kB\n", 8340 << 10, false},
		{"first line", "Dirty: 0 kB", 0, false},
		{"no Dirty line", "MemTotal: 1 kB\nWriteback: 5 kB\n", 0, true},
		{"empty", "", 0, true},
		{"no unit", "Dirty: 12\n", 0, true},
		{"other unit", "Dirty: 12 MB\n", 0, true},
		{"negative", "Dirty: -1 kB\n", 0, true},
		{"not a number", "Dirty: lots kB\n", 0, true},
		{"too large", "Dirty: 99999999999999999999 kB\n", 0, true},
		{"a longer name is another counter", "DirtyX: 5 kB\nDirty: 7 kB\n", 7 << 10, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseDirty([]byte(tc.in))
			if (err != nil) != tc.err || got != tc.want {
				t.Fatalf("parseDirty(%q) = %d, %v; want %d, error %v", tc.in, got, err, tc.want, tc.err)
			}
			if err != nil && !errors.Is(err, errNoDirty) {
				t.Errorf("error %v is not errNoDirty", err)
			}
		})
	}
}

func TestDirtyBytes(t *testing.T) {
	if _, err := DirtyBytes(context.Background()); err != nil {
		t.Fatalf("DirtyBytes: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := DirtyBytes(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("DirtyBytes with a canceled context: %v", err)
	}
}

func FuzzParseDirty(f *testing.F) {
	f.Add([]byte("MemTotal: 1 kB\nDirty: 8340 kB\n"))
	f.Add([]byte("Dirty: -5 kB"))
	f.Add([]byte("Dirty:\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parseDirty(b)
		if err == nil && (n < 0 || n%1024 != 0) {
			t.Fatalf("parseDirty(%q) = %d", b, n)
		}
		if err != nil && n != 0 {
			t.Fatalf("parseDirty(%q) = %d with error %v", b, n, err)
		}
	})
}
