package fs

// Who makes a request: the ids in the FUSE request header, and the
// supplementary groups and effective capabilities of the calling thread,
// read from /proc/PID/status and kept a moment per thread. The checks
// that use them are in perm.go.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Capabilities (linux/capability.h) that pass the checks, as they pass
// the kernel's.
const (
	capChown         = 0
	capDacOverride   = 1
	capDacReadSearch = 2
	capFowner        = 3
	capFsetid        = 4
)

// caller is who makes a request: the ids the kernel sent with it and
// what its process's /proc/PID/status says of its groups and effective
// capabilities.
type caller struct {
	uid, gid uint32
	known    bool  // the request carried a caller
	creds    creds // the process's groups and capabilities
}

// credState says how far a caller's /proc entry can be trusted.
type credState int

const (
	// credsUnknown: no process to ask (PID 0: outside the server's PID
	// namespace, or a /proc that is not the server's), or one acting
	// with credentials other than its own for this request (the kernel's
	// override_creds: access(2) of a set-user-ID program, nfsd). Root
	// keeps every capability, as the kernel's own requests have them;
	// others have none and unknown groups.
	credsUnknown credState = iota
	// credsGone: the thread is gone; no capabilities, unknown groups.
	credsGone
	// credsRead: groups and capabilities as read.
	credsRead
)

// creds are a process's supplementary groups and effective capabilities.
type creds struct {
	uid, gid uint32 // the ids they were read for
	groups   []uint32
	caps     uint64
	state    credState
	at       time.Time
}

// credCache keeps each caller thread's creds for credTTL, so that the
// checks cost a /proc read per thread and period, not per request. A
// thread that drops a capability or a group keeps it here until then.
type credCache struct {
	once   sync.Once
	procOK bool      // /proc is the server's PID namespace's
	userNS [2]uint64 // device and inode of the server's user namespace

	mu sync.Mutex // protects m
	m  map[uint32]creds
}

const (
	credTTL     = 250 * time.Millisecond
	credEntries = 1024
)

// get returns the creds of thread pid, which the kernel says acts as
// uid/gid, reading them again when older than credTTL or read for other
// ids.
func (cc *credCache) get(pid, uid, gid uint32) creds {
	cc.once.Do(cc.init)
	now := time.Now()
	cc.mu.Lock()
	c, ok := cc.m[pid]
	cc.mu.Unlock()
	if ok && c.uid == uid && c.gid == gid && now.Sub(c.at) < credTTL {
		return c
	}
	c = cc.read(pid, uid, gid)
	c.uid, c.gid, c.at = uid, gid, now
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.m == nil || len(cc.m) >= credEntries {
		cc.m = map[uint32]creds{}
	}
	cc.m[pid] = c
	return c
}

// init checks that /proc/self is this process (else /proc belongs to
// another PID namespace and its numbers name other processes) and notes
// the server's user namespace.
func (cc *credCache) init() {
	self, err := os.Readlink("/proc/self")
	if err != nil || self != strconv.Itoa(os.Getpid()) {
		return
	}
	ns, err := userNS("self")
	if err != nil {
		return
	}
	cc.procOK, cc.userNS = true, ns
}

// userNS returns the device and inode of process pid's user namespace.
func userNS(pid string) ([2]uint64, error) {
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/"+pid+"/ns/user", &st); err != nil {
		return [2]uint64{}, err
	}
	return [2]uint64{st.Dev, st.Ino}, nil
}

// read reads the creds of thread pid acting as uid/gid. Capabilities
// count only in the server's user namespace (a process in a namespace of
// its own, such as `unshare -r`, holds them over that namespace alone).
func (cc *credCache) read(pid, uid, gid uint32) creds {
	if pid == 0 || !cc.procOK {
		return creds{state: credsUnknown}
	}
	id := strconv.FormatUint(uint64(pid), 10)
	data, err := os.ReadFile("/proc/" + id + "/status")
	if err != nil {
		return creds{state: credsGone}
	}
	c, fsuid, fsgid, err := parseStatus(data)
	if err != nil {
		return creds{state: credsGone}
	}
	if fsuid != uid || fsgid != gid {
		return creds{state: credsUnknown}
	}
	if ns, err := userNS(id); err != nil || ns != cc.userNS {
		c.caps = 0
	}
	c.state = credsRead
	return c
}

func (f *FS) callerOf(ctx context.Context) caller {
	c, ok := fuse.FromContext(ctx)
	if !ok || c == nil {
		return caller{}
	}
	return caller{uid: c.Uid, gid: c.Gid, known: true, creds: f.creds.get(c.Pid, c.Uid, c.Gid)}
}

// has says whether the caller holds capability capa (see credState).
func (c caller) has(capa uint) bool {
	switch {
	case !c.known:
		return true // no caller: a request of the kernel's own
	case c.creds.state == credsRead:
		return c.creds.caps&(1<<capa) != 0
	case c.creds.state == credsUnknown:
		return c.uid == 0
	default:
		return false
	}
}

// inGroup says whether gid is the caller's primary group or one of its
// process's supplementary groups; known is false when the groups could
// not be read and gid is not the primary group.
func (c caller) inGroup(gid uint32) (member, known bool) {
	if c.gid == gid {
		return true, true
	}
	if c.creds.state != credsRead {
		return false, false
	}
	return slices.Contains(c.creds.groups, gid), true
}

// permits says whether the caller may access a node with attributes a
// (a directory when dir) in mode mask (mayRead|mayWrite|mayExec), with
// the kernel's rules: CAP_DAC_OVERRIDE passes all but executing a file
// with no execute bit, CAP_DAC_READ_SEARCH passes reading and searching
// directories and reading files; otherwise the owner, group or other
// bits decide (when the groups cannot be read, what both the group and
// the other bits grant).
func (c caller) permits(a attrs, dir bool, mask uint32) bool {
	mask &= 7
	switch {
	case mask == 0:
		return true
	case c.has(capDacOverride) && (dir || mask&mayExec == 0 || a.perm&0o111 != 0):
		return true
	case c.has(capDacReadSearch) && mask&mayWrite == 0 && (dir || mask&mayExec == 0):
		return true
	}
	var bits uint32
	switch member, known := c.inGroup(a.gid); {
	case c.uid == a.uid:
		bits = a.perm >> 6
	case (a.perm>>3)&mask == a.perm&mask:
		bits = a.perm // group and other agree
	case !known:
		bits = (a.perm >> 3) & a.perm
	case member:
		bits = a.perm >> 3
	default:
		bits = a.perm
	}
	return bits&mask == mask
}

// owns says whether the caller may act as the owner of a node with
// attributes a (chmod, utimes to a given time, the sticky bit).
func (c caller) owns(a attrs) bool { return c.uid == a.uid || c.has(capFowner) }

// parseStatus reads the Groups:, CapEff:, Uid: and Gid: lines of a
// /proc/PID/status file; fsuid and fsgid are the ids the process acts
// as on files (the fourth fields of Uid: and Gid:).
func parseStatus(status []byte) (c creds, fsuid, fsgid uint32, err error) {
	var groups, caps, uids, gids bool
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("Groups:")):
			for _, f := range bytes.Fields(line[len("Groups:"):]) {
				g, err := strconv.ParseUint(string(f), 10, 32)
				if err != nil {
					return creds{}, 0, 0, fmt.Errorf("groups: %q: %w", f, err)
				}
				c.groups = append(c.groups, uint32(g))
			}
			groups = true
		case bytes.HasPrefix(line, []byte("CapEff:")):
			v, err := strconv.ParseUint(string(bytes.TrimSpace(line[len("CapEff:"):])), 16, 64)
			if err != nil {
				return creds{}, 0, 0, fmt.Errorf("CapEff: %w", err)
			}
			c.caps, caps = v, true
		case bytes.HasPrefix(line, []byte("Uid:")):
			if fsuid, err = fourthID(line[len("Uid:"):]); err != nil {
				return creds{}, 0, 0, fmt.Errorf("status line Uid: %w", err)
			}
			uids = true
		case bytes.HasPrefix(line, []byte("Gid:")):
			if fsgid, err = fourthID(line[len("Gid:"):]); err != nil {
				return creds{}, 0, 0, fmt.Errorf("status line Gid: %w", err)
			}
			gids = true
		}
	}
	if err := sc.Err(); err != nil {
		return creds{}, 0, 0, err
	}
	if !groups || !caps || !uids || !gids {
		return creds{}, 0, 0, errors.New("no Groups:, CapEff:, Uid: or Gid: line")
	}
	return c, fsuid, fsgid, nil
}

// fourthID reads the filesystem id, the last of the four ids of a Uid:
// or Gid: line.
func fourthID(fields []byte) (uint32, error) {
	f := bytes.Fields(fields)
	if len(f) != 4 {
		return 0, fmt.Errorf("%d ids, want 4", len(f))
	}
	v, err := strconv.ParseUint(string(f[3]), 10, 32)
	return uint32(v), err
}
