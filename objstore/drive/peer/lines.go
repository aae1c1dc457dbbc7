package peer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Shard names cross the wire as Go-quoted strings (strconv.Quote), one per
// line, so that any name a drive holds (a newline, bytes that are not
// UTF-8) comes back as it was. A walk's answer (text/plain) is such lines,
// then one last line:
//
//	"0a01"                  a name
//	.end COUNT              the walk is over; COUNT names were sent
//	.err CODE "MESSAGE"     the walk failed (CODE as in errors.go)
//
// An answer without either last line was cut. The body of POST sync/files
// is name lines alone.

// maxWalkMessage bounds the message of an .err line.
const maxWalkMessage = 4096

func nameLine(b []byte, name string) []byte {
	b = strconv.AppendQuote(b, name)
	return append(b, '\n')
}

func endLine(count uint64) []byte {
	return fmt.Appendf(nil, ".end %d\n", count)
}

func errLine(code, msg string) []byte {
	msg = strings.ToValidUTF8(msg, "?")
	if len(msg) > maxWalkMessage {
		msg = msg[:maxWalkMessage]
	}
	b := fmt.Appendf(nil, ".err %s ", code)
	b = strconv.AppendQuote(b, msg)
	return append(b, '\n')
}

// nameLines is the body of POST sync/files for names.
func nameLines(names []string) []byte {
	var b []byte
	for _, n := range names {
		b = nameLine(b, n)
	}
	return b
}

// walkLine is one parsed line of a walk's answer.
type walkLine struct {
	name  string
	end   bool
	count uint64
	err   *RemoteError
}

var errBadLine = errors.New("malformed line")

func parseWalkLine(line string) (walkLine, error) {
	switch {
	case strings.HasPrefix(line, `"`):
		name, err := strconv.Unquote(line)
		if err != nil {
			return walkLine{}, fmt.Errorf("%w: %q", errBadLine, line)
		}
		return walkLine{name: name}, nil
	case strings.HasPrefix(line, ".end "):
		n, err := strconv.ParseUint(line[len(".end "):], 10, 64)
		if err != nil {
			return walkLine{}, fmt.Errorf("%w: %q", errBadLine, line)
		}
		return walkLine{end: true, count: n}, nil
	case strings.HasPrefix(line, ".err "):
		code, quoted, ok := strings.Cut(line[len(".err "):], " ")
		msg, err := strconv.Unquote(quoted)
		if !ok || code == "" || err != nil {
			return walkLine{}, fmt.Errorf("%w: %q", errBadLine, line)
		}
		return walkLine{err: &RemoteError{Code: code, Message: msg}}, nil
	}
	return walkLine{}, fmt.Errorf("%w: %q", errBadLine, line)
}

// readNameLines parses a POST sync/files body of at most maxSyncNames
// names. Each name is checked with checkName (drive.ErrInvalidName);
// anything else wrong is errBadRequest or errTooLarge.
func readNameLines(r io.Reader) ([]string, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxSyncBody+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errCut, err)
	}
	if len(raw) > maxSyncBody {
		return nil, fmt.Errorf("%w: names body past %d bytes", errTooLarge, maxSyncBody)
	}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 4096), maxSyncBody)
	for sc.Scan() {
		if len(names) == maxSyncNames {
			return nil, fmt.Errorf("%w: more than %d names", errTooLarge, maxSyncNames)
		}
		l, err := parseWalkLine(sc.Text())
		if err != nil || l.end || l.err != nil {
			return nil, fmt.Errorf("%w: names body: %q", errBadRequest, sc.Text())
		}
		if err := checkName(l.name); err != nil {
			return nil, err
		}
		names = append(names, l.name)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: names body: %v", errBadRequest, err)
	}
	return names, nil
}
