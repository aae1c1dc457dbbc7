package etcd_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
)

// roundTrip writes and reads one key through idx.
func roundTrip(t *testing.T, idx meta.Index) error {
	t.Helper()
	ctx := context.Background()
	if err := idx.Update(ctx, func(tx meta.Tx) error { return tx.Put(meta.Objects, []byte("k"), []byte("v")) }); err != nil {
		return err
	}
	return idx.View(ctx, func(tx meta.Tx) error {
		v, err := tx.Get(meta.Objects, []byte("k"))
		if err == nil && string(v) != "v" {
			t.Errorf("read back %q", v)
		}
		return err
	})
}

// TestAuth runs the index on a cluster with auth enabled: a user whose
// role may read and write only its store's prefix can use that store and
// no other; a wrong password fails Open at once.
func TestAuth(t *testing.T) {
	m := etcdtest.Start(t, etcdtest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	admin, err := clientv3.New(clientv3.Config{Endpoints: []string{m.Endpoint()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	steps := []func() error{
		func() error { _, err := admin.UserAdd(ctx, "root", "root-pw"); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "root", "root"); return err },
		func() error { _, err := admin.RoleAdd(ctx, "store-a"); return err },
		func() error {
			_, err := admin.RoleGrantPermission(ctx, "store-a", "/cairn/a/", clientv3.GetPrefixRangeEnd("/cairn/a/"),
				clientv3.PermissionType(clientv3.PermReadWrite))
			return err
		},
		func() error { _, err := admin.UserAdd(ctx, "alice", "alice-pw"); return err },
		func() error { _, err := admin.UserGrantRole(ctx, "alice", "store-a"); return err },
		func() error { _, err := admin.AuthEnable(ctx); return err },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("auth setup step %d: %v", i, err)
		}
	}
	cfg := func(user, pw, prefix string) etcd.Config {
		return etcd.Config{Endpoints: []string{m.Endpoint()}, Prefix: prefix, Username: user, Password: pw, DialTimeout: time.Second}
	}
	if err := roundTrip(t, openIndex(t, cfg("alice", "alice-pw", "/cairn/a"))); err != nil {
		t.Fatalf("alice in her store: %v", err)
	}
	if err := roundTrip(t, openIndex(t, cfg("root", "root-pw", "/cairn/b"))); err != nil {
		t.Fatalf("root: %v", err)
	}
	for _, tc := range []struct {
		name string
		cfg  etcd.Config
		want string
	}{
		{"wrong password", cfg("alice", "nope", "/cairn/a"), "authentication failed"},
		{"no user", cfg("", "", "/cairn/a"), "user name is empty"},
		{"another store's prefix", cfg("alice", "alice-pw", "/cairn/b"), "permission denied"},
	} {
		start := time.Now()
		x, err := etcd.Open(context.Background(), tc.cfg)
		if err == nil {
			err = roundTrip(t, x)
			_ = x.Close()
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, etcd.ErrUnavailable) {
			t.Errorf("%s: %v, want an error with %q (not ErrUnavailable)", tc.name, err, tc.want)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("%s: took %v", tc.name, took)
		}
	}
}

// TestTLS runs the index on a cluster that serves clients over TLS only
// and requires their certificates.
func TestTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t)
	server := ca.issue(t, dir, "server", x509.ExtKeyUsageServerAuth)
	client := ca.issue(t, dir, "client", x509.ExtKeyUsageClientAuth)
	caFile := filepath.Join(dir, "ca.pem")
	writePEM(t, caFile, "CERTIFICATE", ca.cert.Raw)
	m := etcdtest.Start(t, etcdtest.Options{TLS: transport.TLSInfo{
		CertFile: server.cert, KeyFile: server.key, TrustedCAFile: caFile, ClientCertAuth: true,
	}})
	good := etcd.Config{Endpoints: []string{m.Endpoint()}, Prefix: "/cairn/tls", DialTimeout: time.Second,
		TLS: etcd.TLS{CAFile: caFile, CertFile: client.cert, KeyFile: client.key}}
	if err := roundTrip(t, openIndex(t, good)); err != nil {
		t.Fatalf("over TLS: %v", err)
	}
	// The URL form gives the same configuration.
	u, err := etcd.ParseURL("etcd://" + m.Endpoint() + "/cairn/tls?cacert=" + caFile + "&cert=" + client.cert + "&key=" + client.key + "&dial-timeout=1s")
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(t, openIndex(t, u)); err != nil {
		t.Fatalf("over TLS from the URL form: %v", err)
	}
	noCert := good
	noCert.TLS.CertFile, noCert.TLS.KeyFile = "", ""
	plain := good
	plain.TLS = etcd.TLS{}
	for name, cfg := range map[string]etcd.Config{"no client certificate": noCert, "plain text": plain} {
		x, err := etcd.Open(context.Background(), cfg)
		if err == nil {
			_ = x.Close()
			t.Errorf("%s: Open succeeded", name)
		}
	}
}

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

type issued struct{ cert, key string }

func newCA(t *testing.T) testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cairn test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return testCA{cert: cert, key: key}
}

// issue writes a certificate for 127.0.0.1 and its key, signed by ca.
func (ca testCA) issue(t *testing.T, dir, name string, usage x509.ExtKeyUsage) issued {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	out := issued{cert: filepath.Join(dir, name+".pem"), key: filepath.Join(dir, name+"-key.pem")}
	writePEM(t, out.cert, "CERTIFICATE", der)
	writePEM(t, out.key, "EC PRIVATE KEY", kder)
	return out
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
