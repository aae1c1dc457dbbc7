package objstore

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta"
)

// newTestStore opens a store in a temporary directory and, when the test
// ends, closes it and runs fsck on it: every test ends with a consistency
// check (the bbolt btesting habit).
func newTestStore(t testing.TB, drives, parity int, tweak ...func(*Options)) (*Store, Options) {
	t.Helper()
	// Packing is off so that tests can count shard files; pack_test.go
	// and the degraded and crash tests cover packed data.
	opt := Options{Dir: t.TempDir(), DriveCount: drives, Parity: parity, BlockSize: 64 << 10, MinPartSize: 1, PackMaxSize: -1, NoBackground: true}
	// make test runs the package a second time with tiny chunks, so
	// that every path meets chunked versions.
	if n, err := strconv.Atoi(os.Getenv("CAIRN_TEST_CHUNK_SEGMENTS")); err == nil {
		opt.ChunkSegments = n
	}
	for _, f := range tweak {
		f(&opt)
	}
	s, err := Open(context.Background(), withBolt(t, opt))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if t.Failed() {
			return
		}
		o := opt
		o.Parity = -1
		rep, err := Fsck(context.Background(), withBolt(t, o), nil)
		if err != nil {
			t.Errorf("fsck: %v", err)
			return
		}
		if !rep.Clean() {
			t.Errorf("fsck after test: %+v", rep)
		}
	})
	return s, opt
}

// withBolt returns opt with the bbolt index of opt.Dir opened as its
// Index, as cmd/ does: the store it opens closes it.
func withBolt(t testing.TB, opt Options) Options {
	t.Helper()
	idx, err := meta.OpenBolt(meta.BoltPath(opt.Dir), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() }) // for a test that failed before closing its store
	opt.Index = idx
	return opt
}

func randBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func mustBucket(t testing.TB, s *Store, name string) {
	t.Helper()
	if err := s.CreateBucket(context.Background(), name, BucketOptions{}); err != nil {
		t.Fatal(err)
	}
}

func mustPut(t testing.TB, s *Store, bucket, key string, data []byte) ObjectInfo {
	t.Helper()
	info, err := s.Put(context.Background(), bucket, key, bytes.NewReader(data), int64(len(data)), PutOptions{})
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return info
}

func readAll(t testing.TB, s *Store, bucket, key string, opt GetOptions) []byte {
	t.Helper()
	r, err := s.Open(context.Background(), bucket, key, opt)
	if err != nil {
		t.Fatalf("open %s: %v", key, err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", key, err)
	}
	return b
}
