package integration

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// The web console end to end (issue 19): the built binary serves
// /console/, headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core from npm) signs in, creates a bucket, uploads with a
// progress bar, browses by prefix, downloads, deletes, reads a table's
// snapshots and materializes a test warehouse's cutover. The scenarios are
// integration/console/console.mjs; this test sets the server up, runs the
// script, and checks what it did through the other faces.
//
// CAIRN_PLAYWRIGHT names the directory whose node_modules holds
// playwright-core (make test installs it there, outside the repository);
// screenshots go to CAIRN_ARTIFACTS (default /tmp/cairn-artifacts)/console
// and are listed in the test log.

const (
	// consoleScriptTimeout bounds the browser script as a whole.
	consoleScriptTimeout = 5 * time.Minute
	consoleChromium      = "/usr/bin/chromium"
	consoleWarehouse     = "lake-console"
	consoleCutWarehouse  = "lake-cut"
)

// requireConsoleBrowser returns the playwright-core directory, or skips
// the test saying what is missing and how to get it.
func requireConsoleBrowser(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CAIRN_PLAYWRIGHT")
	switch {
	case dir == "":
		t.Skip("CAIRN_PLAYWRIGHT is not set: `make test` installs playwright-core (integration/console/package-lock.json) and sets it")
	case !fileExists(filepath.Join(dir, "node_modules", "playwright-core", "package.json")):
		t.Skipf("CAIRN_PLAYWRIGHT=%s holds no node_modules/playwright-core: run `make console-deps`", dir)
	case !fileExists(consoleChromium):
		t.Skipf("%s is missing: install Debian's chromium (make deps)", consoleChromium)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not on PATH: install Debian's nodejs (make deps)")
	}
	return dir
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// consoleArtifacts is the screenshot directory, emptied for this run.
func consoleArtifacts(t *testing.T) string {
	t.Helper()
	base := os.Getenv("CAIRN_ARTIFACTS")
	if base == "" {
		base = filepath.Join(os.TempDir(), "cairn-artifacts")
	}
	dir := filepath.Join(base, "console")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatalf("empty %s: %v", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("create %s: %v", dir, err)
	}
	return dir
}

// consoleTable creates warehouse/sales.events with iceberg-go and appends
// rows twice, and returns the ids of its snapshots.
func consoleTable(t *testing.T, s *server) []int64 {
	t.Helper()
	cfWant(t, s, http.MethodPut, "/_cairn/admin/v1/table-buckets/"+consoleWarehouse, "", http.StatusOK, nil)
	cat, err := rest.NewCatalog(icebergCtx(t), "cairn", s.url("/iceberg"),
		rest.WithWarehouseLocation(consoleWarehouse),
		rest.WithCredential(s3User+":"+s3Secret),
		rest.WithAdditionalProps(icebergFileIOProps(s)))
	if err != nil {
		t.Fatalf("rest.NewCatalog: %v", err)
	}
	t.Cleanup(func() { _ = cat.Close() })
	if err := cat.CreateNamespace(icebergCtx(t), table.Identifier{"sales"}, nil); err != nil {
		t.Fatalf("CreateNamespace sales: %v", err)
	}
	tbl, err := cat.CreateTable(icebergCtx(t), table.Identifier{"sales", "events"}, eventSchema)
	if err != nil {
		t.Fatalf("CreateTable sales.events: %v", err)
	}
	for i, rows := range [][]eventRow{makeRows(0, 40, "first"), makeRows(40, 25, "second")} {
		if tbl, err = tbl.AppendTable(icebergCtx(t), arrowTable(t, tbl.Schema(), rows, 16), 16, nil); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	var ids []int64
	for _, sn := range tbl.Metadata().Snapshots() {
		ids = append(ids, sn.SnapshotID)
	}
	if len(ids) != 2 {
		t.Fatalf("sales.events has %d snapshots after two appends, want 2", len(ids))
	}
	return ids
}

// consoleStep is one line of the script's JSON output.
type consoleStep struct {
	Step         string   `json:"step"`
	Screenshot   string   `json:"screenshot"`
	UploadEvents int      `json:"upload_events"`
	Percents     []int    `json:"percents"`
	Error        string   `json:"error"`
	Download     string   `json:"download"`
	Snapshots    []string `json:"snapshots,omitempty"`
	Downloads    []string `json:"downloads,omitempty"`
	Evil         []string `json:"evil,omitempty"`
}

const (
	// consoleDotBucket holds the keys with dot segments.
	consoleDotBucket = "console-dots"
	// consoleDotUser is the user that ../../admin/... keys point at.
	consoleDotUser = "dotvictim"
)

// consoleDotKeys are keys whose . and .. segments a browser would resolve
// if they were in a URL path: into victim, or into the admin API's user
// consoleDotUser.
var consoleDotKeys = [...]string{
	"x/../victim",
	"../../admin/v1/users/" + consoleDotUser,
	"../../admin/users/" + consoleDotUser,
	"./victim",
}

// consoleEvilUsers are the users the stored documents try to create, by
// document content type.
var consoleEvilUsers = [...]struct{ user, contentType, key, body string }{
	{"evil", "text/html", "evil.html", `<!doctype html><html><body><script>
fetch('/console/api/admin?cairn-path=%2Fusers%2Fevil', {method: 'PUT', credentials: 'same-origin',
  headers: {'X-Cairn-Console': '1', 'Content-Type': 'application/json'},
  body: JSON.stringify({secret_key: 'evilsecret123', policy: 'readwrite'})})
  .then((r) => console.log('cairn-evil html ' + r.status), (e) => console.log('cairn-evil html error ' + e));
</script></body></html>`},
	{"evilsvg", "image/svg+xml", "evil.svg", `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script type="text/javascript"><![CDATA[
fetch('/console/api/admin?cairn-path=%2Fusers%2Fevilsvg', {method: 'PUT', credentials: 'same-origin',
  headers: {'X-Cairn-Console': '1', 'Content-Type': 'application/json'},
  body: JSON.stringify({secret_key: 'evilsecret123', policy: 'readwrite'})})
  .then((r) => console.log('cairn-evil svg ' + r.status), (e) => console.log('cairn-evil svg error ' + e));
]]></script></svg>`},
}

// consoleUsers lists the users' access keys over the admin API.
func consoleUsers(t *testing.T, s *server) []string {
	t.Helper()
	var res struct {
		Users []struct {
			AccessKey string `json:"access_key"`
		} `json:"users"`
	}
	cfWant(t, s, http.MethodGet, "/_cairn/admin/v1/users", "", http.StatusOK, &res)
	var keys []string
	for _, u := range res.Users {
		keys = append(keys, u.AccessKey)
	}
	return keys
}

// consoleDotObjects creates consoleDotBucket with victim and the dot keys
// (each holding its own name), the user consoleDotUser, and the stored
// documents; it returns the documents' presigned URLs as JSON.
func consoleDotObjects(t *testing.T, s *server) (evilURLs string) {
	t.Helper()
	c := sdkClient(s, s3User, s3Secret)
	ctx := icebergCtx(t)
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(consoleDotBucket)}); err != nil {
		t.Fatalf("CreateBucket %s: %v", consoleDotBucket, err)
	}
	for _, k := range append([]string{"victim"}, consoleDotKeys[:]...) {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(consoleDotBucket), Key: aws.String(k), Body: strings.NewReader("the object " + k)}); err != nil {
			t.Fatalf("PutObject %q: %v", k, err)
		}
	}
	cfWant(t, s, http.MethodPut, "/_cairn/admin/v1/users/"+consoleDotUser, `{"secret_key":"dotvictimsecret","policy":"readonly"}`, http.StatusOK, nil)
	pc := s3.NewPresignClient(c)
	var urls []string
	for _, e := range consoleEvilUsers {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(consoleDotBucket), Key: aws.String(e.key), ContentType: aws.String(e.contentType), Body: strings.NewReader(e.body)}); err != nil {
			t.Fatalf("PutObject %s: %v", e.key, err)
		}
		p, err := pc.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(consoleDotBucket), Key: aws.String(e.key)}, s3.WithPresignExpires(time.Hour))
		if err != nil {
			t.Fatalf("PresignGetObject %s: %v", e.key, err)
		}
		urls = append(urls, p.URL)
	}
	b, err := json.Marshal(urls)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestConsoleBrowser(t *testing.T) {
	pw := requireConsoleBrowser(t)
	s := cfStart(t, t.TempDir(), cfEnv{})
	defer cfStop(t, s)
	snapshots := consoleTable(t, s)
	cfMakeWarehouse(t, s, consoleCutWarehouse)
	artifacts := consoleArtifacts(t)
	evilURLs := consoleDotObjects(t, s)
	dotKeys, err := json.Marshal(consoleDotKeys)
	if err != nil {
		t.Fatal(err)
	}

	// A few MiB of random bytes, so the upload reports progress more than
	// once and a wrong byte anywhere shows.
	work := t.TempDir()
	big := make([]byte, 6<<20+123)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	bigPath := filepath.Join(work, "big.bin")
	notes := []byte("notes of the console test\n")
	notesPath := filepath.Join(work, "notes.txt")
	for p, b := range map[string][]byte{bigPath: big, notesPath: notes} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root, err := repoRoot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(snapshots))
	for i, id := range snapshots {
		ids[i] = strconv.FormatInt(id, 10)
	}

	ctx, cancel := context.WithTimeout(context.Background(), consoleScriptTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(root, "integration", "console", "console.mjs"))
	cmd.Env = append(os.Environ(),
		"CAIRN_PLAYWRIGHT="+pw,
		"CAIRN_CHROMIUM="+consoleChromium,
		"CAIRN_URL="+s.url("/console/"),
		"CAIRN_ACCESS_KEY="+s3User,
		"CAIRN_SECRET_KEY="+s3Secret,
		"CAIRN_ARTIFACTS_DIR="+artifacts,
		"CONSOLE_WORK="+work,
		"CONSOLE_BUCKET=console-photos",
		"CONSOLE_BIG="+bigPath,
		"CONSOLE_NOTES="+notesPath,
		"CONSOLE_WAREHOUSE="+consoleWarehouse,
		"CONSOLE_SNAPSHOTS="+strings.Join(ids, ","),
		"CONSOLE_CUT_WAREHOUSE="+consoleCutWarehouse,
		"CONSOLE_DOT_BUCKET="+consoleDotBucket,
		"CONSOLE_DOT_KEYS="+string(dotKeys),
		"CONSOLE_EVIL_URLS="+evilURLs,
	)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("node console.mjs: %v", err)
	}
	var steps []consoleStep
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var st consoleStep
		if err := json.Unmarshal(sc.Bytes(), &st); err != nil {
			t.Logf("console.mjs: %s", sc.Text())
			continue
		}
		steps = append(steps, st)
		if st.Screenshot != "" {
			t.Logf("screenshot %-28s %s", st.Step, st.Screenshot)
		}
	}
	werr := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("console.mjs still running after %v\nstderr:\n%s", consoleScriptTimeout, stderr.String())
	}
	var failed []string
	for _, st := range steps {
		if st.Error != "" {
			failed = append(failed, fmt.Sprintf("%s: %s", st.Step, st.Error))
		}
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		t.Fatalf("console.mjs: %v", werr)
	}
	if werr != nil || len(failed) > 0 {
		t.Fatalf("console.mjs failed (%v):\n%s\nstderr:\n%s", werr, strings.Join(failed, "\n"), tail(stderr.String(), 40))
	}
	byStep := map[string]consoleStep{}
	for _, st := range steps {
		byStep[st.Step] = st
	}
	for _, want := range []string{"wrong-secret", "signed-in", "bucket-created", "uploaded", "browse-prefix", "downloaded", "deleted", "dot-keys", "stored-documents", "snapshots", "materialize-confirm", "materialized", "signed-out"} {
		if _, ok := byStep[want]; !ok {
			t.Errorf("console.mjs never reported step %q", want)
		}
	}

	// Upload: progress events were seen and the bar went up to 100%.
	up := byStep["uploaded"]
	t.Logf("upload of %d bytes: %d progress events, the bar showed %v%%", len(big), up.UploadEvents, up.Percents)
	if up.UploadEvents < 1 || len(up.Percents) == 0 || up.Percents[len(up.Percents)-1] != 100 {
		t.Errorf("upload progress: %d events, percents %v; want events and a last percent of 100", up.UploadEvents, up.Percents)
	}
	// Download: the bytes saved by the browser are the file uploaded.
	got, err := os.ReadFile(byStep["downloaded"].Download)
	if err != nil {
		t.Fatalf("read the download: %v", err)
	}
	if !bytes.Equal(got, big) {
		t.Errorf("downloaded %d bytes, uploaded %d: they differ", len(got), len(big))
	}
	// What the console did, seen over S3: big.bin deleted, docs/notes.txt kept.
	c := sdkClient(s, s3User, s3Secret)
	if _, err := c.HeadObject(icebergCtx(t), &s3.HeadObjectInput{Bucket: aws.String("console-photos"), Key: aws.String("big.bin")}); err == nil {
		t.Errorf("big.bin is still there after the console deleted it")
	}
	o, err := c.GetObject(icebergCtx(t), &s3.GetObjectInput{Bucket: aws.String("console-photos"), Key: aws.String("docs/notes.txt")})
	if err != nil {
		t.Fatalf("GetObject docs/notes.txt (uploaded in the console): %v", err)
	}
	var nb bytes.Buffer
	_, err = nb.ReadFrom(o.Body)
	_ = o.Body.Close()
	if err != nil || !bytes.Equal(nb.Bytes(), notes) {
		t.Errorf("docs/notes.txt = %q (%v), want %q", nb.Bytes(), err, notes)
	}
	// Snapshots: the page listed exactly the table's snapshots.
	// (as decimal strings: the ids are 64-bit, beyond a JavaScript number).
	if got, want := slices.Sorted(slices.Values(byStep["snapshots"].Snapshots)), slices.Sorted(slices.Values(ids)); !slices.Equal(got, want) {
		t.Errorf("the console listed snapshots %v, the table has %v", got, want)
	}
	// Materialize: the warehouse is fenced, seen over the catalog API.
	st := cfStatus(t, s, consoleCutWarehouse)
	if st.Fence == nil || st.Fence.Status != "MATERIALIZED" {
		t.Errorf("%s after the console's materialize: fence %+v, want MATERIALIZED", consoleCutWarehouse, st.Fence)
	}
	if st := cfStatus(t, s, consoleWarehouse); st.Fence != nil {
		t.Errorf("%s was not materialized but has fence %+v", consoleWarehouse, st.Fence)
	}
	consoleCheckDots(t, s, byStep["dot-keys"].Downloads)
	consoleCheckStored(t, s, byStep["stored-documents"].Evil)
	t.Logf("screenshots in %s", artifacts)
}

// consoleCheckDots: the console downloaded each dot key's own bytes and
// deleted exactly the dot keys: victim and the user are still there.
func consoleCheckDots(t *testing.T, s *server, downloads []string) {
	t.Helper()
	if len(downloads) != len(consoleDotKeys) {
		t.Fatalf("dot-keys downloaded %d files, want %d", len(downloads), len(consoleDotKeys))
	}
	for i, k := range consoleDotKeys {
		got, err := os.ReadFile(downloads[i])
		if err != nil {
			t.Fatalf("read the download of %q: %v", k, err)
		}
		if want := "the object " + k; string(got) != want {
			t.Errorf("the console's download of %q holds %q, want %q", k, got, want)
		}
	}
	c := sdkClient(s, s3User, s3Secret)
	for _, k := range consoleDotKeys {
		if _, err := c.HeadObject(icebergCtx(t), &s3.HeadObjectInput{Bucket: aws.String(consoleDotBucket), Key: aws.String(k)}); err == nil {
			t.Errorf("%q is still there after the console deleted it", k)
		}
	}
	o, err := c.GetObject(icebergCtx(t), &s3.GetObjectInput{Bucket: aws.String(consoleDotBucket), Key: aws.String("victim")})
	if err != nil {
		t.Fatalf("victim is gone after the console deleted the dot keys: %v", err)
	}
	var b bytes.Buffer
	_, err = b.ReadFrom(o.Body)
	_ = o.Body.Close()
	if err != nil || b.String() != "the object victim" {
		t.Errorf("victim holds %q (%v) after the console deleted the dot keys", b.String(), err)
	}
	if users := consoleUsers(t, s); !slices.Contains(users, consoleDotUser) {
		t.Errorf("user %s is gone after the console deleted keys naming it (users %v)", consoleDotUser, users)
	}
}

// consoleCheckStored: the stored documents opened in the signed-in
// browser created no user. evil is what their scripts logged (a script
// that ran logs its fetch's status; "none" when nothing ran).
func consoleCheckStored(t *testing.T, s *server, evil []string) {
	t.Helper()
	t.Logf("stored documents logged %q", evil)
	users := consoleUsers(t, s)
	for _, e := range consoleEvilUsers {
		if slices.Contains(users, e.user) {
			t.Errorf("a stored %s document (%s) opened in the signed-in browser created user %s through the console (it logged %q): the S3 face must serve it sandboxed", e.contentType, e.key, e.user, evil)
		}
	}
}

// TestConsoleOff: `serve --no-console` leaves /console/ to S3 (an
// anonymous request for a bucket named console), and the console answers
// without the flag.
func TestConsoleOff(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flags []string
		want  bool // the console's page is served
	}{
		{"default", nil, true},
		{"no-console", []string{"--no-console"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, t.TempDir(), tc.flags...)
			s.waitReady(readyTimeout)
			resp, err := http.Get(s.url("/console/"))
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			_, err = b.ReadFrom(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			served := resp.StatusCode == http.StatusOK && strings.Contains(b.String(), "<title>Cairn console</title>")
			if served != tc.want {
				t.Errorf("GET /console/ with %v: %d %.200q; console served %v, want %v", tc.flags, resp.StatusCode, b.String(), served, tc.want)
			}
			if code := s.stop(stopTimeout); code != 0 {
				t.Errorf("exit %d after SIGTERM", code)
			}
		})
	}
}
