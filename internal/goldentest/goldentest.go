package goldentest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"
)

// Compare compares got with the file at path, after writing got there
// when update is set, and returns the committed bytes. A difference fails
// the test, naming format (e.g. "the index format") as what changed: a
// fixture rewritten with -update means an on-disk format change, which
// needs a migration.
func Compare(t testing.TB, path string, got []byte, update bool, format string) []byte {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		verb := "%q"
		if !utf8.Valid(got) || !utf8.Valid(want) {
			verb = "%x"
		}
		t.Errorf("%s: encoding differs from the committed bytes (%s changed; see golden_test.go)\n got "+verb+"\nwant "+verb, path, format, got, want)
	}
	return want
}
