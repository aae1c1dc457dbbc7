package sigv4

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
)

// Limits of the aws-chunked decoder. They bound its memory use; chunk data is
// streamed and never buffered whole.
const (
	maxChunkLine    = 4096 // one chunk header or trailer line, with its CRLF
	maxTrailerLines = 16   // trailer header lines, blank lines included
	maxEndPadding   = 8    // CR/LF bytes tolerated after the last chunk or trailer
)

const chunkSigExt = "chunk-signature="

// trailerSigName is the trailer line carrying the trailer signature.
const trailerSigName = "x-amz-trailer-signature"

// trailerField is one trailer header line, name lowercased.
type trailerField struct{ name, value string }

type chunkState int

const (
	stateHeader   chunkState = iota // expecting a chunk header line
	stateData                       // inside chunk data
	stateChunkEnd                   // chunk data read; CRLF and signature pending
	stateDone                       // final chunk and trailers verified
)

// chunkReader decodes an aws-chunked body:
//
//	hex-size[;chunk-signature=sig] CRLF data CRLF ... 0[;chunk-signature=sig] CRLF
//	[trailer-name:value CRLF ... [x-amz-trailer-signature:sig CRLF]] CRLF
//
// In signed mode every chunk carries a signature chained from the previous
// one (the first from the seed, the request signature); the trailer, when
// expected, carries its own. Decoded bytes are handed out as they arrive; a
// mismatch is reported by a later Read, at the latest in place of io.EOF.
type chunkReader struct {
	br       *bufio.Reader
	sg       *signer // nil: unsigned chunks
	trailer  bool    // a trailer section follows the final chunk
	declared int64   // x-amz-decoded-content-length, -1 if unknown

	state    chunkState
	prev     []byte    // previous signature
	chunkSig []byte    // declared signature of the current chunk
	h        hash.Hash // SHA-256 of the current chunk (signed mode)
	remain   int64     // data bytes left in the current chunk
	total    int64     // data bytes decoded so far
	trailers []trailerField
	err      error
}

func newChunkReader(r io.Reader, sg *signer, seed []byte, trailer bool, declared int64) *chunkReader {
	c := &chunkReader{
		br:       bufio.NewReaderSize(r, maxChunkLine),
		sg:       sg,
		trailer:  trailer,
		declared: declared,
		prev:     seed,
	}
	if sg != nil {
		c.h = sha256.New()
	}
	return c
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for c.err == nil {
		switch c.state {
		case stateHeader:
			c.err = c.readHeader()
		case stateData:
			if len(p) == 0 {
				return 0, nil
			}
			if int64(len(p)) > c.remain {
				p = p[:c.remain]
			}
			n, err := c.br.Read(p)
			if c.h != nil {
				c.h.Write(p[:n])
			}
			c.remain -= int64(n)
			c.total += int64(n)
			if c.remain == 0 {
				c.state = stateChunkEnd
			}
			if err == io.EOF && c.remain > 0 {
				c.err = fmt.Errorf("%w: body ends inside a chunk (%d bytes missing)", ErrIncompleteBody, c.remain)
			} else if err != nil && err != io.EOF {
				c.err = err
			}
			if n > 0 {
				return n, nil
			}
		case stateChunkEnd:
			if c.err = c.readCRLF(); c.err == nil {
				c.err = c.verifyChunk()
				c.state = stateHeader
			}
		case stateDone:
			c.err = io.EOF
		}
	}
	return 0, c.err
}

// readLine reads one line ending in LF, without the LF (and without a CR
// before it when trimCR). It returns io.EOF only for a clean end of input
// before any byte of the line.
func (c *chunkReader) readLine(trimCR bool) (string, error) {
	line, err := c.br.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return "", fmt.Errorf("%w: line longer than %d bytes", ErrMalformedChunk, maxChunkLine)
	case err == io.EOF && len(line) == 0:
		return "", io.EOF
	case err == io.EOF:
		return "", fmt.Errorf("%w: body ends inside a chunk line", ErrIncompleteBody)
	case err != nil:
		return "", err
	}
	line = line[:len(line)-1]
	if trimCR {
		line = bytes.TrimSuffix(line, []byte{'\r'})
	}
	return string(line), nil
}

func (c *chunkReader) readHeader() error {
	line, err := c.readLine(false)
	if err == io.EOF {
		return fmt.Errorf("%w: body ends before the final chunk", ErrIncompleteBody)
	}
	if err != nil {
		return err
	}
	if !strings.HasSuffix(line, "\r") {
		return fmt.Errorf("%w: chunk header %q does not end in CRLF", ErrMalformedChunk, truncate(line, 80))
	}
	line = strings.TrimSuffix(line, "\r")
	sizeStr, ext, hasExt := strings.Cut(line, ";")
	size, err := parseChunkSize(sizeStr)
	if err != nil {
		return err
	}
	if c.sg != nil {
		sigHex, ok := strings.CutPrefix(ext, chunkSigExt)
		if !hasExt || !ok {
			return fmt.Errorf("%w: chunk header %q has no chunk-signature", ErrMalformedChunk, truncate(line, 80))
		}
		if c.chunkSig, err = hex.DecodeString(sigHex); err != nil || len(c.chunkSig) != sha256.Size {
			return fmt.Errorf("%w: chunk-signature %q", ErrMalformedChunk, truncate(sigHex, 80))
		}
	}
	if c.declared >= 0 && size > c.declared-c.total {
		return fmt.Errorf("%w: chunk of %d bytes exceeds x-amz-decoded-content-length %d", ErrMalformedChunk, size, c.declared)
	}
	if size > 0 {
		c.remain = size
		c.state = stateData
		return nil
	}
	if err := c.verifyChunk(); err != nil {
		return err
	}
	if c.trailer {
		err = c.readTrailers()
	} else {
		err = c.readEnd()
	}
	if err != nil {
		return err
	}
	c.state = stateDone
	return nil
}

// parseChunkSize parses 1 to 16 hex digits.
func parseChunkSize(s string) (int64, error) {
	if s == "" || len(s) > 16 {
		return 0, fmt.Errorf("%w: chunk size %q", ErrMalformedChunk, truncate(s, 40))
	}
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return 0, fmt.Errorf("%w: chunk size %q", ErrMalformedChunk, truncate(s, 40))
		}
	}
	n, err := strconv.ParseInt(s, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: chunk size %q: %v", ErrMalformedChunk, s, err)
	}
	return n, nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func (c *chunkReader) readCRLF() error {
	var b [2]byte
	if _, err := io.ReadFull(c.br, b[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return fmt.Errorf("%w: body ends after chunk data", ErrIncompleteBody)
		}
		return err
	}
	if b != [2]byte{'\r', '\n'} {
		return fmt.Errorf("%w: chunk data not followed by CRLF (chunk longer than its size?)", ErrMalformedChunk)
	}
	return nil
}

// verifyChunk checks the signature of the chunk just read (signed mode).
func (c *chunkReader) verifyChunk() error {
	if c.sg == nil {
		return nil
	}
	want := c.sg.signChunk(c.prev, c.h.Sum(nil))
	c.h.Reset()
	if !hmac.Equal(want, c.chunkSig) {
		return fmt.Errorf("%w: chunk signature after %d bytes", ErrSignatureMismatch, c.total)
	}
	c.prev = want
	return nil
}

// readEnd accepts the end of the body after the final chunk: at most a few
// CR/LF bytes, then EOF.
func (c *chunkReader) readEnd() error {
	for i := 0; ; i++ {
		b, err := c.br.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if (b != '\r' && b != '\n') || i >= maxEndPadding {
			return fmt.Errorf("%w: data after the final chunk", ErrMalformedChunk)
		}
	}
}

// readTrailers reads the trailer section after the final chunk. Lines may end
// in CRLF or LF (minio-go ends trailer fields with a bare LF); blank lines
// before the first field are skipped. Unsigned trailers end at a blank line
// or EOF; signed trailers end with the x-amz-trailer-signature line, which is
// then verified against the canonical form "name:value\n" of each field (an
// empty signed trailer may omit it; Body then misses any announced checksum).
func (c *chunkReader) readTrailers() error {
	var sigHex string
	gotSig := false
	for i := 0; ; i++ {
		if i >= maxTrailerLines {
			return fmt.Errorf("%w: more than %d trailer lines", ErrMalformedChunk, maxTrailerLines)
		}
		line, err := c.readLine(true)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if line == "" {
			if c.sg == nil && len(c.trailers) > 0 {
				break
			}
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return fmt.Errorf("%w: trailer line %q", ErrMalformedChunk, truncate(line, 80))
		}
		name = strings.ToLower(strings.TrimSpace(name))
		value = strings.TrimSpace(value)
		if name == "" {
			return fmt.Errorf("%w: trailer line %q", ErrMalformedChunk, truncate(line, 80))
		}
		if c.sg != nil && name == trailerSigName {
			sigHex, gotSig = value, true
			break
		}
		c.trailers = append(c.trailers, trailerField{name, value})
	}
	if c.sg != nil && (gotSig || len(c.trailers) > 0) {
		if !gotSig {
			return fmt.Errorf("%w: no %s in the trailer", ErrMalformedChunk, trailerSigName)
		}
		sig, err := hex.DecodeString(sigHex)
		if err != nil || len(sig) != sha256.Size {
			return fmt.Errorf("%w: trailer signature %q", ErrMalformedChunk, truncate(sigHex, 80))
		}
		var canon strings.Builder
		for _, f := range c.trailers {
			canon.WriteString(f.name + ":" + f.value + "\n")
		}
		want := c.sg.signTrailer(c.prev, canon.String())
		if !hmac.Equal(want, sig) {
			return fmt.Errorf("%w: trailer signature", ErrSignatureMismatch)
		}
		c.prev = want
	}
	return c.readEnd()
}

// trailerValue returns the value of the trailer field name (lowercase).
func (c *chunkReader) trailerValue(name string) (string, bool) {
	for _, f := range c.trailers {
		if f.name == name {
			return f.value, true
		}
	}
	return "", false
}
