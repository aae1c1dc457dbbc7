package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func TestSSEKeys(t *testing.T) {
	hexKey := strings.Repeat("ab", 32)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, short := write("good.key", hexKey+"\n"), write("short.key", "abcd")
	ring, badRing := write("ring", "alpha "+hexKey+"\n"), write("bad-ring", "alpha\n")
	tests := []struct {
		name    string
		f       sseFlags
		env     string
		wantErr string
	}{
		{"file", sseFlags{MasterKeyFile: good, KeyRingFile: ring}, "", ""},
		{"short file", sseFlags{MasterKeyFile: short}, "", "--sse-master-key-file"},
		{"missing file", sseFlags{MasterKeyFile: filepath.Join(dir, "none")}, "", "--sse-master-key-file"},
		{"env", sseFlags{}, hexKey, ""},
		{"bad env", sseFlags{}, "zz", masterKeyEnv},
		{"bad ring", sseFlags{MasterKeyFile: good, KeyRingFile: badRing}, "", "--sse-kms-keyring"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(masterKeyEnv, tc.env)
			k, err := tc.f.keys(t.TempDir(), nil, zerolog.Nop())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || k.MasterID() == "" {
				t.Fatalf("keys: %v", err)
			}
		})
	}
	t.Run("generated once", func(t *testing.T) {
		t.Setenv(masterKeyEnv, "")
		data := t.TempDir()
		k1, err := sseFlags{}.keys(data, nil, zerolog.Nop())
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(filepath.Join(data, generatedMasterKey))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("generated key file: %v %v", st, err)
		}
		k2, err := sseFlags{}.keys(data, nil, zerolog.Nop())
		if err != nil || k2.MasterID() != k1.MasterID() {
			t.Fatalf("second start: %v, id %s then %s", err, k1.MasterID(), k2.MasterID())
		}
	})
	t.Run("cluster nodes share one", func(t *testing.T) {
		t.Setenv(masterKeyEnv, "")
		secret := []byte("0123456789abcdef0123456789abcdef")
		k1, err1 := sseFlags{}.keys(t.TempDir(), secret, zerolog.Nop())
		k2, err2 := sseFlags{}.keys(t.TempDir(), secret, zerolog.Nop())
		other, err3 := sseFlags{}.keys(t.TempDir(), []byte("another secret, another cluster.."), zerolog.Nop())
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		if k1.MasterID() != k2.MasterID() || k1.MasterID() == other.MasterID() {
			t.Fatalf("two nodes of one cluster: ids %s and %s; another cluster's %s", k1.MasterID(), k2.MasterID(), other.MasterID())
		}
		file, err := sseFlags{MasterKeyFile: good}.keys(t.TempDir(), secret, zerolog.Nop())
		if err != nil || file.MasterID() == k1.MasterID() {
			t.Fatalf("a key file given on a cluster is not the one used: %v", err)
		}
	})
}
