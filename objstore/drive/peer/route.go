package peer

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/cairnstore/cairn/objstore/drive"
)

// pathPrefix starts every path of the API; the slot follows.
const pathPrefix = "/peer/v1/drives/"

// Limits of the protocol. The client splits what is larger; the server
// refuses it.
const (
	maxSlot      = 65535      // highest slot number
	maxIO        = 4 << 20    // bytes of one read, pack write or stream frame
	maxOffset    = 1 << 50    // highest end of a read or write (1 PiB)
	maxNameLen   = 255        // bytes of a shard name (NAME_MAX)
	maxSyncNames = 1024       // names of one SyncFiles request
	maxSyncSegs  = 4096       // segments of one SyncPacks request
	maxSyncBody  = 2 << 20    // bytes of a SyncFiles or SyncPacks body
	maxQueryLen  = 256        // bytes of a query
	maxPathLen   = 64 + 3*255 // bytes of an escaped path
	segNameLen   = 16         // hex digits of a segment number (drive.PackName)
)

// op is what a request asks of a drive.
type op int

const (
	opWalk       op = iota + 1 // GET    shards
	opOpen                     // GET    shards/{name}?op=open
	opRead                     // GET    shards/{name}?off=&len=
	opCreate                   // PUT    shards/{name} (write stream)
	opRemove                   // DELETE shards/{name}
	opStage                    // PUT    staged/{name} (write stream)
	opPacks                    // GET    packs
	opPackOpen                 // POST   packs/{seg}?create=0|1
	opPackRead                 // GET    packs/{seg}?off=&len=
	opPackSize                 // GET    packs/{seg}?op=size
	opPackWrite                // PUT    packs/{seg}?off= (body: the bytes)
	opPackRemove               // DELETE packs/{seg}
	opSync                     // POST   sync
	opSyncFiles                // POST   sync/files (body: {"names": [...]})
	opSyncPacks                // POST   sync/packs (body: {"segs": [...]})
)

// route is a parsed request.
type route struct {
	op     op
	slot   int
	name   string // shard name (opOpen, opRead, opCreate, opRemove, opStage)
	seg    uint64 // pack segment (opPack*)
	off    int64  // opRead, opPackRead, opPackWrite
	n      int    // bytes to read (opRead, opPackRead)
	create bool   // opPackOpen
}

// slotText returns the slot's text in an escaped path, "" when the path
// does not start with pathPrefix. It is what the MAC covers, checked
// before the path is parsed.
func slotText(path string) string {
	rest, ok := strings.CutPrefix(path, pathPrefix)
	if !ok {
		return ""
	}
	slot, _, _ := strings.Cut(rest, "/")
	return slot
}

// checkName refuses a shard name the server does not build a path from:
// drive.CheckName's, and names longer than maxNameLen or holding a NUL.
func checkName(name string) error {
	if err := drive.CheckName(name); err != nil {
		return err
	}
	if len(name) > maxNameLen || strings.IndexByte(name, 0) >= 0 {
		return fmt.Errorf("%w %q", drive.ErrInvalidName, name)
	}
	return nil
}

// parseSlot parses a slot number: decimal, no sign, no leading zero.
func parseSlot(s string) (int, bool) {
	if s == "" || len(s) > 5 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= maxSlot
}

// parseSeg parses a segment number as drive.PackName writes it: 16
// lowercase hex digits.
func parseSeg(s string) (uint64, bool) {
	if len(s) != segNameLen {
		return 0, false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return 0, false
		}
	}
	seg, err := strconv.ParseUint(s, 16, 64)
	return seg, err == nil
}

// parseRoute parses a request's method, escaped path and raw query. Errors
// wrap drive.ErrInvalidName for a bad shard name and errBadRequest for
// anything else; no name or number reaches a drive unchecked.
func parseRoute(method, path, rawQuery string) (route, error) {
	var rt route
	rest, ok := strings.CutPrefix(path, pathPrefix)
	if !ok {
		return rt, fmt.Errorf("%w: path outside %s", errBadRequest, pathPrefix)
	}
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) < 2 || len(parts) > 3 {
		return rt, fmt.Errorf("%w: path %q", errBadRequest, path)
	}
	if rt.slot, ok = parseSlot(parts[0]); !ok {
		return rt, fmt.Errorf("%w: slot %q", errBadRequest, parts[0])
	}
	kind := parts[1]
	if len(parts) == 3 && (kind == "shards" || kind == "staged") {
		// A bad name is refused as such whatever else is wrong.
		name, err := url.PathUnescape(parts[2])
		if err != nil {
			return rt, fmt.Errorf("%w: name %q: %v", drive.ErrInvalidName, parts[2], err)
		}
		if err := checkName(name); err != nil {
			return rt, err
		}
		rt.name = name
	}
	if len(path) > maxPathLen || len(rawQuery) > maxQueryLen {
		return rt, fmt.Errorf("%w: path or query too long", errBadRequest)
	}
	q, err := parseQuery(rawQuery)
	if err != nil {
		return rt, err
	}
	if len(parts) == 2 {
		switch {
		case kind == "shards" && method == http.MethodGet:
			rt.op = opWalk
		case kind == "packs" && method == http.MethodGet:
			rt.op = opPacks
		case kind == "sync" && method == http.MethodPost:
			rt.op = opSync
		default:
			return rt, fmt.Errorf("%w: %s %q", errBadRequest, method, path)
		}
		return rt, q.only()
	}
	last := parts[2]
	switch kind {
	case "shards", "staged":
		return rt, rt.shardOp(kind, method, q)
	case "packs":
		seg, ok := parseSeg(last)
		if !ok {
			return rt, fmt.Errorf("%w: segment %q", errBadRequest, last)
		}
		rt.seg = seg
		return rt, rt.packOp(method, q)
	case "sync":
		switch {
		case last == "files" && method == http.MethodPost:
			rt.op = opSyncFiles
		case last == "packs" && method == http.MethodPost:
			rt.op = opSyncPacks
		default:
			return rt, fmt.Errorf("%w: %s %q", errBadRequest, method, path)
		}
		return rt, q.only()
	}
	return rt, fmt.Errorf("%w: %s %q", errBadRequest, method, path)
}

func (rt *route) shardOp(kind, method string, q query) error {
	switch {
	case kind == "staged" && method == http.MethodPut:
		rt.op = opStage
		return q.only()
	case kind == "staged":
	case method == http.MethodPut:
		rt.op = opCreate
		return q.only()
	case method == http.MethodDelete:
		rt.op = opRemove
		return q.only()
	case method == http.MethodGet && q.has("op"):
		rt.op = opOpen
		return q.only("op=open")
	case method == http.MethodGet:
		rt.op = opRead
		return rt.readRange(q)
	}
	return fmt.Errorf("%w: %s on a %s file", errBadRequest, method, kind)
}

func (rt *route) packOp(method string, q query) error {
	switch method {
	case http.MethodPost:
		rt.op = opPackOpen
		switch q["create"] {
		case "0":
		case "1":
			rt.create = true
		default:
			return fmt.Errorf("%w: create must be 0 or 1", errBadRequest)
		}
		return q.only("create")
	case http.MethodGet:
		if q.has("op") {
			rt.op = opPackSize
			return q.only("op=size")
		}
		rt.op = opPackRead
		return rt.readRange(q)
	case http.MethodPut:
		rt.op = opPackWrite
		off, err := q.offset("off")
		if err != nil {
			return err
		}
		rt.off = off
		return q.only("off")
	case http.MethodDelete:
		rt.op = opPackRemove
		return q.only()
	}
	return fmt.Errorf("%w: %s on a pack segment", errBadRequest, method)
}

// readRange parses off and len of a read.
func (rt *route) readRange(q query) error {
	off, err := q.offset("off")
	if err != nil {
		return err
	}
	n, err := q.offset("len")
	if err != nil {
		return err
	}
	if n < 1 || n > maxIO || off > maxOffset-n {
		return fmt.Errorf("%w: read of %d bytes at %d", errBadRequest, n, off)
	}
	rt.off, rt.n = off, int(n)
	return q.only("off", "len")
}

// query is a request's query: each key once.
type query map[string]string

func parseQuery(raw string) (query, error) {
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: query: %v", errBadRequest, err)
	}
	q := query{}
	for k, v := range vals {
		if len(v) != 1 {
			return nil, fmt.Errorf("%w: query key %q given %d times", errBadRequest, k, len(v))
		}
		q[k] = v[0]
	}
	return q, nil
}

func (q query) has(key string) bool { _, ok := q[key]; return ok }

// only checks that q holds nothing but the keys given ("key" for any
// value, "key=value" for that value alone).
func (q query) only(allowed ...string) error {
	for k, v := range q {
		ok := false
		for _, a := range allowed {
			if a == k || a == k+"="+v {
				ok = true
				break
			}
		}
		if !ok {
			return fmt.Errorf("%w: query %s=%q", errBadRequest, k, v)
		}
	}
	return nil
}

// offset parses key as a byte offset or count: decimal, 0..maxOffset.
func (q query) offset(key string) (int64, error) {
	s, ok := q[key]
	if !ok || s == "" || len(s) > 16 || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("%w: %s=%q", errBadRequest, key, s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > maxOffset {
		return 0, fmt.Errorf("%w: %s=%q", errBadRequest, key, s)
	}
	return n, nil
}
