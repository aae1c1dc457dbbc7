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
	"os"
	"path/filepath"
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
	if n := clusterNodes(t); n > 0 {
		s := startTestCluster(t, n, "--log-level", "debug").clusterProxy()
		return &cliServer{server: s, endpoint: s.url(""), dir: t.TempDir()}
	}
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
