package integration

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
