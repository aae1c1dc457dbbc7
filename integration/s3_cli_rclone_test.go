package integration

import (
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

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
