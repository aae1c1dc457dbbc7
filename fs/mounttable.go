package fs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("mount point %s: %w", dir, err)
	}
	dev, ok, err := fuseMountDev(abs)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no FUSE mount on %s in the mount table", abs)
	}
	p := "/sys/class/bdi/" + dev + "/read_ahead_kb"
	if err := os.WriteFile(p, []byte(strconv.Itoa(bytes>>10)), 0); err != nil {
		return fmt.Errorf("set readahead: %w", err)
	}
	return nil
}

// isFUSEMount says whether the mount table has a FUSE mount on dir.
func isFUSEMount(dir string) (bool, error) {
	_, ok, err := fuseMountDev(dir)
	return ok, err
}

// fuseMountDev finds the topmost FUSE mount on dir (an absolute path) in
// /proc/self/mountinfo and returns its device ("major:minor").
func fuseMountDev(dir string) (dev string, ok bool, err error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", false, fmt.Errorf("read mount table: %w", err)
	}
	return parseFUSEMount(string(b), dir)
}

// parseFUSEMount is fuseMountDev on a mount table's text: mounts stacked
// on one directory are listed in mount order, so the last one is on top.
func parseFUSEMount(table, dir string) (dev string, ok bool, err error) {
	for line := range strings.SplitSeq(table, "\n") {
		// id parent major:minor root mountpoint options ... - fstype source ...
		fields := strings.Fields(line)
		sep := slices.Index(fields, "-")
		if len(fields) < 5 || sep < 0 || sep+1 >= len(fields) {
			continue
		}
		if unescapeMount(fields[4]) == dir {
			fuse := fields[sep+1] == "fuse" || strings.HasPrefix(fields[sep+1], "fuse.")
			dev, ok = fields[2], fuse
		}
	}
	return dev, ok, nil
}

// unescapeMount undoes the octal escapes (\040 for a space) of
// /proc/self/mountinfo.
func unescapeMount(s string) string {
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
