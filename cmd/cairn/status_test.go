package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestRunStatus serves a store, makes a bucket, and reads the status
// through runStatus as tables and as JSON, as root and as another user.
func TestRunStatus(t *testing.T) {
	srv := startServer(t)
	ctx := context.Background()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL+"/photos", nil)
	if code, body, err := sendSigned(req, "rootkey", "rootsecret", "s3", "", 1<<20); err != nil || code != http.StatusOK {
		t.Fatalf("create bucket: %d %s %v", code, body, err)
	}

	var out bytes.Buffer
	d := deps{stdout: &out, stderr: io.Discard, log: zerolog.Nop()}
	if err := runStatus(ctx, statusOptions{Endpoint: srv.URL}, d); err != nil {
		t.Fatal(err)
	}
	t.Logf("cairn admin status:\n%s", out.String())
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^cairn \S+, up \S+; erasure 1\+0, blocks of 64 KiB; drives 1 of 1 online$`),
		regexp.MustCompile(`(?m)^DRIVE\s+STATE\s+SIZE\s+FREE\s+USED\s+I/O ERRORS\s+CHECKSUM FAILURES\s+PATH$`),
		regexp.MustCompile(`(?m)^0\s+online\s+\S+ \S+\s+\S+ \S+\s+\d+%\s+0\s+0\s+/\S+/drives/d0$`),
		regexp.MustCompile(`(?m)^DEGRADED OBJECTS\s+HEAL QUEUE\s+CLEANER BACKLOG\s+COMPACTION BACKLOG\s+SEGMENT BACKLOG\s+PENDING PUTS\n0\s+0\s+\d+\s+\d+\s+\d+\s+0$`),
		regexp.MustCompile(`(?m)^photos\s+0\s+0 B\s+0\s+-$`),
	} {
		if !want.MatchString(out.String()) {
			t.Errorf("status output does not match %s", want)
		}
	}
	if strings.Contains(out.String(), "_cairn") || strings.Contains(out.String(), "system") {
		t.Error("status lists a system bucket")
	}

	out.Reset()
	// HOST:PORT, as --endpoint takes it.
	ep, err := endpointFlag{Value: strings.TrimPrefix(srv.URL, "http://")}.resolve("admin status")
	if err != nil {
		t.Fatal(err)
	}
	if err := runStatus(ctx, statusOptions{Endpoint: ep, JSON: true}, d); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, out.String())
	}
	for _, k := range []string{"data_shards", "parity_shards", "block_size", "drives", "bucket_count", "buckets",
		"degraded_objects", "heal_queue", "cleaner_backlog", "compaction_backlog", "segment_backlog", "pending_puts", "version", "uptime_seconds"} {
		if _, ok := m[k]; !ok {
			t.Errorf("status JSON has no %q", k)
		}
	}
	drives, _ := m["drives"].([]any)
	if len(drives) != 1 {
		t.Fatalf("status JSON drives: %v", m["drives"])
	}
	for _, k := range []string{"index", "path", "online", "total_bytes", "free_bytes", "available_bytes", "io_errors", "checksum_failures"} {
		if _, ok := drives[0].(map[string]any)[k]; !ok {
			t.Errorf("status JSON drive has no %q", k)
		}
	}

	// Another user is refused: the status is the root's.
	body := []byte(`{"secret_key":"readersecret","policy":"readonly"}`)
	if _, err := adminCall(ctx, http.MethodPut, srv.URL+"/_cairn/admin/v1/users/reader", body); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CAIRN_ROOT_USER", "reader")
	t.Setenv("CAIRN_ROOT_PASSWORD", "readersecret")
	err = runStatus(ctx, statusOptions{Endpoint: srv.URL}, d)
	if err == nil || !strings.Contains(err.Error(), "AccessDenied") {
		t.Fatalf("status as a non-root user: %v, want AccessDenied", err)
	}
}

// TestMetricsNames scrapes /metrics of a fresh server for the store and
// catalog metrics (the mount's appear once it serves requests: the
// integration test covers them).
func TestMetricsNames(t *testing.T) {
	srv := startServer(t)
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		"cairn_drives_online 1", "cairn_drives_offline 0", `cairn_drive_online{drive="0",path=`,
		`cairn_drive_total_bytes{drive="0"}`, `cairn_drive_free_bytes{drive="0"}`, `cairn_drive_available_bytes{drive="0"}`,
		`cairn_drive_io_errors_total{drive="0"} 0`, `cairn_drive_checksum_failures_total{drive="0"} 0`,
		"cairn_objects_degraded 0", "cairn_heal_queue_length 0", "cairn_cleaner_backlog ", "cairn_compaction_backlog ", "cairn_segment_compaction_backlog ",
		"cairn_pending_puts 0", "cairn_store_health_up 1", "cairn_catalog_commits_total 0", "cairn_catalog_commit_conflicts_total 0",
		"cairn_uptime_seconds ", `cairn_build_info{version=`, "cairn_drive_bytes_written_total ", "cairn_segment_compactions_total ",
	} {
		if !strings.Contains(string(raw), "\n"+want) {
			t.Errorf("/metrics has no line starting %q", want)
		}
	}
}
