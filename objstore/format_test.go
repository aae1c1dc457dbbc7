package objstore

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestFormatMessages: a brand-new store is created with one info line and
// no warning; a drive that is formatted again in a store that exists (it
// was wiped or replaced) is warned about, naming it and heal, once; a
// store reopened whole says neither.
func TestFormatMessages(t *testing.T) {
	dir := t.TempDir()
	open := func(t *testing.T) []map[string]any {
		t.Helper()
		var logs bytes.Buffer
		opt := withBolt(t, Options{Dir: dir, DriveCount: 4, Parity: 2, NoBackground: true, Logger: zerolog.New(&logs)})
		s, err := Open(context.Background(), opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		rep, err := Fsck(context.Background(), withBolt(t, Options{Dir: dir, Parity: -1, NoBackground: true}), nil)
		if err != nil || !rep.Clean() {
			t.Fatalf("fsck: %+v, %v", rep, err)
		}
		var lines []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			if l == "" {
				continue
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("log line %q: %v", l, err)
			}
			if m["level"] == "info" || m["level"] == "warn" {
				lines = append(lines, m)
			}
		}
		return lines
	}
	for _, tc := range []struct {
		name   string
		before func(t *testing.T)
		want   []string // "level message drive" of each info and warn line
	}{
		{name: "new store", want: []string{"info created a new store "}},
		{name: "reopened", want: nil},
		{name: "one drive wiped", before: func(t *testing.T) {
			if err := os.RemoveAll(filepath.Join(dir, "drives", "d1")); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"warn drive directory was missing or unformatted; formatted it empty, run heal to restore its shards " + filepath.Join(dir, "drives", "d1")}},
		{name: "two drives wiped", before: func(t *testing.T) {
			for _, d := range []string{"d0", "d2"} {
				if err := os.RemoveAll(filepath.Join(dir, "drives", d)); err != nil {
					t.Fatal(err)
				}
			}
		}, want: []string{
			"warn drive directory was missing or unformatted; formatted it empty, run heal to restore its shards " + filepath.Join(dir, "drives", "d0"),
			"warn drive directory was missing or unformatted; formatted it empty, run heal to restore its shards " + filepath.Join(dir, "drives", "d2"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				tc.before(t)
			}
			var got []string
			for _, m := range open(t) {
				drive, _ := m["drive"].(string)
				got = append(got, m["level"].(string)+" "+m["message"].(string)+" "+drive)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("log lines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
