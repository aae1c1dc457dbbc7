package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func testConfig(t *testing.T) config {
	return config{
		path:   filepath.Join(t.TempDir(), "fsx.dat"),
		ops:    5000,
		maxLen: 256 << 10,
		seed:   1,
		reopen: 8,
	}
}

// A local file passes, with and without fsyncs, and the run is the
// seed's: the same seed leaves the same file.
func TestRunLocal(t *testing.T) {
	cfg := testConfig(t)
	res, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.ops != cfg.ops {
		t.Fatalf("ran %d ops, want %d", res.ops, cfg.ops)
	}
	first, err := os.ReadFile(cfg.path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.fsyncEvery = 100
	if _, err := run(cfg); err != nil {
		t.Fatal(err)
	}
	again, err := os.ReadFile(cfg.path)
	if err != nil {
		t.Fatal(err)
	}
	if string(first) != string(again) {
		t.Fatal("two runs with one seed left different files")
	}
	cfg.seed = 2
	if _, err := run(cfg); err != nil {
		t.Fatal(err)
	}
	other, _ := os.ReadFile(cfg.path)
	if string(first) == string(other) {
		t.Fatal("seeds 1 and 2 left the same file")
	}
}

// Every kind of operation runs in a few thousand.
func TestOpsMix(t *testing.T) {
	cfg := testConfig(t)
	res, err := run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"write", "read", "truncate", "extend", "reopen"} {
		if res.counts[k] < res.ops/100 {
			t.Errorf("%d %s operations in %d: %v", res.counts[k], k, res.ops, res.counts)
		}
	}
	t.Logf("%v", res.counts)
}

// A file changed behind the exerciser's back fails the run, with the
// offset of the first differing byte.
func TestCorruptionDetected(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(path string) (string, error) // returns what the error must say
	}{
		{"flipped byte", func(path string) (string, error) {
			fi, err := os.Stat(path)
			if err != nil {
				return "", err
			}
			off := fi.Size() / 2
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				return "", err
			}
			defer f.Close()
			b := make([]byte, 1)
			if _, err := f.ReadAt(b, off); err != nil {
				return "", err
			}
			b[0] ^= 0x5a
			if _, err := f.WriteAt(b, off); err != nil {
				return "", err
			}
			return "mismatch at file offset " + itoa(off), nil
		}},
		{"shortened", func(path string) (string, error) {
			fi, err := os.Stat(path)
			if err != nil {
				return "", err
			}
			return "size after reopen is " + itoa(fi.Size()-1), os.Truncate(path, fi.Size()-1)
		}},
		{"lengthened", func(path string) (string, error) {
			fi, err := os.Stat(path)
			if err != nil {
				return "", err
			}
			return "size after reopen is " + itoa(fi.Size()+1), os.Truncate(path, fi.Size()+1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.ops = 2000
			var want string
			// After the last operation: nothing can overwrite the damage
			// before the final check.
			cfg.afterOp = func(op int, path string) error {
				if op != cfg.ops {
					return nil
				}
				var err error
				want, err = tc.corrupt(path)
				return err
			}
			_, err := run(cfg)
			if err == nil {
				t.Fatal("the corrupted file passed")
			}
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("the error does not say %q:\n%v", want, err)
			}
			t.Logf("%v", err)
		})
	}
}

// A corruption in the middle of a run is found by a later read or the
// final check, whichever comes first, unless later writes cover it: with
// a byte flipped every 50 operations some must be found.
func TestCorruptionMidRun(t *testing.T) {
	cfg := testConfig(t)
	cfg.afterOp = func(op int, path string) error {
		if op%50 != 0 {
			return nil
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || fi.Size() == 0 {
			return err
		}
		b := []byte{0}
		off := fi.Size() - 1
		if _, err := f.ReadAt(b, off); err != nil {
			return err
		}
		b[0] ^= 0xff
		_, err = f.WriteAt(b, off)
		return err
	}
	res, err := run(cfg)
	if err == nil {
		t.Fatal("a file corrupted every 50 operations passed")
	}
	if !strings.Contains(err.Error(), "mismatch at file offset") || !strings.Contains(err.Error(), "last operations done:") {
		t.Fatalf("unexpected error: %v", err)
	}
	t.Logf("failed after %d ops: %v", res.ops, err)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
