package erasure_test

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/cairnstore/cairn/objstore/erasure"
)

// Example encodes an object into 2+2 shard files, loses two of them, reads
// the object back and heals the lost shards.
func Example() {
	ctx := context.Background()
	c, err := erasure.NewCodec(2, 2, 1<<20)
	if err != nil {
		panic(err)
	}
	files := []*erasure.MemFile{{}, {}, {}, {}}
	sinks := []io.WriterAt{files[0], files[1], files[2], files[3]}
	w, err := c.NewWriter(ctx, erasure.Header{DataID: erasure.NewDataID(), Bucket: "photos", Key: "cat.txt"}, sinks)
	if err != nil {
		panic(err)
	}
	if _, err := io.Copy(w, strings.NewReader("hello, erasure coding")); err != nil {
		panic(err)
	}
	if err := w.Close(); err != nil {
		panic(err)
	}

	// Any shard's header describes the object.
	hdr, _, err := erasure.ReadHeader(files[3])
	if err != nil {
		panic(err)
	}
	srcs := []io.ReaderAt{nil, files[1], nil, files[3]} // shards 0 and 2 lost
	r := c.NewReader(ctx, hdr, srcs, func(bad []int) { fmt.Println("bad shards:", bad) })
	b, err := io.ReadAll(r)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", b)

	healed := map[int]io.WriterAt{0: &erasure.MemFile{}, 2: &erasure.MemFile{}}
	if err := c.Rebuild(ctx, hdr, srcs, healed); err != nil {
		panic(err)
	}
	states, err := c.Verify(ctx, hdr, []io.ReaderAt{healed[0].(io.ReaderAt), files[1], healed[2].(io.ReaderAt), files[3]})
	if err != nil {
		panic(err)
	}
	fmt.Println(states)
	// Output:
	// bad shards: [0 2]
	// hello, erasure coding
	// [ok ok ok ok]
}
