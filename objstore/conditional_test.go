package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

func TestPutConditions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	mustBucket(t, s, "cond")
	cur := mustPut(t, s, "cond", "exists", []byte("v1"))
	other := md5hex([]byte("something else"))
	for _, tc := range []struct {
		name string
		key  string
		opt  PutOptions
		want error
	}{
		{"if-none-match on existing", "exists", PutOptions{IfNoneMatch: "*"}, ErrPreconditionFailed},
		{"if-none-match on missing", "new1", PutOptions{IfNoneMatch: "*"}, nil},
		{"if-none-match the current etag", "exists", PutOptions{IfNoneMatch: cur.ETag}, ErrPreconditionFailed},
		{"if-none-match the current etag quoted", "exists", PutOptions{IfNoneMatch: `"` + cur.ETag + `"`}, ErrPreconditionFailed},
		{"if-none-match an etag on missing", "new2", PutOptions{IfNoneMatch: cur.ETag}, nil},
		{"if-match right", "exists", PutOptions{IfMatch: cur.ETag}, nil},
		{"if-match wrong", "exists", PutOptions{IfMatch: other}, ErrPreconditionFailed},
		{"if-match on missing", "new3", PutOptions{IfMatch: cur.ETag}, ErrNoSuchKey},
		{"if-match star on missing", "new4", PutOptions{IfMatch: "*"}, ErrNoSuchKey},
		{"both on missing", "new5", PutOptions{IfMatch: cur.ETag, IfNoneMatch: "*"}, ErrNoSuchKey},
		{"if-none-match another etag", "exists", PutOptions{IfNoneMatch: other}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, beforeErr := s.Head(ctx, "cond", tc.key, GetOptions{})
			files := shardFileCount(t, opt)
			body := []byte("body of " + tc.name)
			info, err := s.Put(ctx, "cond", tc.key, bytes.NewReader(body), int64(len(body)), tc.opt)
			if !errors.Is(err, tc.want) {
				t.Fatalf("put: %v, want %v", err, tc.want)
			}
			h, herr := s.Head(ctx, "cond", tc.key, GetOptions{})
			if tc.want != nil {
				if (herr == nil) != (beforeErr == nil) || h.ETag != before.ETag {
					t.Fatalf("a refused put changed the key: %+v %v", h, herr)
				}
				if got := shardFileCount(t, opt); got != files {
					t.Fatalf("a refused put left shard files: %d -> %d", files, got)
				}
				return
			}
			if herr != nil || h.ETag != info.ETag || info.ETag != md5hex(body) {
				t.Fatalf("head %+v %v, put %+v", h, herr, info)
			}
			if tc.key == "exists" {
				cur = info
			}
		})
	}
	// If-Match accepts the quoted form clients send.
	if _, err := s.Put(ctx, "cond", "exists", bytes.NewReader(nil), 0, PutOptions{IfMatch: `"` + cur.ETag + `"`}); err != nil {
		t.Fatalf("quoted If-Match: %v", err)
	}
	// A delete marker is no current version: If-None-Match passes.
	mustBucket(t, s, "condv")
	if err := s.SetVersioning(ctx, "condv", VersioningEnabled); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "condv", "k", []byte("x"))
	if _, err := s.Delete(ctx, "condv", "k", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "condv", "k", bytes.NewReader([]byte("y")), 1, PutOptions{IfNoneMatch: "*"}); err != nil {
		t.Fatalf("if-none-match over a delete marker: %v", err)
	}
}

// Of 16 concurrent create-only puts of one key exactly one wins.
func TestPutIfNoneMatchRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, opt := newTestStore(t, 4, 2)
	mustBucket(t, s, "race")
	for round := range 3 {
		key := fmt.Sprintf("key%d", round)
		const n = 16
		var wg sync.WaitGroup
		errs := make([]error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := randBytes(10<<10, uint64(i))
				<-start
				_, errs[i] = s.Put(ctx, "race", key, bytes.NewReader(body), int64(len(body)), PutOptions{IfNoneMatch: "*"})
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("round %d: puts %d and %d both won", round, winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, ErrPreconditionFailed):
				t.Fatalf("round %d: put %d: %v", round, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no put won", round)
		}
		if got := readAll(t, s, "race", key, GetOptions{}); !bytes.Equal(got, randBytes(10<<10, uint64(winner))) {
			t.Fatalf("round %d: content is not the winner's", round)
		}
	}
	mustClean(t, s)
	if got := shardFileCount(t, opt); got != 3*4 {
		t.Fatalf("losers left shard files: %d, want %d", got, 3*4)
	}
}

func TestCompleteMultipartConditions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "mpc")
	cur := mustPut(t, s, "mpc", "exists", []byte("old"))
	for _, tc := range []struct {
		name string
		key  string
		opt  PutOptions
		want error
	}{
		{"if-none-match on existing", "exists", PutOptions{IfNoneMatch: "*"}, ErrPreconditionFailed},
		{"if-match wrong", "exists", PutOptions{IfMatch: md5hex([]byte("nope"))}, ErrPreconditionFailed},
		{"if-match on missing", "missing", PutOptions{IfMatch: cur.ETag}, ErrNoSuchKey},
		{"if-none-match bad value", "missing", PutOptions{IfNoneMatch: "abc"}, ErrInvalidArgument},
		{"if-none-match on missing", "fresh", PutOptions{IfNoneMatch: "*"}, nil},
		{"if-match right", "exists", PutOptions{IfMatch: cur.ETag}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id := mustCreateUpload(t, s, "mpc", tc.key, PutOptions{})
			p := mustPutPart(t, s, "mpc", tc.key, id, 1, []byte(tc.name))
			_, err := s.CompleteMultipartUpload(ctx, "mpc", tc.key, id, []CompletePart{{Number: 1, ETag: p.ETag}}, tc.opt)
			if !errors.Is(err, tc.want) {
				t.Fatalf("complete: %v, want %v", err, tc.want)
			}
			if tc.want == nil {
				if got := readAll(t, s, "mpc", tc.key, GetOptions{}); string(got) != tc.name {
					t.Fatalf("content %q", got)
				}
				return
			}
			// The upload survives a failed condition and can be aborted.
			if _, _, err := s.ListParts(ctx, "mpc", tc.key, id, 0, 0); err != nil {
				t.Fatalf("upload gone after a failed condition: %v", err)
			}
			if err := s.AbortMultipartUpload(ctx, "mpc", tc.key, id); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestDeleteIfMatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "delc")
	cur := mustPut(t, s, "delc", "k", []byte("v"))
	for _, tc := range []struct {
		name    string
		key     string
		ifMatch string
		want    error
		gone    bool
	}{
		{"wrong etag", "k", md5hex([]byte("other")), ErrPreconditionFailed, false},
		{"missing key", "none", cur.ETag, ErrNoSuchKey, false},
		{"right etag", "k", `"` + cur.ETag + `"`, nil, true},
		{"already deleted", "k", cur.ETag, ErrNoSuchKey, true},
	} {
		_, err := s.Delete(ctx, "delc", tc.key, DeleteOptions{IfMatch: tc.ifMatch})
		if !errors.Is(err, tc.want) {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.want)
		}
		_, herr := s.Head(ctx, "delc", "k", GetOptions{})
		if gone := errors.Is(herr, ErrNoSuchKey); gone != tc.gone {
			t.Fatalf("%s: key gone %v, want %v (%v)", tc.name, gone, tc.gone, herr)
		}
	}
}
