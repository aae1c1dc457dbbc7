package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// dashboardExprs returns every PromQL expression of a Grafana dashboard
// (the "expr" of every target, panels in rows included) and of its
// template variables' queries.
func dashboardExprs(t *testing.T, raw []byte) []string {
	t.Helper()
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "expr" || k == "definition") {
					out = append(out, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	return out
}

// promMetricNames extracts the metric names a PromQL expression selects:
// identifiers followed by a selector, a range or an operator, less
// functions, keywords, label names and Grafana variables. Cairn's
// metrics all start with cairn_, which makes the extraction exact for
// them; others (go_, process_) are taken the same way.
func promMetricNames(expr string) []string {
	// Drop label matchers ({...}), strings and Grafana variables first:
	// what is left names metrics, functions, keywords and by() labels.
	expr = regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(expr, " ")
	expr = regexp.MustCompile(`"[^"]*"`).ReplaceAllString(expr, " ")
	expr = regexp.MustCompile(`\$\{?\w+\}?`).ReplaceAllString(expr, " ")
	expr = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`).ReplaceAllString(expr, " ")
	var out []string
	for _, m := range regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*(\s*\()?`).FindAllString(expr, -1) {
		if strings.HasSuffix(strings.TrimSpace(m), "(") {
			continue // a function call
		}
		switch m {
		case "and", "or", "unless", "bool", "offset", "le", "e", "label_values":
			continue
		}
		if strings.HasPrefix(m, "cairn_") || strings.HasPrefix(m, "go_") || strings.HasPrefix(m, "process_") {
			out = append(out, m)
		}
	}
	return out
}

func TestPromMetricNames(t *testing.T) {
	tests := []struct {
		expr string
		want []string
	}{
		{`sum(cairn_drives_online{job=~"$job"})`, []string{"cairn_drives_online"}},
		{`1 - cairn_drive_available_bytes{a="b"} / cairn_drive_total_bytes`, []string{"cairn_drive_available_bytes", "cairn_drive_total_bytes"}},
		{`histogram_quantile(0.99, sum by (op, le) (rate(cairn_mount_op_duration_seconds_bucket{x=~"$y"}[$__rate_interval])))`, []string{"cairn_mount_op_duration_seconds_bucket"}},
		{`label_values(cairn_build_info{job=~"$job"}, instance)`, []string{"cairn_build_info"}},
		{`clamp_min(sum(rate(cairn_read_cache_hits_total[5m])), 1e-9)`, []string{"cairn_read_cache_hits_total"}},
	}
	for _, tt := range tests {
		if got := promMetricNames(tt.expr); strings.Join(got, ",") != strings.Join(tt.want, ",") {
			t.Errorf("promMetricNames(%s) = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

// scrapeNames returns the sample names of a Prometheus text exposition.
func scrapeNames(body string) map[string]bool {
	names := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if i := strings.IndexAny(line, "{ "); i > 0 {
			names[line[:i]] = true
		}
	}
	return names
}

// TestMetricsDashboard starts the real server with a mount, works a
// little over S3 and on the mount, and checks that every metric
// deploy/grafana/cairn.json queries is on /metrics, and that the admin
// status API answers the root (and no one else).
func TestMetricsDashboard(t *testing.T) {
	root, err := repoRoot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "grafana", "cairn.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, e := range dashboardExprs(t, raw) {
		for _, n := range promMetricNames(e) {
			want[n] = true
		}
	}
	if len(want) < 20 {
		t.Fatalf("the dashboard queries only %d metrics: the extraction is broken", len(want))
	}

	srv, mnt := startMount(t)
	ctx := context.Background()
	c := fsClient(srv)
	const bucket = "dash"
	fsBucket(t, c, mnt, bucket)
	fsPut(t, c, bucket, "s3/obj", bytes.Repeat([]byte("x"), 3<<20), nil)
	if got := fsGet(t, c, bucket, "s3/obj"); len(got) != 3<<20 {
		t.Fatalf("GET returned %d bytes", len(got))
	}
	if _, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String("absent")}); err == nil {
		t.Fatal("GET of an absent key succeeded")
	}
	dir := filepath.Join(mnt, bucket, "fs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "file")
	if err := os.WriteFile(f, []byte("written on the mount"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(f, f+".renamed"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(f + ".renamed"); err != nil || string(b) != "written on the mount" {
		t.Fatalf("read back %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "absent")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stat of an absent name: %v", err)
	}
	if _, err := os.ReadDir(dir); err != nil {
		t.Fatal(err)
	}

	resp, err := http.Get(srv.url("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	have := scrapeNames(string(body))
	var missing []string
	for n := range want {
		if !have[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("metrics the dashboard queries that /metrics lacks: %v", missing)
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	t.Logf("the dashboard's %d metrics, all on /metrics: %s", len(names), strings.Join(names, " "))
	for _, line := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^cairn_mount_op_duration_seconds_count\{op="rename"\} [1-9]`),
		regexp.MustCompile(`(?m)^cairn_mount_op_duration_seconds_count\{op="create"\} [1-9]`),
		regexp.MustCompile(`(?m)^cairn_mount_op_errors_total\{errno="ENOENT",op="lookup"\} [1-9]`),
		regexp.MustCompile(`(?m)^cairn_drives_online 4$`),
		regexp.MustCompile(`(?m)^cairn_drives_offline 0$`),
		regexp.MustCompile(`(?m)^cairn_s3_errors_total\{code="NoSuchKey"\} [1-9]`),
	} {
		if !line.Match(body) {
			t.Errorf("/metrics has no line matching %s", line)
		}
	}

	// The admin status API: the root's, JSON with the documented names.
	status := func(user, secret string) rawResponse {
		req := newRaw(t, http.MethodGet, srv.url("/_cairn/admin/v1/status"), nil)
		signRaw(t, req, nil, user, secret, time.Now())
		return doRaw(t, req)
	}
	res := status(s3User, s3Secret)
	if res.status != http.StatusOK {
		t.Fatalf("GET status as root: %d %s", res.status, res.body)
	}
	var st map[string]any
	if err := json.Unmarshal(res.body, &st); err != nil {
		t.Fatalf("status is not JSON: %v: %s", err, res.body)
	}
	for _, k := range []string{"data_shards", "parity_shards", "drives", "buckets", "degraded_objects", "heal_queue",
		"cleaner_backlog", "compaction_backlog", "segment_backlog", "pending_puts", "version", "uptime_seconds"} {
		if _, ok := st[k]; !ok {
			t.Errorf("status JSON has no %q: %s", k, res.body)
		}
	}
	if drives, _ := st["drives"].([]any); len(drives) != 4 {
		t.Errorf("status JSON lists %d drives, want 4", len(drives))
	}
	reader := addAccessUser(t, srv, "dash-reader", "", "readonly")
	if res := status(reader.name, reader.secret); res.status != http.StatusForbidden || !strings.Contains(string(res.body), "AccessDenied") {
		t.Errorf("GET status as a non-root user: %d %s, want 403 AccessDenied", res.status, res.body)
	}
}
