package erasure

import (
	"errors"
	"fmt"
	"io"
)

// errMissing marks a shard whose source is nil.
var errMissing = errors.New("erasure: shard missing")

type hdrState uint8

const (
	hdrUnchecked hdrState = iota
	hdrOK
	hdrBad
)

// source is one shard's reader and what is known about its header.
type source struct {
	r      io.ReaderAt
	state  hdrState
	hdrLen int   // when state == hdrOK
	err    error // when state == hdrBad
}

// sources is the set of shard readers of one object. Distinct shards may be
// used from distinct goroutines; one shard from one goroutine at a time.
type sources struct {
	hdr Header
	s   []source
	// onErr, if not nil, is told of every failed shard read and every
	// failed verification (see Reader.OnShardError).
	onErr func(shard int, err error)
}

func (s *sources) noteErr(i int, err error) {
	if s.onErr != nil {
		s.onErr(i, err)
	}
}

func newSources(hdr Header, srcs []io.ReaderAt) *sources {
	s := &sources{hdr: hdr, s: make([]source, len(srcs))}
	for i, r := range srcs {
		s.s[i].r = r
	}
	return s
}

// knownBad reports whether shard i is missing or has a rejected header.
func (s *sources) knownBad(i int) bool {
	return s.s[i].r == nil || s.s[i].state == hdrBad
}

// checkHeader reads and checks shard i's header once. Format or identity
// problems stick; plain read errors are retried on the next call.
func (s *sources) checkHeader(i int) error {
	src := &s.s[i]
	switch {
	case src.r == nil:
		return errMissing
	case src.state == hdrOK:
		return nil
	case src.state == hdrBad:
		return src.err
	}
	h, n, err := ReadHeader(src.r)
	if err == nil && (!s.hdr.sameObject(h) || h.Index != i) {
		err = fmt.Errorf("%w: source %d holds shard %d of %s (%d+%d, %d bytes), want shard %d of %s (%d+%d, %d bytes)",
			ErrBadHeader, i, h.Index, h.DataID, h.K, h.M, h.Size, i, s.hdr.DataID, s.hdr.K, s.hdr.M, s.hdr.Size)
	}
	if err != nil {
		if errors.Is(err, ErrBadHeader) {
			src.state, src.err = hdrBad, err
		}
		err = fmt.Errorf("erasure: shard %d: %w", i, err)
		s.noteErr(i, err)
		return err
	}
	src.state, src.hdrLen = hdrOK, n
	return nil
}

// dataOffset is the offset of block b's chunk in shard i's file.
func (s *sources) dataOffset(i int, b int64) int64 {
	return int64(s.s[i].hdrLen) + s.hdr.blockRel(b)
}

// readChunk reads shard i's chunk of block b into chunk (checksum included,
// len(chunk) == 4+ShardSize(b)) and verifies it.
func (s *sources) readChunk(i int, b int64, chunk []byte) error {
	if err := s.checkHeader(i); err != nil {
		return err
	}
	n, err := s.s[i].r.ReadAt(chunk, s.dataOffset(i, b))
	if n < len(chunk) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		err = fmt.Errorf("erasure: shard %d block %d: %w", i, b, err)
		s.noteErr(i, err)
		return err
	}
	if !chunkOK(chunk) {
		err := fmt.Errorf("%w: shard %d block %d", ErrCorrupt, i, b)
		s.noteErr(i, err)
		return err
	}
	return nil
}
