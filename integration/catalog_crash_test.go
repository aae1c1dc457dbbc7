package integration

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/objectbacked"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// The catalog crash test: a child process (internal/catalogcrash) stops a
// table commit between the metadata write and the pointer flip and is
// SIGKILLed there; the test then checks the store in-process (before any
// recovery), through a real `cairn serve` (whose start runs Recover), and
// across a clean restart.

const (
	crashWarehouse = "crashlake"
	// catalogCrashWait bounds the wait for the worker's "KILL ME".
	catalogCrashWait = 20 * time.Second
)

var crashTableID = catalog.Ident{Namespace: []string{"ns"}, Name: "t"}

func TestCatalogCrashBetweenMetadataAndFlip(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "catalogcrash")
	if err := goBuild(context.Background(), bin, "./integration/internal/catalogcrash"); err != nil {
		t.Fatalf("build catalogcrash: %v", err)
	}
	// before-pointer-flip is the must-show: the staged commit is recorded
	// when the process dies. after-metadata-write dies one step earlier:
	// a metadata file is written but nothing records it yet.
	for _, tc := range []struct {
		hook   string
		staged int
	}{
		{"before-pointer-flip", 1},
		{"after-metadata-write", 0},
	} {
		t.Run(tc.hook, func(t *testing.T) { catalogCrashRun(t, bin, tc.hook, tc.staged) })
	}
}

func catalogCrashRun(t *testing.T, bin, hook string, wantStaged int) {
	dir := t.TempDir()
	oldLoc, newLoc := killCatalogWorker(t, bin, dir, hook)
	if oldLoc == newLoc || !strings.HasPrefix(oldLoc, "s3://"+crashWarehouse+"/") || !strings.HasPrefix(newLoc, "s3://"+crashWarehouse+"/") {
		t.Fatalf("worker locations: old %q new %q", oldLoc, newLoc)
	}

	// 1. In-process, before any recovery: the table is at the old
	// metadata and the crashed commit is on record as staged.
	func() {
		ctx := context.Background()
		st, svc := openCrashCatalog(t, dir)
		defer func() { _ = st.Close() }()
		l, err := svc.LoadTable(ctx, crashWarehouse, crashTableID, "")
		if err != nil {
			t.Fatalf("LoadTable after the kill: %v", err)
		}
		if l.MetadataLocation != oldLoc {
			t.Fatalf("LoadTable after the kill: metadata-location %s, want the old %s (the crashed commit wrote %s)", l.MetadataLocation, oldLoc, newLoc)
		}
		wantOldProps(t, "in-process LoadTable after the kill", metadataProps(t, l.Metadata))
		staged, err := svc.StagedCommits(ctx, crashWarehouse)
		if err != nil {
			t.Fatalf("StagedCommits: %v", err)
		}
		if len(staged) != wantStaged {
			t.Fatalf("StagedCommits after the kill: %d entries %+v, want %d", len(staged), staged, wantStaged)
		}
		if wantStaged == 1 {
			c := staged[0]
			if c.Kind != catalog.KindTable || c.Ident.String() != crashTableID.String() || c.From != oldLoc || c.To != newLoc {
				t.Fatalf("staged commit %+v, want table %s from %s to %s", c, crashTableID, oldLoc, newLoc)
			}
		}
		// Both metadata files are there: the old one (current) and the
		// one the crashed commit wrote.
		headLocation(t, st, oldLoc, true)
		headLocation(t, st, newLoc, true)
	}()

	// 2. cairn serve on the same data (its start runs Recover): the
	// table loads at the old metadata over REST, and that file exists.
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)
	srv := startServer(t, dir)
	srv.waitReady(readyTimeout)
	tok := icebergToken(t, srv)
	lt := loadTableREST(t, srv, tok)
	if lt.MetadataLocation != oldLoc {
		t.Fatalf("REST loadTable after recovery: metadata-location %s, want the old %s", lt.MetadataLocation, oldLoc)
	}
	wantOldProps(t, "REST loadTable after recovery", lt.Metadata.Properties)
	if st := headS3Location(t, srv, oldLoc); st != http.StatusOK {
		t.Fatalf("HEAD %s through the S3 face: %d, want 200", oldLoc, st)
	}
	orphan := headS3Location(t, srv, newLoc)
	if wantStaged == 1 && orphan != http.StatusNotFound {
		// Recover abandons the staged commit and deletes its file.
		t.Fatalf("HEAD %s (the abandoned commit's file) after recovery: %d, want 404", newLoc, orphan)
	}
	t.Logf("after recovery the crashed commit's file %s answers %d", newLoc, orphan)

	// The table still takes commits.
	committed := commitTableREST(t, srv, tok, `{"requirements":[{"type":"assert-table-uuid","uuid":"`+lt.Metadata.TableUUID+`"}],"updates":[{"action":"set-properties","updates":{"round":"3"}}]}`)
	if committed == oldLoc || committed == newLoc {
		t.Fatalf("commit after recovery: metadata-location %s reused", committed)
	}
	if code := srv.stop(stopTimeout); code != 0 {
		t.Fatalf("cairn serve exit %d after SIGTERM", code)
	}

	// 3. Clean restart: warehouse, namespace, table and properties survive.
	srv = startServer(t, dir)
	srv.waitReady(readyTimeout)
	tok = icebergToken(t, srv)
	var buckets struct {
		TableBuckets []catalog.Warehouse `json:"table_buckets"`
	}
	icebergJSON(t, srv, tok, http.MethodGet, "/_cairn/admin/v1/table-buckets", "", http.StatusOK, &buckets)
	if !slices.ContainsFunc(buckets.TableBuckets, func(w catalog.Warehouse) bool { return w.Name == crashWarehouse }) {
		t.Fatalf("table buckets after restart: %+v, want %s", buckets.TableBuckets, crashWarehouse)
	}
	var ns struct {
		Namespace  []string          `json:"namespace"`
		Properties map[string]string `json:"properties"`
	}
	icebergJSON(t, srv, tok, http.MethodGet, "/iceberg/v1/"+crashWarehouse+"/namespaces/ns", "", http.StatusOK, &ns)
	if !slices.Equal(ns.Namespace, []string{"ns"}) || ns.Properties["owner"] != "crash" {
		t.Fatalf("namespace after restart: %+v", ns)
	}
	lt = loadTableREST(t, srv, tok)
	p := lt.Metadata.Properties
	if lt.MetadataLocation != committed || p["round"] != "3" || p["first"] != "yes" || p["second"] != "" {
		t.Fatalf("table after restart: metadata-location %s (want %s), properties %v", lt.MetadataLocation, committed, p)
	}
	if st := headS3Location(t, srv, committed); st != http.StatusOK {
		t.Fatalf("HEAD %s after restart: %d", committed, st)
	}
	if code := srv.stop(stopTimeout); code != 0 {
		t.Fatalf("cairn serve exit %d after SIGTERM", code)
	}

	// 4. In-process again: no staged commit is left.
	ctx := context.Background()
	st, svc := openCrashCatalog(t, dir)
	defer func() { _ = st.Close() }()
	staged, err := svc.StagedCommits(ctx, crashWarehouse)
	if err != nil || len(staged) != 0 {
		t.Fatalf("StagedCommits after recovery: %+v, %v; want none", staged, err)
	}
	l, err := svc.LoadTable(ctx, crashWarehouse, crashTableID, "")
	if err != nil || l.MetadataLocation != committed {
		t.Fatalf("in-process LoadTable at the end: %v, %s; want %s", err, l.MetadataLocation, committed)
	}
	if wantStaged == 1 {
		headLocation(t, st, newLoc, false)
	}
}

// startLineWorker starts a crash test's child process, bin with args, and
// returns it, its stdout line by line (closed at its end) and its stderr.
func startLineWorker(t *testing.T, bin string, args ...string) (*exec.Cmd, <-chan string, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return cmd, lines, stderr
}

// killCatalogWorker runs the worker on dir until it prints "KILL ME",
// SIGKILLs it, and returns the metadata locations it reported: the table's
// after its first commit and the file its stopped commit wrote.
func killCatalogWorker(t *testing.T, bin, dir, hook string) (oldLoc, newLoc string) {
	t.Helper()
	cmd, lines, stderr := startLineWorker(t, bin, "-data", dir, "-hook", hook)
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	timeout := time.After(catalogCrashWait)
	var got []string
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				_ = cmd.Wait()
				killed = true
				t.Fatalf("worker exited before KILL ME (%v); stdout %q\nstderr:\n%s", cmd.ProcessState, got, stderr.String())
			}
			got = append(got, l)
			switch {
			case l == "KILL ME":
				break wait
			case strings.HasPrefix(l, "OLD "):
				oldLoc = strings.TrimPrefix(l, "OLD ")
			case strings.HasPrefix(l, "NEW "):
				newLoc = strings.TrimPrefix(l, "NEW ")
			}
		case <-timeout:
			t.Fatalf("no KILL ME from the worker after %v; stdout %q\nstderr:\n%s", catalogCrashWait, got, stderr.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	for range lines { // drain until the pipe closes
	}
	err := cmd.Wait()
	killed = true
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("worker did not die of SIGKILL: %v\nstderr:\n%s", err, stderr.String())
	}
	return oldLoc, newLoc
}

// openCrashCatalog opens the store on dir as cmd/cairn does (only --data
// given) and a catalog on the object backing, without running Recover.
// The caller closes the store.
func openCrashCatalog(t *testing.T, dir string) (*objstore.Store, *catalog.Service) {
	t.Helper()
	ctx := context.Background()
	st, err := objstore.Open(ctx, objstore.Options{Dir: dir, Parity: -1, Index: storetest.OpenBolt(t, dir)})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	b, err := objectbacked.New(ctx, st)
	if err != nil {
		_ = st.Close()
		t.Fatalf("object backing: %v", err)
	}
	svc, err := catalog.New(st, b, catalog.Options{})
	if err != nil {
		_ = st.Close()
		t.Fatalf("catalog.New: %v", err)
	}
	return st, svc
}

// splitLocation splits s3://bucket/key.
func splitLocation(t *testing.T, loc string) (bucket, key string) {
	t.Helper()
	u, err := url.Parse(loc)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		t.Fatalf("metadata location %q is not s3://bucket/key (%v)", loc, err)
	}
	return u.Host, strings.TrimPrefix(u.Path, "/")
}

// headLocation checks in the store that the object at loc exists or not.
func headLocation(t *testing.T, st *objstore.Store, loc string, want bool) {
	t.Helper()
	bucket, key := splitLocation(t, loc)
	_, err := st.Head(context.Background(), bucket, key, objstore.GetOptions{})
	switch {
	case want && err != nil:
		t.Fatalf("metadata file %s: %v, want it present", loc, err)
	case !want && err == nil:
		t.Fatalf("metadata file %s is still there, want it deleted", loc)
	case !want && !errors.Is(err, objstore.ErrNoSuchKey) && !errors.Is(err, objstore.ErrDeleteMarker):
		t.Fatalf("metadata file %s: %v, want no such key", loc, err)
	}
}

// headS3Location HEADs the object at loc through the S3 face (SigV4, root)
// and returns the status.
func headS3Location(t *testing.T, srv *server, loc string) int {
	t.Helper()
	bucket, key := splitLocation(t, loc)
	req := newRaw(t, http.MethodHead, objectURL(srv, bucket, key), nil)
	signRaw(t, req, nil, s3User, s3Secret, time.Now())
	return doRaw(t, req).status
}

func wantOldProps(t *testing.T, what string, p map[string]string) {
	t.Helper()
	if p["round"] != "1" || p["first"] != "yes" || p["second"] != "" {
		t.Fatalf("%s: properties %v, want the first commit's (round=1, first=yes, no second)", what, p)
	}
}

func metadataProps(t *testing.T, raw json.RawMessage) map[string]string {
	t.Helper()
	var m struct {
		Properties map[string]string `json:"properties"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("table metadata: %v", err)
	}
	return m.Properties
}

// icebergToken gets an OAuth2 bearer token for the root credentials.
func icebergToken(t *testing.T, srv *server) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {s3User}, "client_secret": {s3Secret}, "scope": {"catalog"}}
	req := newRaw(t, http.MethodPost, srv.url("/iceberg/v1/oauth/tokens"), []byte(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res := doRaw(t, req)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if res.status != http.StatusOK || json.Unmarshal(res.body, &tok) != nil || tok.AccessToken == "" {
		t.Fatalf("POST /iceberg/v1/oauth/tokens: %d %s", res.status, res.body)
	}
	return tok.AccessToken
}

// icebergJSON sends an authenticated catalog request, checks the status
// and decodes the JSON answer into out (when not nil).
func icebergJSON(t *testing.T, srv *server, tok, method, path, body string, want int, out any) {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	req := newRaw(t, method, srv.url(path), b)
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res := doRaw(t, req)
	if res.status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, path, res.status, bytes.TrimSpace(res.body), want)
	}
	if out != nil {
		if err := json.NewDecoder(io.LimitReader(bytes.NewReader(res.body), 1<<20)).Decode(out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, res.body, err)
		}
	}
}

// restTable is the part of a LoadTableResult the test reads.
type restTable struct {
	MetadataLocation string `json:"metadata-location"`
	Metadata         struct {
		TableUUID  string            `json:"table-uuid"`
		Properties map[string]string `json:"properties"`
	} `json:"metadata"`
}

const crashTablePath = "/iceberg/v1/" + crashWarehouse + "/namespaces/ns/tables/t"

func loadTableREST(t *testing.T, srv *server, tok string) restTable {
	t.Helper()
	var lt restTable
	icebergJSON(t, srv, tok, http.MethodGet, crashTablePath, "", http.StatusOK, &lt)
	return lt
}

// commitTableREST commits body to the table and returns the new
// metadata location.
func commitTableREST(t *testing.T, srv *server, tok, body string) string {
	t.Helper()
	var lt restTable
	icebergJSON(t, srv, tok, http.MethodPost, crashTablePath, body, http.StatusOK, &lt)
	return lt.MetadataLocation
}
