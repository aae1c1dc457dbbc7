package etcd_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta/etcd"
	"github.com/cairnstore/cairn/objstore/meta/etcd/etcdtest"
)

// TestRegisterNodes: nodes register under their names; a second live
// process cannot take a name; a node's registration goes with its index
// (Close revokes the session's lease).
func TestRegisterNodes(t *testing.T) {
	m := etcdtest.Start(t, etcdtest.Options{})
	cfg := etcd.Config{Endpoints: []string{m.Endpoint()}, Prefix: "/cairn/nodes/", SessionTTL: 2 * time.Second}
	ctx := context.Background()
	a, b := openIndex(t, cfg), openIndex(t, cfg)
	if err := a.Register(ctx, etcd.NodeInfo{Name: "n1", Address: "127.0.0.1:9000", Started: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	if err := a.Register(ctx, etcd.NodeInfo{Name: "n1", Address: "127.0.0.1:9001"}); err != nil {
		t.Fatalf("registering again under one's own session: %v", err)
	}
	if err := b.Register(ctx, etcd.NodeInfo{Name: "n1"}); !errors.Is(err, etcd.ErrNodeExists) {
		t.Fatalf("a second process taking n1: %v, want ErrNodeExists", err)
	}
	if err := b.Register(ctx, etcd.NodeInfo{Name: "n2"}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "a/b"} {
		if err := b.Register(ctx, etcd.NodeInfo{Name: bad}); err == nil {
			t.Errorf("node name %q accepted", bad)
		}
	}
	nodes, err := a.Nodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[0].Name != "n1" || nodes[0].Address != "127.0.0.1:9001" || nodes[1].Name != "n2" || nodes[0].TTL <= 0 {
		t.Fatalf("nodes %+v", nodes)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	nodes, err = b.Nodes(ctx)
	if err != nil || len(nodes) != 1 || nodes[0].Name != "n2" {
		t.Fatalf("after n1's index closed: %+v, %v", nodes, err)
	}
	if err := b.Register(ctx, etcd.NodeInfo{Name: "n1"}); err != nil {
		t.Fatalf("taking a name freed: %v", err)
	}
}

// TestLead: one index leads a job at a time and the others wait; a
// leader that gives the lead up hands it over; a leader whose index
// closes (its process ending) loses its lead's context at once, and
// another takes the lead within the session TTL.
func TestLead(t *testing.T) {
	m := etcdtest.Start(t, etcdtest.Options{})
	cfg := etcd.Config{Endpoints: []string{m.Endpoint()}, Prefix: "/cairn/lead/", SessionTTL: 2 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfgA, cfgB := cfg, cfg
	cfgA.Node, cfgB.Node = "a", "b"
	a, b := openIndex(t, cfgA), openIndex(t, cfgB)
	lctxA, releaseA, err := a.Lead(ctx, "cleaner")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	var lctxB context.Context
	var releaseB func()
	go func() {
		var err error
		lctxB, releaseB, err = b.Lead(ctx, "cleaner")
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("b leads while a does: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	leaders, err := b.Leaders(ctx)
	if err != nil || leaders["cleaner"] != "a" {
		t.Fatalf("Leaders = %v, %v; want a", leaders, err)
	}
	releaseA()
	if lctxA.Err() == nil {
		t.Fatal("a's lead context alive after release")
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b did not take the lead a gave up")
	}
	// b's process goes: its lead ends, and a takes it once b's session
	// is revoked.
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, rel, err := a.Lead(ctx, "cleaner")
		if err == nil {
			defer rel()
		}
		done <- err
	}()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lctxB.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("b's lead context still alive after its index closed")
	}
	releaseB()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("a led again %v after b's index closed", time.Since(start).Round(time.Millisecond))
	case <-time.After(10 * time.Second):
		t.Fatal("a did not take the lead b's end freed")
	}
}

// TestLeadCancelledWithoutEtcd: a campaign waiting for another node's
// lead returns as soon as its context ends, even with etcd gone (the
// cancelled campaign's resignation would wait for it), and the index
// then closes: a node stopping after etcd does not hang.
func TestLeadCancelledWithoutEtcd(t *testing.T) {
	m := etcdtest.Start(t, etcdtest.Options{})
	cfg := etcd.Config{Endpoints: []string{m.Endpoint()}, Prefix: "/cairn/lead-gone/", SessionTTL: 2 * time.Second}
	cfgA, cfgB := cfg, cfg
	cfgA.Node, cfgB.Node = "a", "b"
	a, b := openIndex(t, cfgA), openIndex(t, cfgB)
	if _, _, err := a.Lead(t.Context(), "cleaner"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	got := make(chan error, 1)
	go func() {
		_, _, err := b.Lead(ctx, "cleaner")
		got <- err
	}()
	time.Sleep(200 * time.Millisecond) // b campaigns behind a
	m.Stop()
	cancel()
	select {
	case err := <-got:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("campaign cancelled without etcd: %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a campaign cancelled with etcd gone did not return")
	}
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	select {
	case <-closed:
	case <-time.After(30 * time.Second):
		t.Fatal("the index did not close with etcd gone after a cancelled campaign")
	}
}
