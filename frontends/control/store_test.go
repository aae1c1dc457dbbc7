package control

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

type fakeStatus struct {
	st  objstore.Status
	err error
}

func (f fakeStatus) Status(context.Context) (objstore.Status, error) { return f.st, f.err }

func TestStoreTreeStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.Open(t, objstore.Options{Dir: t.TempDir(), DriveCount: 3, Parity: 1, NoBackground: true})
	defer s.Close()
	if err := s.CreateBucket(ctx, "photos", objstore.BucketOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"a/b", "a/b/c"} {
		if _, err := s.Put(ctx, "photos", key, strings.NewReader("xyz"), 3, objstore.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	n, err := StoreTree(s).Find(ctx, "store/status")
	if err != nil {
		t.Fatal(err)
	}
	f, ok := n.(*File)
	if !ok || f.Writable() {
		t.Fatalf("store/status: %T, writable %v", n, ok && f.Writable())
	}
	raw, err := f.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), "{\n  \"") || !strings.HasSuffix(string(raw), "}\n") {
		t.Errorf("not indented JSON with a trailing newline: %q", raw)
	}
	var st objstore.Status
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	if st.DataShards != 2 || st.ParityShards != 1 || len(st.Drives) != 3 || st.BucketCount != 1 {
		t.Errorf("status %+v", st)
	}
	if len(st.Buckets) != 1 || st.Buckets[0].Objects != 2 || st.Buckets[0].Bytes != 6 || st.Buckets[0].Shadowed != 1 {
		t.Errorf("buckets %+v", st.Buckets)
	}
}

func TestStoreTreeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
	}{
		{"closed", objstore.ErrClosed},
		{"cancelled", context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := storeTree(fakeStatus{err: tc.err}).Find(context.Background(), "store/status")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := n.(*File).Read(context.Background()); !errors.Is(err, tc.err) {
				t.Errorf("Read: %v, want %v", err, tc.err)
			}
		})
	}
}
