package fs

import (
	"syscall"
	"testing"
)

func TestOpenMask(t *testing.T) {
	tests := []struct {
		flags uint32
		want  uint32
	}{
		{syscall.O_RDONLY, mayRead},
		{syscall.O_WRONLY, mayWrite},
		{syscall.O_RDWR, mayRead | mayWrite},
		{syscall.O_RDONLY | syscall.O_TRUNC, mayRead | mayWrite},
		{syscall.O_RDONLY | fmodeExec, mayExec},
		{syscall.O_WRONLY | syscall.O_APPEND, mayWrite},
	}
	for _, tc := range tests {
		if got := openMask(tc.flags); got != tc.want {
			t.Errorf("openMask(%#o) = %o, want %o", tc.flags, got, tc.want)
		}
	}
}
