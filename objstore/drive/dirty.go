package drive

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// meminfoPath is where the kernel reports its memory counters.
const meminfoPath = "/proc/meminfo"

// errNoDirty is returned when meminfo has no readable Dirty line.
var errNoDirty = errors.New("no Dirty line")

// DirtyBytes is how much file data waits in the page cache to be written
// back, on every filesystem (the kernel's Dirty counter): what a syncfs
// of a drive's filesystem may have to write besides the drive's own.
func DirtyBytes(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(meminfoPath)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", meminfoPath, err)
	}
	n, err := parseDirty(b)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", meminfoPath, err)
	}
	return n, nil
}

// parseDirty reads the Dirty line of /proc/meminfo ("Dirty:  8340 kB").
func parseDirty(b []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		rest, ok := bytes.CutPrefix(sc.Bytes(), []byte("Dirty:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("%w: %q", errNoDirty, sc.Bytes())
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || kb < 0 || kb > 1<<53 {
			return 0, fmt.Errorf("%w: %q", errNoDirty, sc.Bytes())
		}
		return kb << 10, nil
	}
	return 0, errNoDirty
}
