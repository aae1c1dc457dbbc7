package etcd_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cairnstore/cairn/objstore/meta"
	"github.com/cairnstore/cairn/objstore/meta/etcd"
	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
)

// fill writes n keys whose keys and values add up to size bytes.
func fill(tx meta.Tx, table meta.Table, tag string, n, size int) error {
	for i := 0; i < n; i++ {
		k := []byte(fmt.Sprintf("%s-%06d", tag, i))
		vlen := size / n
		if i == n-1 {
			vlen = size - (n-1)*(size/n)
		}
		vlen -= len(k)
		if vlen < 0 {
			return fmt.Errorf("fill: %d bytes are too few for %d keys", size, n)
		}
		if err := tx.Put(table, k, bytes.Repeat([]byte{'v'}, vlen)); err != nil {
			return err
		}
	}
	return nil
}

// TestLimits checks the default bound against a cluster with etcd's
// default bounds: a transaction at exactly Limits commits (the index's
// own overhead is within what it takes off), one write or byte more is
// refused before it is sent, and a cluster stricter than the
// configuration says refuses with meta.ErrTxTooLarge too.
func TestLimits(t *testing.T) {
	m := etcdtest.Start(t, etcdtest.Options{})
	ep := []string{m.Endpoint()}
	// A long prefix: the overhead grows with it.
	idx := openIndex(t, etcd.Config{Endpoints: ep, Prefix: "/cairn/a-rather-long-prefix-for-one-store-of-many"})
	lim := idx.Limits()
	if lim.MaxWrites != etcd.DefaultMaxTxnOps-2 || lim.MaxBytes < etcd.DefaultMaxRequestBytes-16<<10 || lim.MaxBytes >= etcd.DefaultMaxRequestBytes {
		t.Fatalf("default limits %+v", lim)
	}
	ctx := context.Background()
	tests := []struct {
		name          string
		writes, bytes int
		seq           bool
		ok            bool
	}{
		{"at both bounds, with a sequence", lim.MaxWrites, lim.MaxBytes, true, true},
		{"one big value", 1, lim.MaxBytes, true, true},
		{"one write more", lim.MaxWrites + 1, 64 << 10, false, false},
		{"one byte more", 2, lim.MaxBytes + 1, false, false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tag := fmt.Sprint(i)
			err := idx.Update(ctx, func(tx meta.Tx) error {
				if tc.seq {
					if _, err := tx.NextSeq(); err != nil {
						return err
					}
				}
				return fill(tx, meta.Versions, tag, tc.writes, tc.bytes)
			})
			if tc.ok && err != nil {
				t.Fatalf("within the limits: %v", err)
			}
			if !tc.ok && !errors.Is(err, meta.ErrTxTooLarge) {
				t.Fatalf("beyond the limits: %v, want ErrTxTooLarge", err)
			}
			var found bool
			err = idx.View(ctx, func(tx meta.Tx) (err error) {
				found, err = meta.Has(tx, meta.Versions, []byte(tag+"-000000"))
				return err
			})
			if err != nil || found != tc.ok {
				t.Fatalf("committed %v (%v), want %v", found, err, tc.ok)
			}
		})
	}

	// The configuration claims more than the cluster takes: the cluster
	// refuses, and the refusal is ErrTxTooLarge all the same.
	for _, tc := range []struct {
		name          string
		cfg           etcd.Config
		writes, bytes int
	}{
		{"ops", etcd.Config{MaxTxnOps: 1000}, 500, 64 << 10},
		{"bytes", etcd.Config{MaxRequestBytes: 3 << 20}, 4, 1700 << 10},
		{"bytes past gRPC's bound", etcd.Config{MaxRequestBytes: 4 << 20}, 4, 3 << 20},
	} {
		t.Run("cluster refuses "+tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Endpoints, cfg.Prefix = ep, "/cairn/b"
			big := openIndex(t, cfg)
			err := big.Update(ctx, func(tx meta.Tx) error { return fill(tx, meta.Versions, "x", tc.writes, tc.bytes) })
			if !errors.Is(err, meta.ErrTxTooLarge) {
				t.Fatalf("a transaction the cluster refuses: %v, want ErrTxTooLarge", err)
			}
		})
	}
}

// TestConfigValidate checks the configurations Open refuses.
func TestConfigValidate(t *testing.T) {
	ok := etcd.Config{Endpoints: []string{"127.0.0.1:2379"}, Prefix: "/p"}
	tests := []struct {
		name string
		edit func(c *etcd.Config)
		ok   bool
	}{
		{"valid", func(c *etcd.Config) {}, true},
		{"limits within", func(c *etcd.Config) { c.Limits = meta.Limits{MaxWrites: 10, MaxBytes: 1000} }, true},
		{"no endpoints", func(c *etcd.Config) { c.Endpoints = nil }, false},
		{"no prefix", func(c *etcd.Config) { c.Prefix = "" }, false},
		{"root prefix", func(c *etcd.Config) { c.Prefix = "/" }, false},
		{"cert without key", func(c *etcd.Config) { c.TLS.CertFile = "c.pem" }, false},
		{"password without user", func(c *etcd.Config) { c.Password = "pw" }, false},
		{"negative timeout", func(c *etcd.Config) { c.RequestTimeout = -1 }, false},
		{"too few ops", func(c *etcd.Config) { c.MaxTxnOps = 2 }, false},
		{"too few bytes", func(c *etcd.Config) { c.MaxRequestBytes = 2000 }, false},
		{"limits past the cluster's", func(c *etcd.Config) { c.Limits = meta.Limits{MaxWrites: 127, MaxBytes: 1000} }, false},
		{"half a limit", func(c *etcd.Config) { c.Limits = meta.Limits{MaxWrites: 10} }, false},
		{"endpoint list in one string", func(c *etcd.Config) { c.Endpoints = []string{"a:1,b:2"} }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			if err := c.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok %v", err, tc.ok)
			}
		})
	}
}
