package fs

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// readAhead is how far ahead the kernel reads a file read sequentially,
// in requests of up to MaxWrite (1 MiB) each: eight times the kernel's
// default for a FUSE mount, which halves the mount's CPU per byte read
// (one request per MiB instead of eight) and keeps two drives' shards in
// flight.
const readAhead = 1 << 20

// setReadAhead sets the kernel's readahead for the FUSE mount on dir to
// bytes. The init reply's max_readahead can only lower the readahead of
// the mount's backing device, which starts at the kernel's 128 KiB
// default; raising it takes the device's read_ahead_kb in sysfs (root).
func setReadAhead(dir string, bytes int) error {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return fmt.Errorf("set readahead: %w", err)
	}
	p := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(st.Dev), unix.Minor(st.Dev))
	if err := os.WriteFile(p, []byte(strconv.Itoa(bytes>>10)), 0); err != nil {
		return fmt.Errorf("set readahead: %w", err)
	}
	return nil
}

// isFUSEMount says whether the topmost mount on dir (an absolute path) in
// /proc/self/mountinfo is a FUSE mount.
func isFUSEMount(dir string) (bool, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false, fmt.Errorf("read mount table: %w", err)
	}
	return parseFUSEMount(string(b), dir), nil
}

// parseFUSEMount is isFUSEMount on a mount table's text: mounts stacked
// on one directory are listed in mount order, so the last one is on top.
func parseFUSEMount(table, dir string) bool {
	fuse := false
	for line := range strings.SplitSeq(table, "\n") {
		// id parent major:minor root mountpoint options ... - fstype source ...
		fields := strings.Fields(line)
		sep := slices.Index(fields, "-")
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
			continue
		}
		if UnescapeMount(fields[4]) == dir {
			fuse = fields[sep+1] == "fuse" || strings.HasPrefix(fields[sep+1], "fuse.")
		}
	}
	return fuse
}

// UnescapeMount undoes the octal escapes (\040 for a space) of a path in
// /proc/self/mountinfo.
func UnescapeMount(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
