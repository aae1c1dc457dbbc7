package peer

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// A write stream (the body of PUT shards/{name} and PUT staged/{name}) is
// a sequence of frames, integers big-endian:
//
//	'W' off:uint64 n:uint32 data[n]  WriteAt(data, off); 1 <= n <= maxIO, off+n <= maxOffset
//	'C' frames:uint64 bytes:uint64   the end: finish the file (Close, Commit); the
//	                                 number of W frames and of their data bytes
//	'A'                              the end: abort the file
//
// The body ends right after 'C' or 'A'. A body that ends (or breaks)
// before either, holds anything else, or whose counts differ from what
// was received, is cut: the server aborts the file.
const (
	frameWrite     = 'W'
	frameCommit    = 'C'
	frameAbort     = 'A'
	frameWriteHdr  = 1 + 8 + 4
	frameCommitLen = 1 + 8 + 8
)

// errCut means a write stream ended without a valid end frame.
var errCut = errors.New("write stream cut before its end")

// putWriteHdr fills b (frameWriteHdr bytes) with a W frame's header.
func putWriteHdr(b []byte, off int64, n int) {
	b[0] = frameWrite
	binary.BigEndian.PutUint64(b[1:9], uint64(off))
	binary.BigEndian.PutUint32(b[9:13], uint32(n))
}

// commitFrame is the C frame ending a stream of frames W frames holding
// bytes data bytes.
func commitFrame(frames, bytes uint64) []byte {
	b := make([]byte, frameCommitLen)
	b[0] = frameCommit
	binary.BigEndian.PutUint64(b[1:9], frames)
	binary.BigEndian.PutUint64(b[9:17], bytes)
	return b
}

// readStream reads a write stream from br. It hands each W frame's data to
// apply, in buffers from buf (valid until the next call), until apply
// fails; the frames after that are read and dropped, so that the client
// gets the answer (with applyErr) once it ends the stream. It returns
// commit true for a valid C frame, false for an A frame, and err
// (wrapping errCut, or errBadRequest for a malformed stream) when the
// stream ends otherwise.
func readStream(br *bufio.Reader, buf func(n int) []byte, apply func(p []byte, off int64) error) (commit bool, applyErr, err error) {
	var frames, bytes uint64
	var hdr [frameCommitLen]byte
	for {
		t, err := br.ReadByte()
		if err != nil {
			return false, applyErr, cutErr(err)
		}
		switch t {
		case frameWrite:
			if _, err := io.ReadFull(br, hdr[1:frameWriteHdr]); err != nil {
				return false, applyErr, cutErr(err)
			}
			off := binary.BigEndian.Uint64(hdr[1:9])
			n := binary.BigEndian.Uint32(hdr[9:13])
			if n == 0 || n > maxIO || off > maxOffset-uint64(n) {
				return false, applyErr, fmt.Errorf("%w: frame of %d bytes at %d", errBadRequest, n, off)
			}
			frames++
			bytes += uint64(n)
			if applyErr != nil {
				if _, err := br.Discard(int(n)); err != nil {
					return false, applyErr, cutErr(err)
				}
				continue
			}
			p := buf(int(n))
			if _, err := io.ReadFull(br, p); err != nil {
				return false, applyErr, cutErr(err)
			}
			applyErr = apply(p, int64(off))
		case frameCommit:
			if _, err := io.ReadFull(br, hdr[1:frameCommitLen]); err != nil {
				return false, applyErr, cutErr(err)
			}
			f, b := binary.BigEndian.Uint64(hdr[1:9]), binary.BigEndian.Uint64(hdr[9:17])
			if f != frames || b != bytes {
				return false, applyErr, fmt.Errorf("%w: received %d frames of %d bytes, the client sent %d of %d",
					errCut, frames, bytes, f, b)
			}
			return true, applyErr, atEnd(br)
		case frameAbort:
			return false, applyErr, atEnd(br)
		default:
			return false, applyErr, fmt.Errorf("%w: frame type %#x", errBadRequest, t)
		}
	}
}

// atEnd checks that the stream ends after its end frame.
func atEnd(br *bufio.Reader) error {
	switch _, err := br.ReadByte(); {
	case err == nil:
		return fmt.Errorf("%w: bytes after the end frame", errBadRequest)
	case errors.Is(err, io.EOF):
		return nil
	default:
		return cutErr(err)
	}
}

func cutErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errCut
	}
	return fmt.Errorf("%w: %w", errCut, err)
}
