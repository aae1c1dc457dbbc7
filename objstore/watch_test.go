package objstore

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"
)

// nextEvent waits for one event of ch.
func nextEvent(t *testing.T, ch <-chan Event) Event {
	t.Helper()
	select {
	case e, ok := <-ch:
		if !ok {
			t.Fatal("watch channel closed")
		}
		return e
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	return Event{}
}

// noEvent checks nothing is pending on ch (events are sent before the
// mutating call returns, so nothing can still be on its way).
func noEvent(t *testing.T, ch <-chan Event) {
	t.Helper()
	select {
	case e, ok := <-ch:
		if ok {
			t.Fatalf("unexpected event %+v", e)
		}
		t.Fatal("watch channel closed")
	default:
	}
}

func TestWatch(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "wat")
	mustBucket(t, s, "wbt")
	all := s.Watch(ctx, "", "")
	bucketA := s.Watch(ctx, "wat", "")
	dirA := s.Watch(ctx, "wat", "dir/")
	bucketB := s.Watch(ctx, "wbt", "")
	deep := s.Watch(ctx, "wat", "dir/sub/")

	put := func(bucket, key string) {
		t.Helper()
		if _, err := s.Put(ctx, bucket, key, bytes.NewReader([]byte("x")), 1, PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		do   func()
		want Event
		// which watchers see it: all, wa, wa dir/, wb, wa dir/sub/
		seen [5]bool
	}{
		{"put", func() { put("wat", "dir/a") }, Event{Op: OpPut, Bucket: "wat", Key: "dir/a"}, [5]bool{true, true, true, false, false}},
		{"put outside prefix", func() { put("wat", "top") }, Event{Op: OpPut, Bucket: "wat", Key: "top"}, [5]bool{true, true, false, false, false}},
		{"put other bucket", func() { put("wbt", "dir/a") }, Event{Op: OpPut, Bucket: "wbt", Key: "dir/a"}, [5]bool{true, false, false, true, false}},
		{"delete", func() {
			if _, err := s.Delete(ctx, "wat", "top", DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}, Event{Op: OpDelete, Bucket: "wat", Key: "top"}, [5]bool{true, true, false, false, false}},
		{"rename into prefix", func() {
			put("wat", "top")
			drain(all, bucketA)
			if err := s.Rename(ctx, "wat", "top", "dir/top", RenameOptions{}); err != nil {
				t.Fatal(err)
			}
		}, Event{Op: OpRename, Bucket: "wat", Key: "top", To: "dir/top"}, [5]bool{true, true, true, false, false}},
		{"rename out of prefix", func() {
			if err := s.Rename(ctx, "wat", "dir/a", "out", RenameOptions{}); err != nil {
				t.Fatal(err)
			}
		}, Event{Op: OpRename, Bucket: "wat", Key: "dir/a", To: "out"}, [5]bool{true, true, true, false, false}},
		{"put deep", func() { put("wat", "dir/sub/x") }, Event{Op: OpPut, Bucket: "wat", Key: "dir/sub/x"}, [5]bool{true, true, true, false, true}},
		{"rename prefix", func() {
			if _, err := s.RenamePrefix(ctx, "wat", "dir/", "moved/", RenameOptions{}); err != nil {
				t.Fatal(err)
			}
		}, Event{Op: OpRenamePrefix, Bucket: "wat", Key: "dir/", To: "moved/"}, [5]bool{true, true, true, false, true}},
		{"rename prefix elsewhere", func() {
			put("wat", "m/dir/x")
			drain(all, bucketA)
			if _, err := s.RenamePrefix(ctx, "wat", "m/", "n/", RenameOptions{}); err != nil {
				t.Fatal(err)
			}
		}, Event{Op: OpRenamePrefix, Bucket: "wat", Key: "m/", To: "n/"}, [5]bool{true, true, false, false, false}},
		{"copy", func() {
			if _, err := s.Copy(ctx, "wat", "out", "wbt", "copied", CopyOptions{}); err != nil {
				t.Fatal(err)
			}
		}, Event{Op: OpPut, Bucket: "wbt", Key: "copied"}, [5]bool{true, false, false, true, false}},
		{"complete multipart", func() {
			id := mustCreateUpload(t, s, "wat", "dir/mp", PutOptions{})
			p := mustPutPart(t, s, "wat", "dir/mp", id, 1, []byte("p"))
			if _, err := s.CompleteMultipartUpload(ctx, "wat", "dir/mp", id, []CompletePart{{Number: 1, ETag: p.ETag}}, PutOptions{}); err != nil {
				t.Fatal(err)
			}
		}, Event{Op: OpPut, Bucket: "wat", Key: "dir/mp"}, [5]bool{true, true, true, false, false}},
	}
	chans := []<-chan Event{all, bucketA, dirA, bucketB, deep}
	for _, st := range steps {
		st.do()
		for i, ch := range chans {
			if st.seen[i] {
				if e := nextEvent(t, ch); e != st.want {
					t.Errorf("%s: watcher %d got %+v, want %+v", st.name, i, e, st.want)
				}
			}
			noEvent(t, ch)
		}
	}

	// A refused write sends nothing.
	if _, err := s.Put(ctx, "wat", "out", bytes.NewReader(nil), 0, PutOptions{IfNoneMatch: "*"}); err == nil {
		t.Fatal("if-none-match put over an existing key succeeded")
	}
	for _, ch := range chans {
		noEvent(t, ch)
	}

	// Cancelling a watch closes its channel only.
	wctx, wcancel := context.WithCancel(ctx)
	short := s.Watch(wctx, "wat", "")
	wcancel()
	waitClosed(t, short)
	put("wat", "after-cancel")
	if e := nextEvent(t, bucketA); e.Key != "after-cancel" {
		t.Fatalf("other watcher got %+v", e)
	}
}

// drain empties the channels of what a set-up step sent.
func drain(chans ...<-chan Event) {
	for _, ch := range chans {
		for {
			select {
			case <-ch:
				continue
			default:
			}
			break
		}
	}
}

func waitClosed(t *testing.T, ch <-chan Event) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("watch channel not closed")
		}
	}
}

func TestWatchClose(t *testing.T) {
	t.Parallel()
	s, _ := newTestStore(t, 4, 2)
	ctx := context.Background()
	ch := s.Watch(ctx, "", "")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, ch)
	// Watching a closed store gives a closed channel.
	waitClosed(t, s.Watch(ctx, "", ""))
}

// A watcher that does not read loses events and gets one OpOverflow, and
// then events again.
func TestWatchOverflow(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, _ := newTestStore(t, 4, 2)
	mustBucket(t, s, "wov")
	ch := s.Watch(ctx, "wov", "")
	n := cap(ch) + 50 // past the channel's buffer
	for i := range n {
		if _, err := s.Delete(ctx, "wov", fmt.Sprintf("k%d", i), DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got := 0
	for len(ch) > 0 {
		e := <-ch
		if e.Op != OpDelete {
			t.Fatalf("event %d: %+v", got, e)
		}
		got++
	}
	if got == 0 || got >= n {
		t.Fatalf("%d events buffered of %d", got, n)
	}
	if _, err := s.Delete(ctx, "wov", "last", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if e := nextEvent(t, ch); e.Op != OpOverflow || e.Bucket != "wov" {
		t.Fatalf("after losing events: %+v, want OpOverflow", e)
	}
	if e := nextEvent(t, ch); e.Op != OpDelete || e.Key != "last" {
		t.Fatalf("after overflow: %+v", e)
	}
}
