package control_test

import (
	"context"
	"fmt"

	"github.com/cairnstore/cairn/frontends/control"
)

// An operation with a preview and a last-result file, as the mount shows
// it under .cairn/: read the operation to preview it, write a word to run
// it, read last-result to learn what happened.
func Example() {
	ctx := context.Background()
	fenced := true
	op := &control.Op[map[string]bool, string]{
		Words:   []string{"materialize", "cancel"},
		Preview: func(context.Context) (map[string]bool, error) { return map[string]bool{"fenced": fenced}, nil },
		Run: func(_ context.Context, word string) (string, error) {
			if word == "materialize" && fenced {
				return "FENCE_HELD", fmt.Errorf("%w: fence held", control.ErrBusy)
			}
			return "done", nil
		},
	}
	migration, lastResult := op.Files()
	root := control.NewDir().Add("catalog", control.NewDir().
		Add("migration", migration).
		Add("last-result", lastResult))

	n, _ := root.Find(ctx, "catalog/migration")
	f := n.(*control.File)
	preview, _ := f.Read(ctx)
	fmt.Print(string(preview))

	err := f.Write(ctx, []byte("materialize\n"))
	fmt.Println("write:", control.Errno(err))
	fmt.Println("last-result:", op.Last().State, *op.Last().Result)

	err = f.Write(ctx, []byte("explode\n"))
	fmt.Println("write:", control.Errno(err))
	// Output:
	// {
	//   "fenced": true
	// }
	// write: device or resource busy
	// last-result: failed FENCE_HELD
	// write: invalid argument
}
