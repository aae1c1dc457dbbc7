package integration

// The Trino engine test's helpers: the installed Trino (requireTrino), a
// Trino server on loopback with an Iceberg REST catalog on a cairn server
// (startTrino), and SQL through Trino's client protocol (query) or its CLI
// (cli).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	// trinoStartTimeout bounds Trino's startup (about 30 s here, with the
	// iceberg plugin alone).
	trinoStartTimeout = 4 * time.Minute
	// trinoQueryTimeout bounds one statement, polls included.
	trinoQueryTimeout = 3 * time.Minute
	// trinoUser is the Trino user the statements run as (Trino's
	// default access control lets anyone do anything).
	trinoUser = "cairn-test"
)

// trinoInstall is Trino as integration/engines/trino/install.sh left it
// in the engine cache: server/ (bin/launcher, lib/, plugin/),
// trino-cli.jar and java (a link to the Java it runs on).
type trinoInstall struct {
	dir string
}

func (i trinoInstall) java() string     { return filepath.Join(i.dir, "java", "bin", "java") }
func (i trinoInstall) launcher() string { return filepath.Join(i.dir, "server", "bin", "launcher") }
func (i trinoInstall) cliJar() string   { return filepath.Join(i.dir, "trino-cli.jar") }

// requireTrino returns the Trino install in $CAIRN_ENGINES/trino, or skips
// the test saying what is missing: the cache, the install (which may have
// failed here: the registry refusing the artifact) or a Java that runs.
func requireTrino(t *testing.T) trinoInstall {
	t.Helper()
	cache := os.Getenv("CAIRN_ENGINES")
	if cache == "" {
		t.Skip("the Trino test needs Trino installed: run `make test-engines` (or integration/engines/trino/install.sh, then set CAIRN_ENGINES to its cache)")
	}
	in := trinoInstall{dir: filepath.Join(cache, "trino")}
	stamp, err := os.ReadFile(filepath.Join(in.dir, "stamp"))
	if err != nil {
		t.Skipf("Trino is not installed in %s (%v): run integration/engines/trino/install.sh with CAIRN_ENGINES=%s", in.dir, err, cache)
	}
	for _, f := range []string{in.launcher(), in.cliJar(), filepath.Join(in.dir, "server", "plugin", "iceberg")} {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("the Trino install in %s is incomplete (%v): run integration/engines/trino/install.sh again", in.dir, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, in.java(), "-version").CombinedOutput(); err != nil {
		t.Skipf("Trino %s cannot start here: its Java %s does not run (%v): %s", strings.TrimSpace(string(stamp)), in.java(), err, out)
	}
	return in
}

// trinoServer is a running Trino coordinator (which also runs the tasks).
type trinoServer struct {
	in   trinoInstall
	url  string // http://127.0.0.1:PORT
	cmd  *exec.Cmd
	out  *syncBuffer // the launcher's and server's output
	done chan struct{}
	// startup is how long Trino took to answer as started.
	startup time.Duration
}

// trinoCatalog is one Iceberg catalog file of Trino, reaching cairn's REST
// catalog and S3 face as a user would configure them.
type trinoCatalog struct {
	name string // the catalog name in SQL (etc/catalog/NAME.properties)
	// security is "SIGV4" (requests signed, signing name s3) or "OAUTH2"
	// (client credentials exchanged at cairn's token endpoint).
	security string
}

// trinoCatalogProperties is the catalog file of c for cairn server s and
// warehouse wh.
func trinoCatalogProperties(c trinoCatalog, s *server, wh string) (string, error) {
	lines := []string{
		"connector.name=iceberg",
		"iceberg.catalog.type=rest",
		"iceberg.rest-catalog.uri=" + s.url("/iceberg"),
		"iceberg.rest-catalog.warehouse=" + wh,
		// Trino's native S3 file system on cairn's S3 face.
		"fs.native-s3.enabled=true",
		"s3.endpoint=" + s.url(""),
		"s3.path-style-access=true",
		"s3.region=" + s3Region,
		"s3.aws-access-key=" + s3User,
		"s3.aws-secret-key=" + s3Secret,
	}
	switch c.security {
	case "SIGV4":
		// The signing credentials and region are the s3.* ones above.
		lines = append(lines, "iceberg.rest-catalog.sigv4-enabled=true", "iceberg.rest-catalog.signing-name=s3")
	case "OAUTH2":
		lines = append(lines, "iceberg.rest-catalog.security=OAUTH2", "iceberg.rest-catalog.oauth2.credential="+s3User+":"+s3Secret)
	default:
		return "", fmt.Errorf("trino catalog %s: unknown security %q", c.name, c.security)
	}
	return strings.Join(lines, "\n") + "\n", nil
}

// writeTrinoEtc writes a minimal Trino configuration into dir/etc: one
// node on 127.0.0.1:port, a heap suited to a small shared machine, only
// the iceberg plugin (dir/plugin links to it: Trino starts in about 30 s
// instead of 50 with all of them), and the catalogs.
func writeTrinoEtc(dir string, in trinoInstall, port int, s *server, wh string, catalogs []trinoCatalog) error {
	etc := filepath.Join(dir, "etc")
	plugins := filepath.Join(dir, "plugin")
	for _, d := range []string{filepath.Join(etc, "catalog"), plugins, filepath.Join(dir, "data")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("trino etc: %w", err)
		}
	}
	if err := os.Symlink(filepath.Join(in.dir, "server", "plugin", "iceberg"), filepath.Join(plugins, "iceberg")); err != nil {
		return fmt.Errorf("trino etc: link the iceberg plugin: %w", err)
	}
	addr := fmt.Sprintf("http://127.0.0.1:%d", port)
	files := map[string]string{
		"node.properties": strings.Join([]string{
			"node.environment=cairntest",
			"node.id=cairn-trino-test",
			"node.data-dir=" + filepath.Join(dir, "data"),
			"node.bind-ip=127.0.0.1",
			"node.internal-address=127.0.0.1",
		}, "\n") + "\n",
		"jvm.config": strings.Join([]string{
			"-server",
			"-Xmx1G",
			"-XX:+UseG1GC",
			"-XX:+ExitOnOutOfMemoryError",
			"-XX:-OmitStackTraceInFastThrow",
			"-XX:ReservedCodeCacheSize=256M",
			"-XX:+EnableDynamicAgentLoading",
			"-Djdk.attach.allowAttachSelf=true",
			"-Dfile.encoding=UTF-8",
		}, "\n") + "\n",
		"config.properties": strings.Join([]string{
			"coordinator=true",
			"node-scheduler.include-coordinator=true",
			fmt.Sprintf("http-server.http.port=%d", port),
			"discovery.uri=" + addr,
			"plugin.dir=" + plugins,
			"query.max-memory=256MB",
			"query.max-memory-per-node=256MB",
		}, "\n") + "\n",
	}
	for _, c := range catalogs {
		props, err := trinoCatalogProperties(c, s, wh)
		if err != nil {
			return err
		}
		files[filepath.Join("catalog", c.name+".properties")] = props
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(body), 0o644); err != nil {
			return fmt.Errorf("trino etc: %w", err)
		}
	}
	return nil
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	_, port, err := net.SplitHostPort(freeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	var p int
	if _, err := fmt.Sscan(port, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// startTrino starts Trino on loopback with catalogs on cairn server s and
// warehouse wh, and waits until it has started. A Trino that does not
// start (memory, Java, the install) skips the test with its log; the
// process group is killed at the end of the test.
func startTrino(t *testing.T, in trinoInstall, s *server, wh string, catalogs ...trinoCatalog) *trinoServer {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	if err := writeTrinoEtc(dir, in, port, s, wh, catalogs); err != nil {
		t.Fatal(err)
	}
	tr := &trinoServer{in: in, url: fmt.Sprintf("http://127.0.0.1:%d", port), out: &syncBuffer{}, done: make(chan struct{})}
	tr.cmd = exec.Command(in.launcher(), "run", "--etc-dir", filepath.Join(dir, "etc"), "--data-dir", filepath.Join(dir, "data"))
	tr.cmd.Env = append(os.Environ(), "JAVA_HOME="+filepath.Join(in.dir, "java"))
	tr.cmd.Stdout, tr.cmd.Stderr = tr.out, tr.out
	// Its own process group, so that the cleanup ends the JVM whatever
	// the launcher did (it execs java today).
	tr.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := tr.cmd.Start(); err != nil {
		t.Skipf("Trino cannot start here: %v", err)
	}
	go func() {
		_ = tr.cmd.Wait()
		close(tr.done)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-tr.cmd.Process.Pid, syscall.SIGKILL)
		<-tr.done
		if t.Failed() {
			t.Logf("trino output (last 60 lines):\n%s", tail(tr.out.String(), 60))
		}
	})
	if err := tr.waitStarted(trinoStartTimeout); err != nil {
		t.Skipf("Trino cannot start here: %v\ntrino output (last 60 lines):\n%s", err, tail(tr.out.String(), 60))
	}
	if err := tr.waitNode(trinoStartTimeout - time.Since(start)); err != nil {
		t.Fatalf("Trino started but runs no query: %v\ntrino output (last 60 lines):\n%s", err, tail(tr.out.String(), 60))
	}
	tr.startup = time.Since(start)
	return tr
}

// waitStarted polls /v1/info until Trino says it is no longer starting.
func (tr *trinoServer) waitStarted(timeout time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(timeout)
	last := "no answer"
	for time.Now().Before(deadline) {
		select {
		case <-tr.done:
			return fmt.Errorf("the launcher exited (%v)", tr.cmd.ProcessState)
		default:
		}
		resp, err := client.Get(tr.url + "/v1/info")
		if err == nil {
			var info struct {
				Starting bool `json:"starting"`
			}
			err = json.NewDecoder(resp.Body).Decode(&info)
			_ = resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK && !info.Starting {
				return nil
			}
			last = fmt.Sprintf("%s, starting=%v, %v", resp.Status, info.Starting, err)
		} else {
			last = err.Error()
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("not started after %v (last: %s)", timeout, last)
}

// waitNode waits until Trino has a node to run queries on: a coordinator
// that is its own worker says it has started before that worker has
// announced itself, and a query meanwhile fails with NO_NODES_AVAILABLE.
func (tr *trinoServer) waitNode(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := tr.execOnce("SELECT 1")
		if err == nil {
			return nil
		}
		if !strings.Contains(err.Error(), "NO_NODES_AVAILABLE") || time.Now().After(deadline) {
			return err
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// trinoResult is a statement's outcome: its columns and rows, each value
// in the text form Trino's JSON gives (numbers as written, dates as
// YYYY-MM-DD, null as "NULL"), and the update type and count of DDL/DML.
type trinoResult struct {
	columns     []string
	rows        [][]string
	updateType  string
	updateCount int64
}

// trinoPage is one response of Trino's client protocol.
type trinoPage struct {
	ID      string `json:"id"`
	NextURI string `json:"nextUri"`
	Columns []struct {
		Name string `json:"name"`
	} `json:"columns"`
	Data        [][]any `json:"data"`
	UpdateType  string  `json:"updateType"`
	UpdateCount *int64  `json:"updateCount"`
	Stats       struct {
		State string `json:"state"`
	} `json:"stats"`
	Error *struct {
		Message   string `json:"message"`
		ErrorName string `json:"errorName"`
		ErrorType string `json:"errorType"`
	} `json:"error"`
}

// trinoNodeWait bounds how long a statement is tried again while Trino
// answers NO_NODES_AVAILABLE: its own worker can drop out of the active
// nodes for a moment after the start (a missed announcement on a busy
// machine) even once a first query ran, and such a statement ran nothing.
const trinoNodeWait = 60 * time.Second

// exec runs one SQL statement (execOnce), again while Trino has no node
// to run it on, up to trinoNodeWait.
func (tr *trinoServer) exec(sql string) (trinoResult, error) {
	deadline := time.Now().Add(trinoNodeWait)
	for {
		res, err := tr.execOnce(sql)
		if err == nil || !strings.Contains(err.Error(), "NO_NODES_AVAILABLE") || time.Now().After(deadline) {
			return res, err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// execOnce runs one SQL statement through Trino's client protocol (POST
// /v1/statement, then GET each nextUri until there is none) and returns
// its result, or the error Trino reported.
func (tr *trinoServer) execOnce(sql string) (trinoResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), trinoQueryTimeout)
	defer cancel()
	client := &http.Client{}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tr.url+"/v1/statement", strings.NewReader(sql))
	if err != nil {
		return trinoResult{}, err
	}
	var res trinoResult
	for {
		req.Header.Set("X-Trino-User", trinoUser)
		page, err := fetchTrinoPage(client, req)
		if err != nil {
			return trinoResult{}, fmt.Errorf("%q: %w", sql, err)
		}
		if page.Error != nil {
			return trinoResult{}, fmt.Errorf("%q: query %s failed: %s (%s, %s)", sql, page.ID, page.Error.Message, page.Error.ErrorName, page.Error.ErrorType)
		}
		if res.columns == nil && page.Columns != nil {
			for _, c := range page.Columns {
				res.columns = append(res.columns, c.Name)
			}
		}
		for _, row := range page.Data {
			res.rows = append(res.rows, trinoRowText(row))
		}
		if page.UpdateType != "" {
			res.updateType = page.UpdateType
		}
		if page.UpdateCount != nil {
			res.updateCount = *page.UpdateCount
		}
		if page.NextURI == "" {
			return res, nil
		}
		if req, err = http.NewRequestWithContext(ctx, http.MethodGet, page.NextURI, nil); err != nil {
			return trinoResult{}, err
		}
	}
}

// fetchTrinoPage sends req and decodes the page it answers.
func fetchTrinoPage(client *http.Client, req *http.Request) (trinoPage, error) {
	resp, err := client.Do(req)
	if err != nil {
		return trinoPage{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return trinoPage{}, fmt.Errorf("%s %s: read: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return trinoPage{}, fmt.Errorf("%s %s: %s: %s", req.Method, req.URL.Path, resp.Status, tail(string(body), 20))
	}
	var page trinoPage
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&page); err != nil {
		return trinoPage{}, fmt.Errorf("%s %s: decode: %w", req.Method, req.URL.Path, err)
	}
	return page, nil
}

// trinoRowText renders one row of Trino's JSON values as text.
func trinoRowText(row []any) []string {
	out := make([]string, len(row))
	for i, v := range row {
		if v == nil {
			out[i] = "NULL"
		} else {
			out[i] = fmt.Sprint(v)
		}
	}
	return out
}

// query runs sql and fails t unless it succeeds.
func (tr *trinoServer) query(t *testing.T, sql string) trinoResult {
	t.Helper()
	res, err := tr.exec(sql)
	if err != nil {
		t.Fatalf("trino: %v", err)
	}
	return res
}

// cli runs sql with the Trino CLI (its executable jar), CSV output
// without quotes or header, and returns the lines it printed.
func (tr *trinoServer) cli(t *testing.T, sql string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), trinoQueryTimeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	for deadline := time.Now().Add(trinoNodeWait); ; {
		stdout.Reset()
		stderr.Reset()
		cmd := exec.CommandContext(ctx, tr.in.java(), "--enable-native-access=ALL-UNNAMED", "-jar", tr.in.cliJar(),
			"--server", tr.url, "--user", trinoUser, "--output-format", "CSV_UNQUOTED", "--execute", sql)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.WaitDelay = 10 * time.Second
		err := cmd.Run()
		if err == nil {
			break
		}
		// As exec: a statement Trino had no node for ran nothing.
		if !strings.Contains(stderr.String(), "NO_NODES_AVAILABLE") || time.Now().After(deadline) {
			t.Fatalf("trino cli %q: %v\nstdout:\n%s\nstderr:\n%s", sql, err, stdout.String(), stderr.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
	var lines []string
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}
