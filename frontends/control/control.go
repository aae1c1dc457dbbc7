package control

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// Node is an entry of a control tree: a *Dir or a *File. Faces tell them
// apart with a type switch; no other type implements Node.
type Node interface {
	node()
}

// Entry is a named child of a Dir.
type Entry struct {
	Name string
	Node Node
}

// File is a control file. Read is required; Write is nil for a read-only
// file.
type File struct {
	// Read returns the file's document, by convention JSON ending in a
	// newline (see JSON). It is called once per open or GET.
	Read func(ctx context.Context) ([]byte, error)
	// Write runs the file's operation with the bytes of one write(2) on
	// the mount (so that the write itself fails with the operation's
	// errno) or with a request body over HTTP, untrimmed. It returns an
	// error wrapping one of the package's sentinels when the operation
	// is refused (see Errno).
	Write func(ctx context.Context, data []byte) error
}

func (*File) node() {}

// Writable reports whether the file takes writes. Faces refuse to open a
// file that is not writable for writing, with ErrUnsupported.
func (f *File) Writable() bool { return f.Write != nil }

// ReadOnly returns a read-only file whose document is read's value as
// indented JSON, e.g. ReadOnly(store.Status).
func ReadOnly[T any](read func(ctx context.Context) (T, error)) *File {
	return &File{Read: func(ctx context.Context) ([]byte, error) {
		v, err := read(ctx)
		if err != nil {
			return nil, err
		}
		return JSON(v)
	}}
}

// JSON encodes v the way control documents are written: indented by two
// spaces, ending in a newline, HTML characters left alone.
func JSON(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("control: encode %T: %w", v, err)
	}
	return []byte(b.String()), nil
}

// Dir is a control directory: named children in the order they were
// added, then those its list function computes (NewDirFunc). It is safe
// for concurrent use; Add may be called while a face serves the tree.
type Dir struct {
	list func(ctx context.Context) ([]Entry, error)

	mu      sync.RWMutex // protects entries
	entries []Entry
}

func (*Dir) node() {}

// NewDir returns an empty directory.
func NewDir() *Dir { return &Dir{} }

// NewDirFunc returns a directory whose children, after those added with
// Add, are computed by list on every List and Lookup (a directory per
// warehouse, say). list should return the same Node for the same name
// while it exists, so that state such as an Op's last result survives.
// Entries with an invalid name, a nil node or a name already listed make
// List fail.
func NewDirFunc(list func(ctx context.Context) ([]Entry, error)) *Dir {
	return &Dir{list: list}
}

// Add adds a child and returns d, for chaining. It panics when name is
// not a valid name (empty, ".", "..", holding "/" or NUL), is taken, or
// when n is nil or a File without Read: these are wiring mistakes.
func (d *Dir) Add(name string, n Node) *Dir {
	if err := checkEntry(Entry{Name: name, Node: n}); err != nil {
		panic(err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range d.entries {
		if e.Name == name {
			panic(fmt.Sprintf("control: %q added twice", name))
		}
	}
	d.entries = append(d.entries, Entry{Name: name, Node: n})
	return d
}

// List returns the children in order: those added, then the computed
// ones.
func (d *Dir) List(ctx context.Context) ([]Entry, error) {
	d.mu.RLock()
	out := append([]Entry(nil), d.entries...)
	d.mu.RUnlock()
	if d.list == nil {
		return out, nil
	}
	more, err := d.list(ctx)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(out)+len(more))
	for _, e := range out {
		seen[e.Name] = true
	}
	for _, e := range more {
		if err := checkEntry(e); err != nil {
			return nil, err
		}
		if seen[e.Name] {
			return nil, fmt.Errorf("control: %q listed twice", e.Name)
		}
		seen[e.Name] = true
		out = append(out, e)
	}
	return out, nil
}

// Lookup returns the child called name; ErrNotFound when there is none.
func (d *Dir) Lookup(ctx context.Context, name string) (Node, error) {
	d.mu.RLock()
	for _, e := range d.entries {
		if e.Name == name {
			d.mu.RUnlock()
			return e.Node, nil
		}
	}
	d.mu.RUnlock()
	if d.list != nil {
		entries, err := d.List(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Name == name {
				return e.Node, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: %q", ErrNotFound, name)
}

// Find resolves a slash-separated path below d ("store/status"); leading
// and trailing slashes are ignored and "" is d itself. ErrNotFound when
// an element is missing, empty, "." or "..", or names a file's child.
func (d *Dir) Find(ctx context.Context, path string) (Node, error) {
	path = strings.Trim(path, "/")
	var n Node = d
	if path == "" {
		return n, nil
	}
	for _, name := range strings.Split(path, "/") {
		dir, ok := n.(*Dir)
		if !ok {
			return nil, fmt.Errorf("%w: %q: not a directory", ErrNotFound, path)
		}
		if ValidName(name) != nil {
			return nil, fmt.Errorf("%w: %q", ErrNotFound, path)
		}
		next, err := dir.Lookup(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", path, err)
		}
		n = next
	}
	return n, nil
}

func checkEntry(e Entry) error {
	if err := ValidName(e.Name); err != nil {
		return err
	}
	switch n := e.Node.(type) {
	case *Dir:
		if n == nil {
			return fmt.Errorf("control: %q: nil directory", e.Name)
		}
	case *File:
		if n == nil || n.Read == nil {
			return fmt.Errorf("control: %q: a file needs Read", e.Name)
		}
	default:
		return fmt.Errorf("control: %q: node %T is neither *Dir nor *File", e.Name, e.Node)
	}
	return nil
}

// ValidName returns an error unless name may name a control entry: not
// empty, ".", "..", and holding no "/" or NUL. Add panics on such a name
// and List fails on one; a list function that follows outside names (a
// warehouse per directory) leaves out those ValidName refuses.
func ValidName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("control: invalid name %q", name)
	}
	return nil
}
