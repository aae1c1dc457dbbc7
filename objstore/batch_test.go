package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cairnstore/cairn/objstore/meta"
)

// TestPutBatch: a batch whose conditions all hold installs every version
// at once; one condition that fails (a stale ETag, a key that must not
// exist, one that must) leaves every key as it was; malformed batches are
// refused before anything is written. fsck runs after (newTestStore).
func TestPutBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "bkt")
	a := mustPut(t, s, "bkt", "a", []byte("a0"))
	b := mustPut(t, s, "bkt", "b", []byte("b0"))
	big := bytes.Repeat([]byte("x"), 3<<20) // past the pack size: shard files
	infos, err := s.PutBatch(ctx, "bkt", []BatchPut{
		{Key: "a", Body: []byte("a1"), Opt: PutOptions{IfMatch: a.ETag}},
		{Key: "b", Body: big, Opt: PutOptions{IfMatch: b.ETag}},
		{Key: "c", Body: []byte("c1"), Opt: PutOptions{IfNoneMatch: "*"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 3 || infos[1].Size != int64(len(big)) {
		t.Fatalf("infos %+v", infos)
	}
	want := map[string][]byte{"a": []byte("a1"), "b": big, "c": []byte("c1")}
	check := func(what string) {
		t.Helper()
		for k, v := range want {
			if got := readAll(t, s, "bkt", k, GetOptions{}); !bytes.Equal(got, v) {
				t.Fatalf("%s: %s holds %d bytes, want %d", what, k, len(got), len(v))
			}
		}
	}
	check("after the batch")

	cur := map[string]string{}
	for _, k := range []string{"a", "b", "c"} {
		info, err := s.Head(ctx, "bkt", k, GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cur[k] = info.ETag
	}
	for _, tc := range []struct {
		name  string
		puts  []BatchPut
		isErr error
	}{
		{"stale ETag", []BatchPut{
			{Key: "a", Body: []byte("a2"), Opt: PutOptions{IfMatch: cur["a"]}},
			{Key: "b", Body: big[:100], Opt: PutOptions{IfMatch: a.ETag}},
		}, ErrPreconditionFailed},
		{"must not exist", []BatchPut{
			{Key: "a", Body: []byte("a2"), Opt: PutOptions{IfMatch: cur["a"]}},
			{Key: "c", Body: []byte("c2"), Opt: PutOptions{IfNoneMatch: "*"}},
		}, ErrPreconditionFailed},
		{"must exist", []BatchPut{
			{Key: "a", Body: []byte("a2"), Opt: PutOptions{IfMatch: cur["a"]}},
			{Key: "gone", Body: []byte("d"), Opt: PutOptions{IfMatch: cur["a"]}},
		}, ErrNoSuchKey},
		{"a key twice", []BatchPut{
			{Key: "a", Body: []byte("a2")},
			{Key: "a", Body: []byte("a3")},
		}, ErrInvalidArgument},
		{"empty", nil, ErrInvalidArgument},
		{"bad key", []BatchPut{{Key: "", Body: []byte("x")}}, ErrInvalidKey},
		{"final meta", []BatchPut{{Key: "a", Body: []byte("x"), Opt: PutOptions{FinalMeta: func(map[string]string) {}}}}, ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.PutBatch(ctx, "bkt", tc.puts)
			if !errors.Is(err, tc.isErr) {
				t.Fatalf("err %v, want %v", err, tc.isErr)
			}
			check(fmt.Sprintf("after the refused batch %q", tc.name))
		})
	}
	// A condition that held at the precheck and fails in the transaction
	// (another writer got in between): the versions installed before it
	// in the transaction are rolled back with it.
	t.Run("refused inside the transaction", func(t *testing.T) {
		d, sum, err := s.writeData(ctx, "bkt", "a", bytes.NewReader([]byte("zz")), 2, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		_, install := s.putVersion("bkt", "a", d, sum, PutOptions{})
		r := s.batchReq([]*newData{d}, func(tx meta.Tx) error {
			if err := install(tx); err != nil {
				return err
			}
			return fmt.Errorf("%w: the second put's condition", ErrPreconditionFailed)
		})
		if err := s.send(ctx, r); err != nil {
			t.Fatal(err)
		}
		err = <-r.done
		s.closeMu.RUnlock()
		s.discard(d)
		if !errors.Is(err, ErrPreconditionFailed) {
			t.Fatalf("err %v, want the refusal", err)
		}
		check("after a refusal inside the transaction")
	})
	if _, err := s.Clean(ctx); err != nil { // the refused batches' data
		t.Fatal(err)
	}
}
