package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/objstore/cluster"
	"github.com/cairnstore/cairn/objstore/meta"
)

// nodes builds n nodes named n0, n1... on ports 7001, 7002... of host.
func nodes(n int, host string) []cluster.Node {
	out := make([]cluster.Node, n)
	for i := range out {
		out[i] = cluster.Node{Name: fmt.Sprintf("n%d", i), Peer: fmt.Sprintf("%s:%d", host, 7001+i)}
	}
	return out
}

func TestParseNodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []cluster.Node // nil: an error wrapping ErrTopology
	}{
		{"one", "a=h1:7001", []cluster.Node{{Name: "a", Peer: "h1:7001"}}},
		{"three", "a=h1:7001,b=h2:7001,c=10.0.0.3:7002", []cluster.Node{
			{Name: "a", Peer: "h1:7001"}, {Name: "b", Peer: "h2:7001"}, {Name: "c", Peer: "10.0.0.3:7002"}}},
		{"spaces around parts", " a=h1:1 , b=h2:2 ", []cluster.Node{{Name: "a", Peer: "h1:1"}, {Name: "b", Peer: "h2:2"}}},
		{"ipv6", "a=[::1]:7001", []cluster.Node{{Name: "a", Peer: "[::1]:7001"}}},
		{"address with '='", "a=b=c:1", []cluster.Node{{Name: "a", Peer: "b=c:1"}}},
		// ParseNodes only splits; Validate judges names and addresses.
		{"empty name and address", "=", []cluster.Node{{}}},
		{"empty", "", nil},
		{"missing '='", "a:7001", nil},
		{"second missing '='", "a=h:1,b", nil},
		{"trailing comma", "a=h:1,", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cluster.ParseNodes(tc.in)
			if tc.want == nil {
				if !errors.Is(err, cluster.ErrTopology) {
					t.Fatalf("ParseNodes(%q) = %v, %v; want ErrTopology", tc.in, got, err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseNodes(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes string // the --cluster form
		n     int    // nodes(n, "h") when nodes is empty
		per   int
		ok    bool
	}{
		{"one node", "a=h:1", 0, 1, true},
		{"three nodes", "a=h1:7001,b=h2:7001,c=h3:7001", 0, 2, true},
		{"same host, other ports", "a=h:7001,b=h:7002", 0, 1, true},
		{"names of every allowed kind", "a-b_C.9=h:65535", 0, 4, true},
		{"ipv6 host", "a=[::1]:7001,b=[::2]:7001", 0, 1, true},
		{"63-letter name", strings.Repeat("x", 63) + "=h:1", 0, 1, true},
		{"64 nodes, 4 drives each", "", cluster.MaxNodes, 4, true},
		{"256 slots", "", 32, 8, true},

		{"no nodes", "", 0, 1, false},
		{"too many nodes", "", cluster.MaxNodes + 1, 1, false},
		{"zero drives", "a=h:1", 0, 0, false},
		{"negative drives", "a=h:1", 0, -1, false},
		{"too many slots", "", 2, 129, false},
		{"empty name", "=h:1", 0, 1, false},
		{"name with a space", "a b=h:1", 0, 1, false},
		{"name with a slash", "a/b=h:1", 0, 1, false},
		{"name with a colon", "a:b=h:1", 0, 1, false},
		{"name not ascii", "ñ=h:1", 0, 1, false},
		{"64-letter name", strings.Repeat("x", 64) + "=h:1", 0, 1, false},
		{"no port", "a=h", 0, 1, false},
		{"empty port", "a=h:", 0, 1, false},
		{"port zero", "a=h:0", 0, 1, false},
		{"port too high", "a=h:65536", 0, 1, false},
		{"port not a number", "a=h:http", 0, 1, false},
		{"negative port", "a=h:-1", 0, 1, false},
		{"port with a sign", "a=h:+80", 0, 1, false},
		{"port with a leading zero", "a=h:080", 0, 1, false},
		{"drives that overflow the slot count", "a=h1:1,b=h2:1,c=h3:1,d=h4:1", 0, 1 << 62, false},
		{"no host", "a=:7001", 0, 1, false},
		{"empty address", "a=", 0, 1, false},
		{"ipv6 without brackets", "a=::1:7001", 0, 1, false},
		{"name twice", "a=h1:1,a=h2:1", 0, 1, false},
		{"address twice", "a=h:1,b=h:1", 0, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topo := cluster.Topology{Nodes: nodes(tc.n, "h"), DrivesPerNode: tc.per}
			if tc.nodes != "" {
				ns, err := cluster.ParseNodes(tc.nodes)
				if err != nil {
					t.Fatal(err)
				}
				topo.Nodes = ns
			}
			err := topo.Validate()
			if tc.ok && err != nil {
				t.Fatalf("Validate(%s × %d): %v", topo, tc.per, err)
			}
			if !tc.ok && !errors.Is(err, cluster.ErrTopology) {
				t.Fatalf("Validate(%s × %d) = %v, want ErrTopology", topo, tc.per, err)
			}
		})
	}
}

func TestTopologyAccessors(t *testing.T) {
	topo := cluster.Topology{Nodes: []cluster.Node{{"a", "h1:1"}, {"b", "h2:2"}, {"c", "[::1]:3"}}, DrivesPerNode: 2}
	if got := topo.Slots(); got != 6 {
		t.Errorf("Slots = %d, want 6", got)
	}
	// Consecutive slots are on distinct nodes: slot s is on node s mod n.
	for slot, want := range []int{0, 1, 2, 0, 1, 2} {
		if got := topo.Owner(slot); got != want {
			t.Errorf("Owner(%d) = %d, want %d", slot, got, want)
		}
	}
	for _, tc := range []struct {
		name string
		want int
	}{{"a", 0}, {"b", 1}, {"c", 2}, {"d", -1}, {"", -1}, {"A", -1}} {
		if got := topo.Index(tc.name); got != tc.want {
			t.Errorf("Index(%q) = %d, want %d", tc.name, got, tc.want)
		}
	}
	const want = "a=h1:1,b=h2:2,c=[::1]:3"
	if got := topo.String(); got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	back, err := cluster.ParseNodes(topo.String())
	if err != nil || !reflect.DeepEqual(back, topo.Nodes) {
		t.Errorf("ParseNodes(String()) = %v, %v; want %v", back, err, topo.Nodes)
	}
	if got := (cluster.Topology{}).String(); got != "" {
		t.Errorf("String of no nodes = %q", got)
	}
}

func TestRecordLoad(t *testing.T) {
	ctx := context.Background()
	topo := cluster.Topology{Nodes: nodes(3, "h"), DrivesPerNode: 2}
	other := func(f func(*cluster.Topology)) cluster.Topology {
		o := cluster.Topology{Nodes: nodes(3, "h"), DrivesPerNode: 2}
		f(&o)
		return o
	}
	load := func(t *testing.T, idx meta.Index) (cluster.Topology, bool) {
		t.Helper()
		got, ok, err := cluster.Load(ctx, idx)
		if err != nil {
			t.Fatalf("Load: %v", err)
		}
		return got, ok
	}

	t.Run("first record, then the same", func(t *testing.T) {
		idx := meta.NewMem(meta.Limits{}).Open()
		if _, ok := load(t, idx); ok {
			t.Fatal("Load of a new index reports a topology")
		}
		got, err := cluster.Record(ctx, idx, topo)
		if err != nil || !reflect.DeepEqual(got, topo) {
			t.Fatalf("first Record = %+v, %v; want %+v", got, err, topo)
		}
		if got, ok := load(t, idx); !ok || !reflect.DeepEqual(got, topo) {
			t.Fatalf("Load after Record = %+v, %v; want %+v", got, ok, topo)
		}
		for _, want := range []cluster.Topology{topo, {}} {
			got, err := cluster.Record(ctx, idx, want)
			if err != nil || !reflect.DeepEqual(got, topo) {
				t.Fatalf("Record(%s) again = %+v, %v; want the recorded %+v", want, got, err, topo)
			}
		}
		// A new handle on the same data sees it too.
		if got, ok := load(t, idx.DB().Open()); !ok || !reflect.DeepEqual(got, topo) {
			t.Fatalf("Load on a new handle = %+v, %v", got, ok)
		}
	})

	t.Run("a different topology is refused", func(t *testing.T) {
		idx := meta.NewMem(meta.Limits{}).Open()
		if _, err := cluster.Record(ctx, idx, topo); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]cluster.Topology{
			"other drive count": other(func(o *cluster.Topology) { o.DrivesPerNode = 3 }),
			"a node less":       other(func(o *cluster.Topology) { o.Nodes = o.Nodes[:2] }),
			"a node more":       {Nodes: nodes(4, "h"), DrivesPerNode: 2},
			"other address":     other(func(o *cluster.Topology) { o.Nodes[1].Peer = "h:9999" }),
			"other name":        other(func(o *cluster.Topology) { o.Nodes[2].Name = "z" }),
			"other order":       other(func(o *cluster.Topology) { o.Nodes[0], o.Nodes[1] = o.Nodes[1], o.Nodes[0] }),
		} {
			if got, err := cluster.Record(ctx, idx, want); !errors.Is(err, cluster.ErrTopology) {
				t.Errorf("%s: Record = %+v, %v; want ErrTopology", name, got, err)
			}
		}
		if got, ok := load(t, idx); !ok || !reflect.DeepEqual(got, topo) {
			t.Fatalf("a refused Record changed the topology: %+v %v", got, ok)
		}
	})

	for _, tc := range []struct {
		name   string
		layout bool // the index holds a single-node store's layout
		want   cluster.Topology
	}{
		{"no nodes on an index without a topology", false, cluster.Topology{}},
		{"an invalid topology", false, cluster.Topology{Nodes: nodes(2, "h"), DrivesPerNode: 0}},
		{"a single-node store", true, topo},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := meta.NewMem(meta.Limits{}).Open()
			if tc.layout {
				if err := idx.Update(ctx, func(tx meta.Tx) error {
					return tx.Put(meta.Settings, []byte("layout"), []byte(`{}`))
				}); err != nil {
					t.Fatal(err)
				}
			}
			if got, err := cluster.Record(ctx, idx, tc.want); !errors.Is(err, cluster.ErrTopology) {
				t.Fatalf("Record = %+v, %v; want ErrTopology", got, err)
			}
			if got, ok := load(t, idx); ok {
				t.Fatalf("a refused Record recorded %+v", got)
			}
		})
	}

	t.Run("closed index", func(t *testing.T) {
		idx := meta.NewMem(meta.Limits{}).Open()
		if err := idx.Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := cluster.Load(ctx, idx); !errors.Is(err, meta.ErrClosed) {
			t.Errorf("Load on a closed index: %v", err)
		}
		if _, err := cluster.Record(ctx, idx, topo); !errors.Is(err, meta.ErrClosed) {
			t.Errorf("Record on a closed index: %v", err)
		}
	})
}

// FuzzParseNodes feeds ParseNodes (which parses the --cluster flag)
// arbitrary text: it must not panic, and nodes it accepts that Validate
// passes must come back unchanged through Topology.String.
func FuzzParseNodes(f *testing.F) {
	for _, s := range []string{
		"a=h1:7001", "a=h1:7001,b=h2:7001,c=h3:7001", " a=h:1 , b=h:2 ", "a=[::1]:7001",
		"a=b=c:1", "=", "", ",", "a", "a=h:0", "a=h:+80", "a=h\t x:1", "a=[x,y]:1",
	} {
		f.Add(s, 1)
	}
	f.Fuzz(func(t *testing.T, s string, per int) {
		ns, err := cluster.ParseNodes(s)
		if err != nil {
			if !errors.Is(err, cluster.ErrTopology) || ns != nil {
				t.Fatalf("ParseNodes(%q) = %v, %v: a failure must wrap ErrTopology and give no nodes", s, ns, err)
			}
			return
		}
		if len(ns) == 0 {
			t.Fatalf("ParseNodes(%q) accepted no nodes", s)
		}
		topo := cluster.Topology{Nodes: ns, DrivesPerNode: per}
		if err := topo.Validate(); err != nil {
			if !errors.Is(err, cluster.ErrTopology) {
				t.Fatalf("Validate(%q): %v does not wrap ErrTopology", s, err)
			}
			return
		}
		back, err := cluster.ParseNodes(topo.String())
		if err != nil || !reflect.DeepEqual(back, ns) {
			t.Fatalf("ParseNodes(%q) = %q; through String %q: %q, %v", s, ns, topo.String(), back, err)
		}
		if per < 1 || per > 256 || topo.Slots() < 1 || topo.Slots() > 256 {
			t.Fatalf("Validate passed %d nodes of %d drives each (%d slots)", len(ns), per, topo.Slots())
		}
		for i, n := range ns {
			if topo.Index(n.Name) != i {
				t.Fatalf("%q: Index(%q) = %d, want %d", s, n.Name, topo.Index(n.Name), i)
			}
		}
	})
}
