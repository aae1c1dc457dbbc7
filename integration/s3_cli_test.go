package integration

// End-to-end tests of the S3 face with real, independently written clients:
// the AWS CLI, boto3, rclone and s3cmd, each run as a process against a
// `cairn serve` on a loopback port. `make deps` installs them (Debian's
// awscli, python3-boto3, rclone, s3cmd); a test whose client is missing is
// skipped and says which.
//
// A case that fails because of a known server bug skips itself with
// "BUG: ..." when (and only when) it sees that bug's exact symptom, so it
// turns green by itself once the server is fixed.

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// Root credentials of the servers these tests start.
const (
	cliUser   = "cli-test-root"
	cliSecret = "cli-test-root-secret-key"
	cliRegion = "us-east-1"
	// cliCmdTimeout bounds every client process.
	cliCmdTimeout = 2 * time.Minute
	cliMiB        = 1 << 20
)

// Known interop bugs, as the skip messages of the cases that hit them.
const (
	bugExpectEmpty = "BUG (interop): a PUT with Expect: 100-continue and Content-Length: 0 gets its " +
		"final response with no 100 Continue first, on a kept-alive connection. botocore (" +
		"1.29.27 as in Debian 12 and 1.43.11 alike; boto/botocore#3755) then parses the next response on that connection against " +
		"the stale status line and stalls until its read timeout (60 s by default, then a silent " +
		"retry). So `aws s3 sync` of a tree holding an empty file, or boto3 put_object(Body=b\"\") " +
		"followed by another PUT, stalls. The server should answer 100 Continue before the final " +
		"response whenever a request carries Expect: 100-continue (even with an empty body), or " +
		"close the connection after such a response."
)

// cliServer is a cairn serve for client tests, with the clients' settings.
type cliServer struct {
	*server
	endpoint string
	dir      string // per-test scratch for client config files
}

// startCLIServer starts cairn serve with known root credentials (passed
// through the environment the child inherits, so tests using it must not be
// parallel) and debug logging, whose access log the failure output shows.
func startCLIServer(t *testing.T) *cliServer {
	t.Helper()
	t.Setenv("CAIRN_ROOT_USER", cliUser)
	t.Setenv("CAIRN_ROOT_PASSWORD", cliSecret)
	s := startServer(t, t.TempDir(), "--log-level", "debug")
	s.waitReady(readyTimeout)
	return &cliServer{server: s, endpoint: s.url(""), dir: t.TempDir()}
}

// cliBaseEnv is the environment of every client process: this process's,
// minus anything that could point a client elsewhere (AWS_*, RCLONE_*,
// proxies, CA bundles), plus a UTF-8 locale.
func cliBaseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		switch {
		case strings.HasPrefix(upper, "AWS_"), strings.HasPrefix(upper, "RCLONE_"),
			strings.HasPrefix(upper, "BOTO"), strings.HasPrefix(upper, "S3CMD"),
			strings.HasSuffix(upper, "_PROXY"), strings.HasSuffix(upper, "CA_BUNDLE"),
			upper == "LC_ALL", upper == "LANG", upper == "PYTHONIOENCODING":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C.UTF-8", "LANG=C.UTF-8", "PYTHONIOENCODING=utf-8",
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
}

// awsEnv is the environment of aws and boto3: the server's credentials and
// config files in the test's scratch directory, never ~/.aws.
func (s *cliServer) awsEnv(t *testing.T) []string {
	t.Helper()
	config := filepath.Join(s.dir, "aws-config")
	creds := filepath.Join(s.dir, "aws-credentials")
	cliWrite(t, config, "[default]\nregion = "+cliRegion+"\ns3 =\n    addressing_style = path\n")
	cliWrite(t, creds, "")
	return append(cliBaseEnv(),
		"AWS_ACCESS_KEY_ID="+cliUser,
		"AWS_SECRET_ACCESS_KEY="+cliSecret,
		"AWS_DEFAULT_REGION="+cliRegion,
		"AWS_REGION="+cliRegion,
		"AWS_CONFIG_FILE="+config,
		"AWS_SHARED_CREDENTIALS_FILE="+creds,
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_PAGER=",
		// No client retries: a failed request fails the test.
		"AWS_MAX_ATTEMPTS=1",
		"AWS_RETRY_MODE=standard",
	)
}

// cliResult is how a client process ended.
type cliResult struct {
	code           int
	stdout, stderr string
}

func (r cliResult) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// cliRun runs a client to completion, bounded by cliCmdTimeout, in dir.
func cliRun(t *testing.T, env []string, dir, bin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), cliCmdTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = env, dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: still running after %v\nstdout:\n%s\nstderr:\n%s", bin, strings.Join(args, " "), cliCmdTimeout, stdout.String(), stderr.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s %s: %v", bin, strings.Join(args, " "), err)
	}
	return cliResult{code: cmd.ProcessState.ExitCode(), stdout: stdout.String(), stderr: stderr.String()}
}

// cliMust runs a client and fails the test unless it exits 0.
func cliMust(t *testing.T, env []string, dir, bin string, args ...string) cliResult {
	t.Helper()
	r := cliRun(t, env, dir, bin, args...)
	if r.code != 0 {
		t.Fatalf("%s %s: %s", filepath.Base(bin), strings.Join(args, " "), r)
	}
	return r
}

// cliFind returns the client binary, preferring Debian's under /usr/bin
// (what CI has after make deps), else the one on PATH; or skips the test.
func cliFind(t *testing.T, name, pkg string) string {
	t.Helper()
	if p := "/usr/bin/" + name; cliExecutable(p) {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	t.Skipf("SKIP: %s not found: install Debian's %s (make deps) to run this test", name, pkg)
	return ""
}

func cliExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// cliSkipOnBug skips the test with msg when out shows the bug's symptom.
func cliSkipOnBug(t *testing.T, out, symptom, msg string) {
	t.Helper()
	if strings.Contains(out, symptom) {
		t.Skipf("%s\nclient output:\n%s", msg, out)
	}
}

func cliWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cliRandom returns n reproducible pseudo-random bytes.
func cliRandom(seed uint64, n int) []byte {
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(key).Read(b)
	return b
}

func cliMD5(b []byte) string { s := md5.Sum(b); return hex.EncodeToString(s[:]) }

// cliTree writes a small directory tree with awkward names and returns the
// relative paths (slash-separated) to their contents.
// With empty, one of the files is empty.
func cliTree(t *testing.T, dir string, empty bool) map[string][]byte {
	t.Helper()
	files := map[string][]byte{
		"a.txt":                         []byte("alpha\n"),
		"b.bin":                         cliRandom(1, 70_000),
		"sub/c.txt":                     []byte("gamma\n"),
		"sub/deeper/d.bin":              cliRandom(2, 1234),
		"sub/name with spaces+plus.txt": []byte("spaces and a plus\n"),
		"unicodé/ü-€.txt":               []byte("unicode\n"),
	}
	if empty {
		files["empty"] = []byte{}
	}
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// cliReadTree reads every regular file under dir.
func cliReadTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		got[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatalf("read tree %s: %v", dir, err)
	}
	return got
}

// cliSameTree fails unless got holds exactly want.
func cliSameTree(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for rel, data := range want {
		g, ok := got[rel]
		switch {
		case !ok:
			t.Errorf("%s: %s missing", what, rel)
		case !bytes.Equal(g, data):
			t.Errorf("%s: %s differs (%d bytes, want %d)", what, rel, len(g), len(data))
		}
	}
	for rel := range got {
		if _, ok := want[rel]; !ok {
			t.Errorf("%s: unexpected %s", what, rel)
		}
	}
}

// ---------------------------------------------------------------- aws CLI

// awsCLI runs `aws --endpoint-url <server>` commands.
type awsCLI struct {
	s   *cliServer
	bin string
	env []string
	dir string
}

func newAWSCLI(t *testing.T, s *cliServer) *awsCLI {
	bin := cliFind(t, "aws", "awscli")
	a := &awsCLI{s: s, bin: bin, env: s.awsEnv(t), dir: t.TempDir()}
	r := cliMust(t, a.env, a.dir, bin, "--version")
	t.Logf("using %s: %s", bin, strings.TrimSpace(r.stdout+r.stderr))
	return a
}

func (a *awsCLI) args(args []string) []string {
	return append([]string{"--endpoint-url", a.s.endpoint, "--no-cli-pager"}, args...)
}

// run runs aws and returns its result whatever the exit code.
func (a *awsCLI) run(t *testing.T, args ...string) cliResult {
	t.Helper()
	return cliRun(t, a.env, a.dir, a.bin, a.args(args)...)
}

// must runs aws and fails unless it exits 0.
func (a *awsCLI) must(t *testing.T, args ...string) string {
	t.Helper()
	return cliMust(t, a.env, a.dir, a.bin, a.args(args)...).stdout
}

// json runs aws (JSON output) and decodes its stdout into v.
func (a *awsCLI) json(t *testing.T, v any, args ...string) {
	t.Helper()
	out := a.must(t, append(args, "--output", "json")...)
	if strings.TrimSpace(out) == "" {
		out = "{}" // the CLI prints nothing for an empty answer
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("aws %s: decode %q: %v", strings.Join(args, " "), out, err)
	}
}

// fails runs aws, expects a failure, and checks stderr names the error.
func (a *awsCLI) fails(t *testing.T, want string, args ...string) {
	t.Helper()
	r := a.run(t, args...)
	if r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Fatalf("aws %s: want a failure mentioning %q, got %s", strings.Join(args, " "), want, r)
	}
}

func (a *awsCLI) file(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(a.dir, name)
	cliWrite(t, p, string(data))
	return p
}

type awsHead struct {
	ContentLength int64
	ETag          string
	ContentType   string
	ContentRange  string
	VersionId     string
	Metadata      map[string]string
}

type awsListV2 struct {
	Contents []struct {
		Key  string
		Size int64
		ETag string
	}
	CommonPrefixes []struct{ Prefix string }
}

func TestCLIAws(t *testing.T) {
	s := startCLIServer(t)
	a := newAWSCLI(t, s)

	t.Run("objects", func(t *testing.T) {
		a.must(t, "s3", "mb", "s3://aws-objects")
		hello := a.file(t, "hello.txt", []byte("hello, aws cli\n"))
		var put struct{ ETag string }
		a.json(t, &put, "s3api", "put-object", "--bucket", "aws-objects", "--key", "dir/hello.txt",
			"--body", hello, "--content-type", "text/plain")
		if want := `"` + cliMD5([]byte("hello, aws cli\n")) + `"`; put.ETag != want {
			t.Errorf("put-object ETag %s, want %s", put.ETag, want)
		}
		var h awsHead
		a.json(t, &h, "s3api", "head-object", "--bucket", "aws-objects", "--key", "dir/hello.txt")
		if h.ContentLength != 15 || h.ETag != put.ETag || h.ContentType != "text/plain" {
			t.Errorf("head-object %+v", h)
		}
		out := filepath.Join(a.dir, "hello.out")
		a.json(t, &h, "s3api", "get-object", "--bucket", "aws-objects", "--key", "dir/hello.txt", out)
		if got, _ := os.ReadFile(out); string(got) != "hello, aws cli\n" {
			t.Errorf("get-object body %q", got)
		}
		a.json(t, &h, "s3api", "get-object", "--bucket", "aws-objects", "--key", "dir/hello.txt", "--range", "bytes=7-9", out)
		if got, _ := os.ReadFile(out); string(got) != "aws" || h.ContentRange != "bytes 7-9/15" {
			t.Errorf("ranged get-object: body %q, ContentRange %q", got, h.ContentRange)
		}
		for _, k := range []string{"dir/a", "dir/b", "dir/sub/c", "top"} {
			a.must(t, "s3api", "put-object", "--bucket", "aws-objects", "--key", k, "--body", hello)
		}
		// --page-size 1 makes the CLI follow continuation tokens.
		var l awsListV2
		a.json(t, &l, "s3api", "list-objects-v2", "--bucket", "aws-objects", "--prefix", "dir/", "--delimiter", "/", "--page-size", "1")
		var keys, prefixes []string
		for _, c := range l.Contents {
			keys = append(keys, c.Key)
		}
		for _, p := range l.CommonPrefixes {
			prefixes = append(prefixes, p.Prefix)
		}
		if !slices.Equal(keys, []string{"dir/a", "dir/b", "dir/hello.txt"}) || !slices.Equal(prefixes, []string{"dir/sub/"}) {
			t.Errorf("list-objects-v2 dir/ with /: keys %q prefixes %q", keys, prefixes)
		}
		ls := a.must(t, "s3", "ls", "s3://aws-objects/dir/")
		if !strings.Contains(ls, "PRE sub/") || !strings.Contains(ls, " hello.txt") {
			t.Errorf("s3 ls:\n%s", ls)
		}
		a.must(t, "s3", "rm", "--only-show-errors", "s3://aws-objects/dir/hello.txt")
		a.fails(t, "404", "s3api", "head-object", "--bucket", "aws-objects", "--key", "dir/hello.txt")
		a.fails(t, "NoSuchKey", "s3api", "get-object", "--bucket", "aws-objects", "--key", "dir/hello.txt", out)
		a.fails(t, "NoSuchBucket", "s3api", "list-objects-v2", "--bucket", "aws-no-such-bucket")
		a.must(t, "s3", "rm", "--recursive", "--only-show-errors", "s3://aws-objects/")
		a.must(t, "s3", "rb", "s3://aws-objects")
	})

	t.Run("metadata", func(t *testing.T) {
		a.must(t, "s3", "mb", "s3://aws-metadata")
		a.must(t, "s3api", "put-object", "--bucket", "aws-metadata", "--key", "m", "--body", a.file(t, "m", []byte("m")),
			"--metadata", "colour=blue,shape=round", "--cache-control", "max-age=60")
		var h struct {
			Metadata     map[string]string
			CacheControl string
		}
		a.json(t, &h, "s3api", "head-object", "--bucket", "aws-metadata", "--key", "m")
		// Names were sent as X-Amz-Meta-Colour (the CLI showed "Colour") until 7360a8b.
		if h.CacheControl != "max-age=60" {
			t.Errorf("head-object CacheControl %q", h.CacheControl)
		}
		if want := map[string]string{"colour": "blue", "shape": "round"}; fmt.Sprint(h.Metadata) != fmt.Sprint(want) {
			t.Errorf("head-object Metadata %v, want %v", h.Metadata, want)
		}
	})

	t.Run("cp-20MiB", func(t *testing.T) {
		a.must(t, "s3", "mb", "s3://aws-large")
		data := cliRandom(20, 20*cliMiB)
		src := a.file(t, "large.bin", data)
		// The CLI's defaults: multipart above 8 MiB, in 8 MiB parts.
		a.must(t, "s3", "cp", "--no-progress", "--only-show-errors", src, "s3://aws-large/large.bin")
		var h awsHead
		a.json(t, &h, "s3api", "head-object", "--bucket", "aws-large", "--key", "large.bin")
		if h.ContentLength != int64(len(data)) || !strings.HasSuffix(h.ETag, `-3"`) {
			t.Errorf("head-object after a 20 MiB s3 cp: %+v (want a 3-part multipart ETag)", h)
		}
		dst := filepath.Join(a.dir, "large.out")
		a.must(t, "s3", "cp", "--no-progress", "--only-show-errors", "s3://aws-large/large.bin", dst)
		got, err := os.ReadFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(got) != sha256.Sum256(data) {
			t.Fatalf("downloaded 20 MiB object differs (%d bytes)", len(got))
		}
	})

	t.Run("sync", func(t *testing.T) {
		a.must(t, "s3", "mb", "s3://aws-sync")
		up := filepath.Join(a.dir, "sync-up")
		want := cliTree(t, up, false)
		a.must(t, "s3", "sync", "--no-progress", "--only-show-errors", up, "s3://aws-sync/tree/")
		var l awsListV2
		a.json(t, &l, "s3api", "list-objects-v2", "--bucket", "aws-sync", "--prefix", "tree/")
		if len(l.Contents) != len(want) {
			t.Errorf("after sync up: %d objects, want %d", len(l.Contents), len(want))
		}
		down := filepath.Join(a.dir, "sync-down")
		a.must(t, "s3", "sync", "--no-progress", "--only-show-errors", "s3://aws-sync/tree/", down)
		cliSameTree(t, "sync down", cliReadTree(t, down), want)
		// A second sync has nothing to do.
		if out := a.must(t, "s3", "sync", "--no-progress", up, "s3://aws-sync/tree/"); strings.TrimSpace(out) != "" {
			t.Errorf("second sync up did something:\n%s", out)
		}
		// Change, add and delete locally; sync --delete up, then down.
		cliWrite(t, filepath.Join(up, "a.txt"), "alpha, changed and longer\n")
		cliWrite(t, filepath.Join(up, "new/e.txt"), "epsilon\n")
		if err := os.Remove(filepath.Join(up, "sub", "c.txt")); err != nil {
			t.Fatal(err)
		}
		want = cliReadTree(t, up)
		a.must(t, "s3", "sync", "--delete", "--no-progress", "--only-show-errors", up, "s3://aws-sync/tree/")
		a.must(t, "s3", "sync", "--delete", "--no-progress", "--only-show-errors", "s3://aws-sync/tree/", down)
		cliSameTree(t, "sync --delete down", cliReadTree(t, down), want)
	})

	t.Run("sync-empty-file", func(t *testing.T) {
		a.must(t, "s3", "mb", "s3://aws-sync-empty")
		up := filepath.Join(a.dir, "sync-empty-up")
		want := cliTree(t, up, true)
		// A short read timeout shows the stall of bugExpectEmpty quickly.
		r := a.run(t, "s3", "sync", "--cli-read-timeout", "10", "--no-progress", "--only-show-errors", up, "s3://aws-sync-empty/tree/")
		if r.code != 0 {
			cliSkipOnBug(t, r.stderr, "Read timeout on endpoint URL", bugExpectEmpty)
			t.Fatalf("s3 sync of a tree with an empty file: %s", r)
		}
		down := filepath.Join(a.dir, "sync-empty-down")
		a.must(t, "s3", "sync", "--no-progress", "--only-show-errors", "s3://aws-sync-empty/tree/", down)
		cliSameTree(t, "sync down", cliReadTree(t, down), want)
	})

	t.Run("multipart", func(t *testing.T) {
		a.must(t, "s3", "mb", "s3://aws-multipart")
		var create struct{ UploadId string }
		a.json(t, &create, "s3api", "create-multipart-upload", "--bucket", "aws-multipart", "--key", "mp/object")
		if create.UploadId == "" {
			t.Fatal("create-multipart-upload: no UploadId")
		}
		parts := [][]byte{cliRandom(31, 5*cliMiB), cliRandom(32, 5*cliMiB), cliRandom(33, 123_456)}
		type part struct {
			PartNumber int
			ETag       string
		}
		var done []part
		var sums []byte
		for i, data := range parts {
			var up struct{ ETag string }
			a.json(t, &up, "s3api", "upload-part", "--bucket", "aws-multipart", "--key", "mp/object",
				"--upload-id", create.UploadId, "--part-number", fmt.Sprint(i+1), "--body", a.file(t, fmt.Sprintf("part%d", i+1), data))
			if want := `"` + cliMD5(data) + `"`; up.ETag != want {
				t.Errorf("upload-part %d ETag %s, want %s", i+1, up.ETag, want)
			}
			done = append(done, part{i + 1, up.ETag})
			s := md5.Sum(data)
			sums = append(sums, s[:]...)
		}
		var uploads struct {
			Uploads []struct{ Key, UploadId string }
		}
		a.json(t, &uploads, "s3api", "list-multipart-uploads", "--bucket", "aws-multipart")
		if len(uploads.Uploads) != 1 || uploads.Uploads[0].UploadId != create.UploadId || uploads.Uploads[0].Key != "mp/object" {
			t.Errorf("list-multipart-uploads: %+v", uploads)
		}
		var listed struct{ Parts []part }
		a.json(t, &listed, "s3api", "list-parts", "--bucket", "aws-multipart", "--key", "mp/object", "--upload-id", create.UploadId)
		if fmt.Sprint(listed.Parts) != fmt.Sprint(done) {
			t.Errorf("list-parts %v, want %v", listed.Parts, done)
		}
		spec, _ := json.Marshal(map[string]any{"Parts": done})
		var complete struct{ ETag, Key string }
		a.json(t, &complete, "s3api", "complete-multipart-upload", "--bucket", "aws-multipart", "--key", "mp/object",
			"--upload-id", create.UploadId, "--multipart-upload", "file://"+a.file(t, "complete.json", spec))
		if want := fmt.Sprintf(`"%s-3"`, cliMD5(sums)); complete.ETag != want {
			t.Errorf("complete-multipart-upload ETag %s, want %s", complete.ETag, want)
		}
		out := filepath.Join(a.dir, "mp.out")
		a.must(t, "s3api", "get-object", "--bucket", "aws-multipart", "--key", "mp/object", out)
		if got, _ := os.ReadFile(out); !bytes.Equal(got, bytes.Join(parts, nil)) {
			t.Errorf("completed object differs (%d bytes)", len(got))
		}
		// A second upload, aborted.
		a.json(t, &create, "s3api", "create-multipart-upload", "--bucket", "aws-multipart", "--key", "mp/aborted")
		a.must(t, "s3api", "upload-part", "--bucket", "aws-multipart", "--key", "mp/aborted",
			"--upload-id", create.UploadId, "--part-number", "1", "--body", a.file(t, "part1", parts[0]))
		a.must(t, "s3api", "abort-multipart-upload", "--bucket", "aws-multipart", "--key", "mp/aborted", "--upload-id", create.UploadId)
		uploads.Uploads = nil
		a.json(t, &uploads, "s3api", "list-multipart-uploads", "--bucket", "aws-multipart")
		if len(uploads.Uploads) != 0 {
			t.Errorf("list-multipart-uploads after complete and abort: %+v", uploads)
		}
		a.fails(t, "NoSuchUpload", "s3api", "list-parts", "--bucket", "aws-multipart", "--key", "mp/aborted", "--upload-id", create.UploadId)
		a.fails(t, "404", "s3api", "head-object", "--bucket", "aws-multipart", "--key", "mp/aborted")
	})

	t.Run("versioning", func(t *testing.T) {
		a.must(t, "s3", "mb", "s3://aws-versions")
		a.must(t, "s3api", "put-bucket-versioning", "--bucket", "aws-versions", "--versioning-configuration", "Status=Enabled")
		var v struct{ Status string }
		a.json(t, &v, "s3api", "get-bucket-versioning", "--bucket", "aws-versions")
		if v.Status != "Enabled" {
			t.Fatalf("get-bucket-versioning: %+v", v)
		}
		var p1, p2 struct{ VersionId string }
		a.json(t, &p1, "s3api", "put-object", "--bucket", "aws-versions", "--key", "doc", "--body", a.file(t, "v1", []byte("version one")))
		a.json(t, &p2, "s3api", "put-object", "--bucket", "aws-versions", "--key", "doc", "--body", a.file(t, "v2", []byte("version two!")))
		if p1.VersionId == "" || p2.VersionId == "" || p1.VersionId == p2.VersionId {
			t.Fatalf("put-object version ids %q, %q", p1.VersionId, p2.VersionId)
		}
		type version struct {
			Key, VersionId string
			IsLatest       bool
			Size           int64
		}
		var lv struct {
			Versions      []version
			DeleteMarkers []struct {
				Key, VersionId string
				IsLatest       bool
			}
		}
		a.json(t, &lv, "s3api", "list-object-versions", "--bucket", "aws-versions")
		if len(lv.Versions) != 2 || lv.Versions[0].VersionId != p2.VersionId || !lv.Versions[0].IsLatest ||
			lv.Versions[1].VersionId != p1.VersionId || lv.Versions[1].IsLatest || lv.Versions[1].Size != 11 {
			t.Errorf("list-object-versions: %+v", lv)
		}
		out := filepath.Join(a.dir, "v.out")
		a.must(t, "s3api", "get-object", "--bucket", "aws-versions", "--key", "doc", "--version-id", p1.VersionId, out)
		if got, _ := os.ReadFile(out); string(got) != "version one" {
			t.Errorf("get-object --version-id v1: %q", got)
		}
		a.must(t, "s3api", "delete-object", "--bucket", "aws-versions", "--key", "doc")
		a.fails(t, "NoSuchKey", "s3api", "get-object", "--bucket", "aws-versions", "--key", "doc", out)
		lv.Versions, lv.DeleteMarkers = nil, nil
		a.json(t, &lv, "s3api", "list-object-versions", "--bucket", "aws-versions")
		if len(lv.Versions) != 2 || len(lv.DeleteMarkers) != 1 || !lv.DeleteMarkers[0].IsLatest {
			t.Errorf("list-object-versions after delete: %+v", lv)
		}
		a.must(t, "s3api", "get-object", "--bucket", "aws-versions", "--key", "doc", "--version-id", p2.VersionId, out)
		if got, _ := os.ReadFile(out); string(got) != "version two!" {
			t.Errorf("get-object --version-id v2 after delete: %q", got)
		}
	})

	t.Run("lifecycle", func(t *testing.T) {
		a.must(t, "s3", "mb", "s3://aws-lifecycle")
		// The seed's rule (DESIGN.md §3: lifecycle for incomplete uploads).
		rule := `{"Rules":[{"ID":"abort-incomplete-multipart-uploads","Status":"Enabled","Filter":{"Prefix":""},` +
			`"AbortIncompleteMultipartUpload":{"DaysAfterInitiation":3}}]}`
		a.must(t, "s3api", "put-bucket-lifecycle-configuration", "--bucket", "aws-lifecycle", "--lifecycle-configuration", rule)
		var lc struct {
			Rules []struct {
				ID, Status                     string
				Filter                         struct{ Prefix string }
				AbortIncompleteMultipartUpload struct{ DaysAfterInitiation int }
			}
		}
		a.json(t, &lc, "s3api", "get-bucket-lifecycle-configuration", "--bucket", "aws-lifecycle")
		if len(lc.Rules) != 1 || lc.Rules[0].ID != "abort-incomplete-multipart-uploads" || lc.Rules[0].Status != "Enabled" ||
			lc.Rules[0].AbortIncompleteMultipartUpload.DaysAfterInitiation != 3 {
			t.Errorf("get-bucket-lifecycle-configuration: %+v", lc)
		}
		a.must(t, "s3api", "delete-bucket-lifecycle", "--bucket", "aws-lifecycle")
		a.fails(t, "NoSuchLifecycleConfiguration", "s3api", "get-bucket-lifecycle-configuration", "--bucket", "aws-lifecycle")
	})

	t.Run("presign", func(t *testing.T) {
		a.must(t, "s3", "mb", "s3://aws-presign")
		a.must(t, "s3", "cp", "--only-show-errors", a.file(t, "p", []byte("presigned body")), "s3://aws-presign/p r/obj.txt")
		u := strings.TrimSpace(a.must(t, "s3", "presign", "--expires-in", "300", "s3://aws-presign/p r/obj.txt"))
		client := &http.Client{Timeout: 10 * time.Second}
		get := func(u string) (int, string) {
			t.Helper()
			resp, err := client.Get(u)
			if err != nil {
				t.Fatalf("GET presigned URL: %v", err)
			}
			defer func() { _ = resp.Body.Close() }()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		if code, body := get(u); code != http.StatusOK || body != "presigned body" {
			t.Errorf("GET %s: %d %q", u, code, body)
		}
		last := u[len(u)-1]
		tampered := u[:len(u)-1] + map[bool]string{true: "1", false: "0"}[last == '0']
		if code, body := get(tampered); code != http.StatusForbidden || !strings.Contains(body, "<Code>SignatureDoesNotMatch</Code>") {
			t.Errorf("GET with a tampered signature: %d %s", code, body)
		}
	})

	t.Run("checksums", func(t *testing.T) {
		a.must(t, "s3", "mb", "s3://aws-checksums")
		data := cliRandom(40, 3*cliMiB+17)
		src := a.file(t, "ck.bin", data)
		var put struct{ ChecksumCRC32 string }
		a.json(t, &put, "s3api", "put-object", "--bucket", "aws-checksums", "--key", "ck", "--body", src, "--checksum-algorithm", "CRC32")
		if put.ChecksumCRC32 == "" {
			t.Errorf("put-object --checksum-algorithm CRC32 returned no ChecksumCRC32")
		}
		var get struct{ ChecksumCRC32 string }
		out := filepath.Join(a.dir, "ck.out")
		a.json(t, &get, "s3api", "get-object", "--bucket", "aws-checksums", "--key", "ck", "--checksum-mode", "ENABLED", out)
		if get.ChecksumCRC32 != put.ChecksumCRC32 {
			t.Errorf("get-object ChecksumCRC32 %q, want %q", get.ChecksumCRC32, put.ChecksumCRC32)
		}
		r := a.run(t, "s3api", "get-object", "--bucket", "aws-checksums", "--key", "ck", "--range", "bytes=0-99", "--checksum-mode", "ENABLED", out)
		if r.code != 0 {
			// Fixed in 7360a8b: the whole object's checksum came with a 206.
			t.Fatalf("ranged get-object --checksum-mode ENABLED: %s", r)
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, data[:100]) {
			t.Errorf("ranged get-object body differs")
		}
	})
}

// ------------------------------------------------------------------ boto3

// boto3Script is run once per step (its first argument). Each step uses its
// own bucket. Exit 0 is a pass, 3 a known server bug (the last line says
// which: "KNOWN-BUG <name>: ..."), anything else a failure.
const boto3Script = `
import hashlib, os, sys, time
import boto3, botocore
from botocore.config import Config

ENDPOINT = os.environ["CAIRN_ENDPOINT"]
MiB = 1 << 20

def client():
    return boto3.client("s3", endpoint_url=ENDPOINT,
                        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))

def check(cond, msg):
    if not cond:
        print("FAIL:", msg)
        sys.exit(1)
    print("ok:", msg)

def known_bug(name, msg):
    print("KNOWN-BUG %s: %s" % (name, msg))
    sys.exit(3)

s3 = client()

def step_objects():
    b = "boto3-objects"
    s3.create_bucket(Bucket=b)
    s3.put_object(Bucket=b, Key="hello.txt", Body=b"hello boto3", ContentType="text/plain")
    got = s3.get_object(Bucket=b, Key="hello.txt")
    check(got["Body"].read() == b"hello boto3", "get_object returns the body")
    check(got["ContentType"] == "text/plain", "content type round-trips")
    rng = s3.get_object(Bucket=b, Key="hello.txt", Range="bytes=6-")
    check(rng["Body"].read() == b"boto3" and rng["ContentRange"] == "bytes 6-10/11", "ranged get")
    head = s3.head_object(Bucket=b, Key="hello.txt")
    check(head["ContentLength"] == 11, "head_object size")
    try:
        s3.get_object(Bucket=b, Key="absent")
        check(False, "get_object of an absent key fails")
    except s3.exceptions.NoSuchKey:
        print("ok: get_object of an absent key is NoSuchKey")

def step_metadata():
    b = "boto3-metadata"
    s3.create_bucket(Bucket=b)
    s3.put_object(Bucket=b, Key="m", Body=b"m", Metadata={"colour": "blue"})
    # Fixed in 7360a8b: names came back as X-Amz-Meta-Colour ({"Colour": ...}).
    got = s3.head_object(Bucket=b, Key="m")["Metadata"]
    check(got == {"colour": "blue"}, "user metadata round-trips: %r" % got)
    s3.copy_object(Bucket=b, Key="copy", CopySource={"Bucket": b, "Key": "m"})
    got = s3.head_object(Bucket=b, Key="copy")["Metadata"]
    check(got == {"colour": "blue"}, "copy_object copies metadata: %r" % got)
    s3.copy_object(Bucket=b, Key="copy2", CopySource={"Bucket": b, "Key": "m"},
                   MetadataDirective="REPLACE", Metadata={"copied": "yes"})
    got = s3.head_object(Bucket=b, Key="copy2")["Metadata"]
    check(got == {"copied": "yes"}, "copy_object REPLACE metadata: %r" % got)

def step_list():
    b = "boto3-list"
    s3.create_bucket(Bucket=b)
    for i in range(25):
        s3.put_object(Bucket=b, Key="many/k%02d" % i, Body=b"x" * (i + 1))
    s3.put_object(Bucket=b, Key="top", Body=b"t")
    keys, pages = [], 0
    for page in s3.get_paginator("list_objects_v2").paginate(
            Bucket=b, Prefix="many/", PaginationConfig={"PageSize": 10}):
        pages += 1
        keys += [o["Key"] for o in page.get("Contents", [])]
    check(keys == ["many/k%02d" % i for i in range(25)], "v2 paginator lists all 25 keys in order")
    check(pages == 3, "25 keys in pages of 10 is 3 pages (got %d)" % pages)
    keys, prefixes = [], []
    for page in s3.get_paginator("list_objects").paginate(
            Bucket=b, Delimiter="/", PaginationConfig={"PageSize": 1}):
        keys += [o["Key"] for o in page.get("Contents", [])]
        prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
    check(keys == ["top"] and prefixes == ["many/"], "v1 paginator with delimiter: %r %r" % (keys, prefixes))

def step_multipart():
    b = "boto3-multipart"
    s3.create_bucket(Bucket=b)
    data = [os.urandom(5 * MiB) for _ in range(3)]
    uid = s3.create_multipart_upload(Bucket=b, Key="mpu/object.bin")["UploadId"]
    parts = []
    for n, d in enumerate(data, start=1):
        r = s3.upload_part(Bucket=b, Key="mpu/object.bin", UploadId=uid, PartNumber=n, Body=d)
        check(r["ETag"].strip('"') == hashlib.md5(d).hexdigest(), "part %d ETag is its MD5" % n)
        parts.append({"PartNumber": n, "ETag": r["ETag"]})
    listed = s3.list_parts(Bucket=b, Key="mpu/object.bin", UploadId=uid)
    check([p["PartNumber"] for p in listed["Parts"]] == [1, 2, 3], "list_parts shows 3 parts")
    done = s3.complete_multipart_upload(Bucket=b, Key="mpu/object.bin", UploadId=uid,
                                        MultipartUpload={"Parts": parts})
    want = hashlib.md5(b"".join(hashlib.md5(d).digest() for d in data)).hexdigest() + "-3"
    check(done["ETag"].strip('"') == want, "multipart ETag is md5-of-md5s-3 (got %s)" % done["ETag"])
    body = s3.get_object(Bucket=b, Key="mpu/object.bin")["Body"].read()
    check(body == b"".join(data), "multipart object is byte-identical")
    check(s3.head_object(Bucket=b, Key="mpu/object.bin")["ContentLength"] == 15 * MiB, "size is 15 MiB")
    p2 = s3.get_object(Bucket=b, Key="mpu/object.bin", PartNumber=2)
    check(p2["Body"].read() == data[1], "get_object PartNumber=2 returns the second part")

def step_copy():
    b = "boto3-copy"
    s3.create_bucket(Bucket=b)
    s3.create_bucket(Bucket=b + "-dst")
    big = os.urandom(6 * MiB + 5)
    s3.put_object(Bucket=b, Key="src/big.bin", Body=big)
    r = s3.copy_object(Bucket=b + "-dst", Key="dst/big.bin", CopySource={"Bucket": b, "Key": "src/big.bin"})
    check(r["CopyObjectResult"]["ETag"].strip('"') == hashlib.md5(big).hexdigest(), "copy ETag is the MD5")
    got = s3.get_object(Bucket=b + "-dst", Key="dst/big.bin")["Body"].read()
    check(got == big, "copy_object across buckets is byte-identical")
    s3.copy_object(Bucket=b, Key="odd key/ü+%.bin", CopySource={"Bucket": b, "Key": "src/big.bin"})
    got = s3.get_object(Bucket=b, Key="odd key/ü+%.bin")["Body"].read()
    check(got == big, "copy_object to an awkward key")
    try:
        s3.copy_object(Bucket=b, Key="x", CopySource={"Bucket": b, "Key": "absent"})
        check(False, "copy of an absent source fails")
    except s3.exceptions.NoSuchKey:
        print("ok: copy of an absent source is NoSuchKey")

def step_delete():
    b = "boto3-delete"
    s3.create_bucket(Bucket=b)
    for i in range(30):
        s3.put_object(Bucket=b, Key="d/k%02d" % i, Body=b"d")
    r = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "d/k%02d" % i} for i in range(25)]})
    check(len(r.get("Deleted", [])) == 25 and not r.get("Errors"), "delete_objects deleted 25")
    left = [o["Key"] for o in s3.list_objects_v2(Bucket=b).get("Contents", [])]
    check(left == ["d/k%02d" % i for i in range(25, 30)], "5 keys left: %r" % left)
    r = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": "d/k25"}, {"Key": "absent"}], "Quiet": True})
    check(not r.get("Errors") and not r.get("Deleted"), "quiet delete_objects of a present and an absent key")
    check(s3.list_objects_v2(Bucket=b)["KeyCount"] == 4, "4 keys left")

def step_empty_put():
    b = "boto3-empty"
    s3.create_bucket(Bucket=b)
    # One connection, a short read timeout: the stall of an empty PUT
    # followed by another PUT shows quickly.
    c = boto3.client("s3", endpoint_url=ENDPOINT, config=Config(
        signature_version="s3v4", s3={"addressing_style": "path"}, read_timeout=10,
        max_pool_connections=1, retries={"total_max_attempts": 1}))
    c.put_object(Bucket=b, Key="empty", Body=b"")
    try:
        c.put_object(Bucket=b, Key="after-empty", Body=b"after")
    except botocore.exceptions.ReadTimeoutError as e:
        known_bug("expect-empty", str(e))
    check(c.get_object(Bucket=b, Key="empty")["Body"].read() == b"", "the empty object is empty")
    check(c.get_object(Bucket=b, Key="after-empty")["Body"].read() == b"after", "the PUT after it worked")

def step_range_checksum():
    b = "boto3-checksum"
    s3.create_bucket(Bucket=b)
    s3.put_object(Bucket=b, Key="c", Body=b"hello boto3", ChecksumAlgorithm="CRC32")
    full = s3.get_object(Bucket=b, Key="c", ChecksumMode="ENABLED")
    check(full["Body"].read() == b"hello boto3" and full.get("ChecksumCRC32"), "get with checksum mode")
    # Fixed in 7360a8b: a 206 carried the whole object's checksum.
    r = s3.get_object(Bucket=b, Key="c", Range="bytes=6-", ChecksumMode="ENABLED")
    check(r["Body"].read() == b"boto3", "ranged get with checksum mode")

def step_seed():
    # The seed's snippets, run unmodified. They call boto3.client("s3") with
    # no endpoint: point the default at the server (old boto3 ignores
    # AWS_ENDPOINT_URL), as a config file would for a newer one.
    seed = os.environ["CAIRN_SEED_SNIPPET"]
    _client = boto3.client
    boto3.client = lambda *a, **kw: _client(*a, **{"endpoint_url": ENDPOINT, **kw})
    b = "my-data-lake"
    s3.create_bucket(Bucket=b)
    old_key, new_key = "output/__magic/part-00000.parquet", "output/__magic/part-00001.parquet"
    old = s3.create_multipart_upload(Bucket=b, Key=old_key)["UploadId"]
    s3.upload_part(Bucket=b, Key=old_key, UploadId=old, PartNumber=1, Body=b"p" * 1024)
    time.sleep(3)
    new = s3.create_multipart_upload(Bucket=b, Key=new_key)["UploadId"]
    ns = {"__name__": "seed"}
    exec(compile(open(seed, encoding="utf-8").read(), seed, "exec"), ns)
    rules = s3.get_bucket_lifecycle_configuration(Bucket=b)["Rules"]
    check(rules[0]["AbortIncompleteMultipartUpload"]["DaysAfterInitiation"] == 3, "the seed's lifecycle rule is stored")
    # days_old is a number of days: 1.5 s makes the upload started 3 s
    # before the other one old, and the other not.
    n = ns["abort_old_multipart_uploads"](b, days_old=1.5 / 86400)
    check(n == 1, "abort_old_multipart_uploads aborts the one old upload (got %d)" % n)
    left = [u["UploadId"] for u in s3.list_multipart_uploads(Bucket=b).get("Uploads", [])]
    check(left == [new], "only the new upload is left (got %r)" % left)
    time.sleep(1.1)
    n = ns["abort_old_multipart_uploads"](b, days_old=0)
    check(n == 1, "abort_old_multipart_uploads(days_old=0) aborts the other (got %d)" % n)
    check(not s3.list_multipart_uploads(Bucket=b).get("Uploads"), "no uploads left")
    try:
        s3.list_parts(Bucket=b, Key=old_key, UploadId=old)
        check(False, "list_parts of an aborted upload fails")
    except s3.exceptions.NoSuchUpload:
        print("ok: list_parts of an aborted upload is NoSuchUpload")

print("boto3", boto3.__version__, "botocore", botocore.__version__)
globals()["step_" + sys.argv[1]]()
print("PASS")
`

// cliPython returns a python3 that imports boto3, preferring Debian's, or
// skips the test.
func cliPython(t *testing.T) string {
	t.Helper()
	var tried []string
	cands := []string{"/usr/bin/python3"}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	for _, p := range cands {
		if !cliExecutable(p) {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := exec.CommandContext(ctx, p, "-c", "import boto3").Run()
		cancel()
		if err == nil {
			return p
		}
		tried = append(tried, p)
	}
	t.Skipf("SKIP: no python3 with boto3 (tried %q): install Debian's python3-boto3 (make deps) to run this test", tried)
	return ""
}

func TestCLIBoto3(t *testing.T) {
	py := cliPython(t)
	seed, err := filepath.Abs(filepath.Join("testdata", "cli", "seed_mpu_cleanup.py"))
	if err != nil {
		t.Fatal(err)
	}
	s := startCLIServer(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "boto3_e2e.py")
	cliWrite(t, script, boto3Script)
	env := append(s.awsEnv(t), "CAIRN_ENDPOINT="+s.endpoint, "CAIRN_SEED_SNIPPET="+seed)
	bugs := map[string]string{"expect-empty": bugExpectEmpty}
	for _, step := range []string{"objects", "metadata", "list", "multipart", "copy", "delete", "empty_put", "range_checksum", "seed"} {
		t.Run(step, func(t *testing.T) {
			r := cliRun(t, env, dir, py, script, step)
			t.Logf("%s %s:\n%s%s", py, step, r.stdout, r.stderr)
			if r.code == 3 {
				for name, msg := range bugs {
					cliSkipOnBug(t, r.stdout, "KNOWN-BUG "+name+":", msg)
				}
			}
			if r.code != 0 || !strings.Contains(r.stdout, "\nPASS") {
				t.Fatalf("boto3 step %s failed: %s", step, r)
			}
		})
	}
}

// ----------------------------------------------------------------- rclone

func TestCLIRclone(t *testing.T) {
	bin := cliFind(t, "rclone", "rclone")
	s := startCLIServer(t)
	conf := filepath.Join(s.dir, "rclone.conf")
	cliWrite(t, conf, "")
	env := append(cliBaseEnv(),
		"RCLONE_CONFIG="+conf,
		"RCLONE_CONFIG_CAIRN_TYPE=s3",
		"RCLONE_CONFIG_CAIRN_PROVIDER=Other",
		"RCLONE_CONFIG_CAIRN_ENDPOINT="+s.endpoint,
		"RCLONE_CONFIG_CAIRN_ACCESS_KEY_ID="+cliUser,
		"RCLONE_CONFIG_CAIRN_SECRET_ACCESS_KEY="+cliSecret,
		"RCLONE_CONFIG_CAIRN_REGION="+cliRegion,
		"RCLONE_CONFIG_CAIRN_FORCE_PATH_STYLE=true",
		// Fail rather than retry.
		"RCLONE_RETRIES=1", "RCLONE_LOW_LEVEL_RETRIES=1",
	)
	dir := t.TempDir()
	rc := func(t *testing.T, args ...string) string {
		t.Helper()
		return cliMust(t, env, dir, bin, args...).stdout
	}
	t.Logf("using %s: %s", bin, strings.SplitN(rc(t, "version"), "\n", 2)[0])

	src := filepath.Join(dir, "src")
	want := cliTree(t, src, true)
	large := cliRandom(50, 12*cliMiB+3)
	want["large/blob.bin"] = large
	cliWrite(t, filepath.Join(src, "large", "blob.bin"), string(large))
	rc(t, "mkdir", "cairn:rclone-bkt")

	for _, c := range []struct {
		name  string
		extra []string
	}{
		{"single-put", nil},
		// Multipart for everything above 5 MiB, in 5 MiB chunks.
		{"multipart", []string{"--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			remote := "cairn:rclone-bkt/" + c.name
			rc(t, append([]string{"copy", "--checksum", src, remote}, c.extra...)...)
			r := cliMust(t, env, dir, bin, "check", src, remote)
			if !strings.Contains(r.stderr, "0 differences found") {
				t.Errorf("rclone check: %s", r)
			}
			rc(t, "check", "--download", src, remote)
			back := filepath.Join(dir, "back-"+c.name)
			rc(t, "copy", "--checksum", remote, back)
			cliSameTree(t, "rclone copy back", cliReadTree(t, back), want)
			lsf := strings.Split(strings.TrimSpace(rc(t, "lsf", "-R", "--files-only", remote)), "\n")
			var wantKeys []string
			for k := range want {
				wantKeys = append(wantKeys, k)
			}
			sort.Strings(lsf)
			sort.Strings(wantKeys)
			if !slices.Equal(lsf, wantKeys) {
				t.Errorf("rclone lsf -R: %q, want %q", lsf, wantKeys)
			}
			hashes := rc(t, "md5sum", remote)
			if !strings.Contains(hashes, cliMD5(large)+"  large/blob.bin") {
				t.Errorf("rclone md5sum has no %s for large/blob.bin:\n%s", cliMD5(large), hashes)
			}
			rc(t, "delete", remote, "--include", "sub/**")
			left := strings.TrimSpace(rc(t, "lsf", "-R", "--files-only", remote))
			if strings.Contains(left, "sub/") || !strings.Contains(left, "a.txt") {
				t.Errorf("after rclone delete --include sub/**:\n%s", left)
			}
			rc(t, "delete", remote)
			if left := strings.TrimSpace(rc(t, "lsf", "-R", "--files-only", remote)); left != "" {
				t.Errorf("after rclone delete: %q", left)
			}
		})
	}
	rc(t, "purge", "cairn:rclone-bkt")
	if out := rc(t, "lsd", "cairn:"); strings.Contains(out, "rclone-bkt") {
		t.Errorf("bucket still listed after rclone purge:\n%s", out)
	}
}

// ------------------------------------------------------------------ s3cmd

func TestCLIS3cmd(t *testing.T) {
	bin := cliFind(t, "s3cmd", "s3cmd")
	s := startCLIServer(t)
	conf := filepath.Join(s.dir, "s3cfg")
	cliWrite(t, conf, fmt.Sprintf(`[default]
access_key = %s
secret_key = %s
host_base = %s
host_bucket = %s
bucket_location = %s
use_https = False
signature_v2 = False
progress_meter = False
multipart_chunk_size_mb = 5
`, cliUser, cliSecret, s.addr, s.addr, cliRegion))
	dir := t.TempDir()
	env := cliBaseEnv()
	sc := func(t *testing.T, args ...string) string {
		t.Helper()
		return cliMust(t, env, dir, bin, append([]string{"-c", conf}, args...)...).stdout
	}
	t.Logf("using %s: %s", bin, strings.TrimSpace(sc(t, "--version")))
	sc(t, "mb", "s3://s3cmd-bkt")

	t.Run("put-get-20MiB", func(t *testing.T) {
		data := cliRandom(60, 20*cliMiB)
		src := filepath.Join(dir, "big.bin")
		cliWrite(t, src, string(data))
		sc(t, "put", src, "s3://s3cmd-bkt/big.bin") // multipart, 4 x 5 MiB
		dst := filepath.Join(dir, "big.out")
		sc(t, "get", "--force", "s3://s3cmd-bkt/big.bin", dst)
		got, err := os.ReadFile(dst)
		if err != nil {
			t.Fatal(err)
		}
		if sha256.Sum256(got) != sha256.Sum256(data) {
			t.Fatalf("downloaded object differs (%d bytes)", len(got))
		}
		ls := sc(t, "ls", "s3://s3cmd-bkt/")
		if !strings.Contains(ls, fmt.Sprintf("%d  s3://s3cmd-bkt/big.bin", len(data))) {
			t.Errorf("s3cmd ls:\n%s", ls)
		}
		if out := sc(t, "multipart", "s3://s3cmd-bkt"); strings.Contains(out, "big.bin") {
			t.Errorf("multipart upload still listed after put:\n%s", out)
		}
		sc(t, "del", "s3://s3cmd-bkt/big.bin")
	})

	t.Run("sync", func(t *testing.T) {
		up := filepath.Join(dir, "up")
		want := cliTree(t, up, true)
		sc(t, "sync", up+"/", "s3://s3cmd-bkt/tree/")
		down := filepath.Join(dir, "down")
		sc(t, "sync", "s3://s3cmd-bkt/tree/", down+"/")
		cliSameTree(t, "s3cmd sync down", cliReadTree(t, down), want)
		ls := sc(t, "ls", "s3://s3cmd-bkt/tree/")
		if !strings.Contains(ls, "DIR  s3://s3cmd-bkt/tree/sub/") || !strings.Contains(ls, "s3://s3cmd-bkt/tree/a.txt") {
			t.Errorf("s3cmd ls tree/:\n%s", ls)
		}
		sc(t, "del", "--recursive", "--force", "s3://s3cmd-bkt/tree/")
		if out := strings.TrimSpace(sc(t, "ls", "--recursive", "s3://s3cmd-bkt/")); out != "" {
			t.Errorf("after del --recursive:\n%s", out)
		}
	})
	sc(t, "rb", "s3://s3cmd-bkt")
	if out := sc(t, "ls"); strings.Contains(out, "s3cmd-bkt") {
		t.Errorf("bucket still listed after rb:\n%s", out)
	}
}
