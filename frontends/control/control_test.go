package control

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func constFile(doc string) *File {
	return &File{Read: func(context.Context) ([]byte, error) { return []byte(doc), nil }}
}

func names(entries []Entry) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

// testTree is
//
//	a/x, a/y (writable), b/ (computed: w1/doc, w2/doc), z
func testTree(computed func(context.Context) ([]Entry, error)) *Dir {
	y := &File{
		Read:  func(context.Context) ([]byte, error) { return []byte("y\n"), nil },
		Write: func(context.Context, []byte) error { return nil },
	}
	b := NewDirFunc(computed).Add("static", constFile("s\n"))
	return NewDir().
		Add("a", NewDir().Add("x", constFile("x\n")).Add("y", y)).
		Add("b", b).
		Add("z", constFile("z\n"))
}

func TestFind(t *testing.T) {
	t.Parallel()
	w1, w2 := NewDir().Add("doc", constFile("w1\n")), NewDir().Add("doc", constFile("w2\n"))
	root := testTree(func(context.Context) ([]Entry, error) {
		return []Entry{{"w1", w1}, {"w2", w2}}, nil
	})
	tests := []struct {
		path     string
		wantDoc  string // for files
		wantDir  []string
		writable bool
		err      error
	}{
		{path: "", wantDir: []string{"a", "b", "z"}},
		{path: "/", wantDir: []string{"a", "b", "z"}},
		{path: "a", wantDir: []string{"x", "y"}},
		{path: "/a/", wantDir: []string{"x", "y"}},
		{path: "a/x", wantDoc: "x\n"},
		{path: "a/y", wantDoc: "y\n", writable: true},
		{path: "z", wantDoc: "z\n"},
		{path: "b", wantDir: []string{"static", "w1", "w2"}},
		{path: "b/static", wantDoc: "s\n"},
		{path: "b/w2/doc", wantDoc: "w2\n"},
		{path: "b/w3", err: ErrNotFound},
		{path: "nope", err: ErrNotFound},
		{path: "a/x/more", err: ErrNotFound},
		{path: "a//x", err: ErrNotFound},
		{path: "a/../z", err: ErrNotFound},
		{path: "./a", err: ErrNotFound},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			n, err := root.Find(ctx, tc.path)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("Find: %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch n := n.(type) {
			case *Dir:
				if tc.wantDir == nil {
					t.Fatalf("got a directory, want a file")
				}
				entries, err := n.List(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if got := names(entries); !slices.Equal(got, tc.wantDir) {
					t.Errorf("List = %q, want %q", got, tc.wantDir)
				}
			case *File:
				if tc.wantDir != nil {
					t.Fatalf("got a file, want a directory")
				}
				doc, err := n.Read(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if string(doc) != tc.wantDoc {
					t.Errorf("Read = %q, want %q", doc, tc.wantDoc)
				}
				if n.Writable() != tc.writable {
					t.Errorf("Writable = %v, want %v", n.Writable(), tc.writable)
				}
			default:
				t.Fatalf("node %T", n)
			}
		})
	}
}

func TestDirFuncErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	tests := []struct {
		name    string
		entries []Entry
		err     error
		errText string
	}{
		{name: "list fails", err: boom},
		{name: "clash with static", entries: []Entry{{"static", NewDir()}}, errText: "listed twice"},
		{name: "duplicate", entries: []Entry{{"w", NewDir()}, {"w", NewDir()}}, errText: "listed twice"},
		{name: "bad name", entries: []Entry{{"a/b", NewDir()}}, errText: "invalid name"},
		{name: "nil node", entries: []Entry{{"w", nil}}, errText: "neither"},
		{name: "file without read", entries: []Entry{{"w", &File{}}}, errText: "needs Read"},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := testTree(func(context.Context) ([]Entry, error) { return tc.entries, tc.err })
			b, err := root.Find(ctx, "b")
			if err != nil {
				t.Fatal(err)
			}
			_, err = b.(*Dir).List(ctx)
			if err == nil || (tc.err != nil && !errors.Is(err, tc.err)) || !strings.Contains(err.Error(), tc.errText) {
				t.Errorf("List: %v, want %v %q", err, tc.err, tc.errText)
			}
			// Static children are found without listing.
			if _, err := root.Find(ctx, "b/static"); err != nil {
				t.Errorf("static child: %v", err)
			}
			if _, err := root.Find(ctx, "b/other"); err == nil || errors.Is(err, ErrNotFound) {
				t.Errorf("computed lookup: %v, want the listing error", err)
			}
		})
	}
}

func TestAddPanics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		child string
		node  Node
	}{
		{"empty name", "", NewDir()},
		{"dot", ".", NewDir()},
		{"dot dot", "..", NewDir()},
		{"slash", "a/b", NewDir()},
		{"nul", "a\x00", NewDir()},
		{"nil node", "n", nil},
		{"nil dir", "n", (*Dir)(nil)},
		{"nil file", "n", (*File)(nil)},
		{"file without read", "n", &File{Write: func(context.Context, []byte) error { return nil }}},
		{"taken", "taken", NewDir()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDir().Add("taken", constFile(""))
			defer func() {
				if recover() == nil {
					t.Errorf("Add(%q, %T) did not panic", tc.child, tc.node)
				}
			}()
			d.Add(tc.child, tc.node)
		})
	}
}

func TestAddConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := NewDir()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 100; i++ {
			d.Add(fmt.Sprint(i), constFile(""))
		}
	}()
	for i := 0; i < 100; i++ {
		if _, err := d.List(ctx); err != nil {
			t.Fatal(err)
		}
		_, _ = d.Lookup(ctx, "50")
	}
	<-done
	entries, err := d.List(ctx)
	if err != nil || len(entries) != 100 || entries[99].Name != "99" {
		t.Fatalf("List: %d entries, %v", len(entries), err)
	}
}

func TestReadOnlyJSON(t *testing.T) {
	t.Parallel()
	type doc struct {
		Name string `json:"name"`
		N    int    `json:"n"`
	}
	boom := fmt.Errorf("%w: nothing here", ErrNotFound)
	tests := []struct {
		name string
		read func(context.Context) (doc, error)
		want string
		err  error
	}{
		{name: "ok", read: func(context.Context) (doc, error) { return doc{"a<b>", 2}, nil },
			want: "{\n  \"name\": \"a<b>\",\n  \"n\": 2\n}\n"},
		{name: "error", read: func(context.Context) (doc, error) { return doc{}, boom }, err: ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := ReadOnly(tc.read)
			if f.Writable() {
				t.Error("ReadOnly file is writable")
			}
			got, err := f.Read(context.Background())
			if !errors.Is(err, tc.err) || string(got) != tc.want {
				t.Errorf("Read = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
	if _, err := JSON(func() {}); err == nil {
		t.Error("JSON of a func: no error")
	}
}
