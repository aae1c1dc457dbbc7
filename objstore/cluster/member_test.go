package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/cluster"
	"github.com/cairnstore/cairn/objstore/drive"
	"github.com/cairnstore/cairn/objstore/drive/peer"
)

// testSecret is the cluster secret of the tests.
var testSecret = bytes.Repeat([]byte("k"), peer.MinSecretLen)

// testSet is the drive set id of the tests.
const testSet = "cluster-test-set"

// threeNodes is a topology of nodes a, b and c with two drives each:
// slots 0 and 3 on a, 1 and 4 on b, 2 and 5 on c.
var threeNodes = cluster.Topology{
	Nodes:         []cluster.Node{{Name: "a", Peer: "h1:7001"}, {Name: "b", Peer: "h2:7001"}, {Name: "c", Peer: "h3:7001"}},
	DrivesPerNode: 2,
}

func TestNewMember(t *testing.T) {
	for _, tc := range []struct {
		name   string
		topo   cluster.Topology
		self   string
		secret []byte
		ok     bool
	}{
		{"first node", threeNodes, "a", testSecret, true},
		{"last node", threeNodes, "c", testSecret, true},
		{"longer secret", threeNodes, "b", append(bytes.Clone(testSecret), "more"...), true},
		{"not a node", threeNodes, "d", testSecret, false},
		{"empty name", threeNodes, "", testSecret, false},
		{"short secret", threeNodes, "a", testSecret[1:], false},
		{"no secret", threeNodes, "a", nil, false},
		{"invalid topology", cluster.Topology{Nodes: threeNodes.Nodes}, "a", testSecret, false},
		{"no nodes", cluster.Topology{DrivesPerNode: 1}, "a", testSecret, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := cluster.NewMember(tc.topo, tc.self, t.TempDir(), tc.secret, 0)
			if !tc.ok {
				if !errors.Is(err, cluster.ErrTopology) || m != nil {
					t.Fatalf("NewMember = %v, %v; want ErrTopology", m, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Self().Name != tc.self || m.Slots() != tc.topo.Slots() {
				t.Fatalf("member %+v of %d slots, want %s of %d", m.Self(), m.Slots(), tc.self, tc.topo.Slots())
			}
		})
	}
}

func TestMemberSlots(t *testing.T) {
	for _, tc := range []struct {
		self   string
		writer uint16
		holds  []int
	}{
		{"a", 1, []int{0, 3}},
		{"b", 2, []int{1, 4}},
		{"c", 3, []int{2, 5}},
	} {
		t.Run(tc.self, func(t *testing.T) {
			m := member(t, threeNodes, tc.self, t.TempDir())
			if got := m.WriterID(); got != tc.writer {
				t.Errorf("WriterID = %d, want %d (position + 1)", got, tc.writer)
			}
			if got := m.Slots(); got != 6 {
				t.Errorf("Slots = %d, want 6", got)
			}
			var holds []int
			for s := 0; s < m.Slots(); s++ {
				if m.Holds(s) {
					holds = append(holds, s)
				}
			}
			if !slices.Equal(holds, tc.holds) {
				t.Errorf("holds slots %v, want %v", holds, tc.holds)
			}
		})
	}
}

func TestMemberOpenDrive(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m := member(t, threeNodes, "b", dir)

	t.Run("own slot", func(t *testing.T) {
		for _, slot := range []int{1, 4} {
			for try, wantCreated := range []bool{true, false} {
				d, created, err := m.OpenDrive(ctx, testSet, slot)
				if err != nil {
					t.Fatal(err)
				}
				if created != wantCreated {
					t.Errorf("slot %d, open %d: created %v, want %v", slot, try+1, created, wantCreated)
				}
				l, ok := d.(drive.Local)
				if !ok {
					t.Fatalf("slot %d: %T is not a local drive", slot, d)
				}
				want := filepath.Join(dir, "drives", "d"+strconv.Itoa(slot))
				if l.Root() != want || d.Index() != slot {
					t.Errorf("slot %d: drive %s of slot %d, want %s", slot, l.Root(), d.Index(), want)
				}
			}
		}
		// The drive belongs to its set: another store's is refused.
		if _, _, err := m.OpenDrive(ctx, "another-set", 1); !errors.Is(err, drive.ErrForeign) {
			t.Errorf("open of slot 1 for another set: %v, want ErrForeign", err)
		}
	})

	t.Run("another node's slot", func(t *testing.T) {
		for slot, owner := range map[int]string{0: "a", 2: "c", 3: "a", 5: "c"} {
			d, created, err := m.OpenDrive(ctx, testSet, slot)
			if err != nil {
				t.Fatal(err)
			}
			if created {
				t.Errorf("slot %d: a peer drive reports created", slot)
			}
			if _, ok := d.(*peer.Drive); !ok {
				t.Fatalf("slot %d: %T, want a peer drive", slot, d)
			}
			if d.Index() != slot || !strings.Contains(d.String(), owner) {
				t.Errorf("slot %d: drive %q of slot %d, want one naming node %s", slot, d, d.Index(), owner)
			}
		}
		// Nothing was made locally for the others' slots.
		for _, slot := range []int{0, 2, 3, 5} {
			if _, err := os.Stat(filepath.Join(dir, "drives", "d"+strconv.Itoa(slot))); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("slot %d of another node has a local directory: %v", slot, err)
			}
		}
	})
}

// TestMemberServer runs two nodes on one host, a on 127.0.0.1 and b on
// 127.0.0.2: b's Server lends its drives, through which a's peer drives
// for b's slots write and read shards.
func TestMemberServer(t *testing.T) {
	ctx := context.Background()
	la, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = la.Close() }()
	lb, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	topo := cluster.Topology{
		Nodes:         []cluster.Node{{Name: "a", Peer: la.Addr().String()}, {Name: "b", Peer: lb.Addr().String()}},
		DrivesPerNode: 2, // a holds 0 and 2; b 1 and 3
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	a, b := member(t, topo, "a", dirA), member(t, topo, "b", dirB)

	if srv, err := b.Server(); !errors.Is(err, cluster.ErrTopology) || srv != nil {
		t.Fatalf("Server before any drive is open: %v, %v; want ErrTopology", srv, err)
	}
	// b serves its slot 1 first, then both of its slots.
	var served atomic.Pointer[peer.Server]
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Load().ServeHTTP(w, r)
	}))
	hs.Listener = lb
	hs.Start()
	defer hs.Close()
	serve := func() {
		t.Helper()
		srv, err := b.Server()
		if err != nil {
			t.Fatal(err)
		}
		served.Store(srv)
	}
	local1, _, err := b.OpenDrive(ctx, testSet, 1)
	if err != nil {
		t.Fatal(err)
	}
	serve()
	if _, err := put(ctx, a, 3, "0a1b2c3d.1", []byte("x")); !errors.Is(err, peer.ErrUnreachable) {
		t.Fatalf("write to a slot b does not serve yet: %v, want ErrUnreachable", err)
	}
	local3, _, err := b.OpenDrive(ctx, testSet, 3)
	if err != nil {
		t.Fatal(err)
	}
	serve()

	for _, tc := range []struct {
		slot  int
		local drive.Drive
	}{{1, local1}, {3, local3}} {
		body := bytes.Repeat([]byte{byte(tc.slot)}, 100<<10)
		d, err := put(ctx, a, tc.slot, "0a1b2c3d.0", body)
		if err != nil {
			t.Fatalf("slot %d: write through the peer: %v", tc.slot, err)
		}
		for what, from := range map[string]drive.Drive{"the peer": d, "b's disk": tc.local} {
			got, err := get(ctx, from, "0a1b2c3d.0")
			if err != nil || !bytes.Equal(got, body) {
				t.Fatalf("slot %d: read from %s: %d bytes, %v", tc.slot, what, len(got), err)
			}
		}
		if _, err := os.Stat(tc.local.(drive.Local).Path("0a1b2c3d.0")); err != nil {
			t.Fatalf("slot %d: the shard is not in b's drive directory: %v", tc.slot, err)
		}
		if _, err := d.Open(ctx, "0a1b2c3e.0"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("slot %d: open of an absent shard through the peer: %v", tc.slot, err)
		}
	}

	// A node with another secret is refused.
	stranger, err := cluster.NewMember(topo, "a", t.TempDir(), bytes.Repeat([]byte("z"), peer.MinSecretLen), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := put(ctx, stranger, 1, "0a1b2c3d.9", []byte("x")); !errors.Is(err, peer.ErrAuth) {
		t.Fatalf("write with another secret: %v, want ErrAuth", err)
	}
	if _, err := os.Stat(local1.(drive.Local).Path("0a1b2c3d.9")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused write left a shard: %v", err)
	}
}

// member returns node self's Member of topo on dir.
func member(t *testing.T, topo cluster.Topology, self, dir string) *cluster.Member {
	t.Helper()
	m, err := cluster.NewMember(topo, self, dir, testSecret, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// put writes shard name with body on m's drive of slot, opened anew,
// and returns that drive.
func put(ctx context.Context, m *cluster.Member, slot int, name string, body []byte) (drive.Drive, error) {
	d, _, err := m.OpenDrive(ctx, testSet, slot)
	if err != nil {
		return nil, err
	}
	w, err := d.Create(ctx, name)
	if err != nil {
		return nil, err
	}
	if _, err := w.WriteAt(body, 0); err != nil {
		w.Abort()
		return nil, err
	}
	return d, w.Close()
}

// get reads all of shard name from d.
func get(ctx context.Context, d drive.Drive, name string) ([]byte, error) {
	r, err := d.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer func() { _ = r.Close() }()
	return io.ReadAll(io.NewSectionReader(r, 0, 1<<30))
}
