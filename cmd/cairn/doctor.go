package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/cairnstore/cairn/catalog/migrate"
	"github.com/cairnstore/cairn/catalog/strong"
	"github.com/cairnstore/cairn/frontends/health"
	"github.com/cairnstore/cairn/frontends/s3/sse"
	"github.com/cairnstore/cairn/internal/failpoint"
)

// doctorOptions are the flags of "cairn admin doctor": the data directory
// and drives as serve takes them, and an optional address to check.
type doctorOptions struct {
	// Data is the data directory (DIR of serve --data); its drives are
	// DIR/drives/d0..dN-1 unless Drive lists them.
	Data string
	// Drives is how many drives DIR/drives should hold (0: as many as
	// are found, the highest index telling of missing ones).
	Drives int
	// Drive are explicit drive paths (serve --drive).
	Drive []string
	// Endpoint, when set, is an address serve should listen on (HOST:PORT
	// or a URL): free, or answered by a cairn server.
	Endpoint string
	// WarnFreePercent and FailFreePercent are the free-space thresholds of
	// a drive, in percent of its filesystem (0: 10 and 2).
	WarnFreePercent, FailFreePercent float64
	// FUSEDevice is the FUSE device ("": /dev/fuse).
	FUSEDevice string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// checkLevel is a check's verdict.
type checkLevel int

const (
	levelOK checkLevel = iota
	levelWarn
	levelFail
)

func (l checkLevel) String() string {
	return [...]string{"OK", "WARN", "FAIL"}[l]
}

// checkResult is one line of the doctor's report.
type checkResult struct {
	Level checkLevel
	Area  string // drive, data, fuse, clock, port, env
	Msg   string // what was found
	Fix   string // what to do (WARN and FAIL)
}

// minSaneClock is the earliest plausible time when the binary carries no
// build time: this code did not exist before it.
func minSaneClock() time.Time { return time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) }

func doctorCommand(done func(invocation)) *cobra.Command {
	var o doctorOptions
	c := leafCommand("doctor", "Check a store's drives, FUSE, the clock, the port and the environment, and say what to fix",
		`  cairn admin doctor --data /var/lib/cairn
  cairn admin doctor --drive /mnt/d0 --drive /mnt/d1 --drive /mnt/d2 --address 127.0.0.1:9000`,
		func(c *cobra.Command, args []string) error {
			name := commandName(c)
			if err := noArgs(c, args); err != nil {
				return err
			}
			if o.Data == "" && len(o.Drive) == 0 {
				return usageErrorf(name, "give the data directory (--data DIR) or the drives (--drive PATH ...)")
			}
			if o.FailFreePercent < 0 || o.WarnFreePercent < 0 || o.FailFreePercent > 100 || o.WarnFreePercent > 100 {
				return usageErrorf(name, "--warn-free and --fail-free are percentages between 0 and 100")
			}
			done(invocation{name: name, opts: o, logLevel: zerolog.InfoLevel})
			return nil
		})
	f := c.Flags()
	f.StringVar(&o.Data, "data", "", "data `directory` of the store (its drives are DIR/drives/d0...)")
	f.IntVar(&o.Drives, "drives", 0, "how many drives DIR/drives should hold (0: as many as are found)")
	f.StringArrayVar(&o.Drive, "drive", nil, "explicit drive `path`; repeat once per drive (instead of --data)")
	f.StringVar(&o.Endpoint, "address", "", "`host:port` serve is to listen on: checked to be free or answered by a cairn server")
	f.Float64Var(&o.WarnFreePercent, "warn-free", 10, "warn when a drive has less than this `percent` free")
	f.Float64Var(&o.FailFreePercent, "fail-free", 2, "fail when a drive has less than this `percent` free")
	return c
}

// runDoctor checks what a server on this machine needs, without a server:
// drives (present, writable, room, one per filesystem), FUSE, the clock,
// the address and the CAIRN_* environment. It prints one line per check
// and returns errProblems when any check failed.
func runDoctor(ctx context.Context, o doctorOptions, d deps) error {
	if o.Data == "" && len(o.Drive) == 0 {
		return usageErrorf("admin doctor", "give the data directory (--data DIR) or the drives (--drive PATH ...)")
	}
	if o.WarnFreePercent == 0 {
		o.WarnFreePercent = 10
	}
	if o.FailFreePercent == 0 {
		o.FailFreePercent = 2
	}
	if o.FUSEDevice == "" {
		o.FUSEDevice = "/dev/fuse"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	var res []checkResult
	res = append(res, checkDataDir(o)...)
	res = append(res, checkDrives(o)...)
	res = append(res, checkFUSE(o)...)
	res = append(res, checkClock(o)...)
	if o.Endpoint != "" {
		res = append(res, checkPort(ctx, o.Endpoint))
	}
	res = append(res, checkEnv(os.Environ())...)
	if err := printChecks(d.stdout, res); err != nil {
		return err
	}
	for _, r := range res {
		if r.Level == levelFail {
			return fmt.Errorf("%w: doctor: a check failed", errProblems)
		}
	}
	return nil
}

// printChecks prints the results and a summary line.
func printChecks(w io.Writer, res []checkResult) error {
	var n [3]int
	var b strings.Builder
	for _, r := range res {
		n[r.Level]++
		fmt.Fprintf(&b, "%-4s  %-5s  %s\n", r.Level, r.Area, r.Msg)
		if r.Level != levelOK && r.Fix != "" {
			fmt.Fprintf(&b, "%13s%s\n", "fix: ", r.Fix)
		}
	}
	fmt.Fprintf(&b, "doctor: %d FAIL, %d WARN, %d OK\n", n[levelFail], n[levelWarn], n[levelOK])
	_, err := io.WriteString(w, b.String())
	return err
}

// probeWrite creates, writes, fsyncs and removes a file in dir: what a
// shard write does.
func probeWrite(dir string) error {
	f, err := os.CreateTemp(dir, ".cairn-doctor-*")
	if err != nil {
		return err
	}
	name := f.Name()
	_, werr := f.Write([]byte("cairn doctor probe\n"))
	serr := f.Sync()
	cerr := f.Close()
	rerr := os.Remove(name)
	return errors.Join(werr, serr, cerr, rerr)
}

// writeFix says what to do about a directory probeWrite failed in.
func writeFix(err error) string {
	switch {
	case errors.Is(err, syscall.EROFS):
		return "the filesystem is mounted read-only: remount it read-write (mount -o remount,rw) or, if the kernel did so after I/O errors, check the disk (dmesg) and replace it"
	case errors.Is(err, syscall.ENOSPC):
		return "the filesystem is full: free space or add a disk"
	case errors.Is(err, fs.ErrPermission):
		return "the server's user cannot write here: chown the directory to it, or run cairn as that user"
	default:
		return "check the disk and its filesystem (dmesg, smartctl)"
	}
}

func checkDataDir(o doctorOptions) []checkResult {
	if o.Data == "" {
		return nil
	}
	fi, err := os.Stat(o.Data)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return []checkResult{{Level: levelWarn, Area: "data", Msg: fmt.Sprintf("%s does not exist yet", o.Data),
			Fix: "serve creates it on first start; check the path if the store should be there already"}}
	case err != nil:
		return []checkResult{{Level: levelFail, Area: "data", Msg: fmt.Sprintf("%s: %v", o.Data, err), Fix: "check the path and its permissions"}}
	case !fi.IsDir():
		return []checkResult{{Level: levelFail, Area: "data", Msg: fmt.Sprintf("%s is not a directory", o.Data), Fix: "point --data at a directory"}}
	}
	if err := probeWrite(o.Data); err != nil {
		return []checkResult{{Level: levelFail, Area: "data", Msg: fmt.Sprintf("%s is not writable: %v", o.Data, err), Fix: writeFix(err)}}
	}
	return []checkResult{{Level: levelOK, Area: "data", Msg: fmt.Sprintf("%s present and writable (index in meta/, staging in tmp/)", o.Data)}}
}

// doctorDrive is one drive to check: its slot and path.
type doctorDrive struct {
	index int
	path  string
}

// drivePaths lists the drives to check: --drive, else DIR/drives/dN, up
// to Drives or to the highest index found.
func drivePaths(o doctorOptions) ([]doctorDrive, []checkResult) {
	if len(o.Drive) > 0 {
		out := make([]doctorDrive, len(o.Drive))
		for i, p := range o.Drive {
			out[i] = doctorDrive{i, p}
		}
		return out, nil
	}
	root := filepath.Join(o.Data, "drives")
	names, err := os.ReadDir(root)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, []checkResult{{Level: levelFail, Area: "drive", Msg: fmt.Sprintf("cannot list %s: %v", root, err), Fix: "check the data directory's permissions"}}
	}
	n := o.Drives
	re := regexp.MustCompile(`^d([0-9]+)$`)
	for _, e := range names {
		if m := re.FindStringSubmatch(e.Name()); m != nil {
			if i, err := strconv.Atoi(m[1]); err == nil && i+1 > n {
				n = i + 1
			}
		}
	}
	if n == 0 {
		return nil, []checkResult{{Level: levelWarn, Area: "drive", Msg: fmt.Sprintf("no drives under %s", root),
			Fix: "serve formats DIR/drives/d0..d3 on first start (--drives N for another count), or give the disks with --drive PATH"}}
	}
	out := make([]doctorDrive, n)
	for i := range out {
		out[i] = doctorDrive{i, filepath.Join(root, fmt.Sprintf("d%d", i))}
	}
	return out, nil
}

func checkDrives(o doctorOptions) []checkResult {
	drives, res := drivePaths(o)
	devs := map[uint64][]int{} // st_dev -> drives on it
	for _, dr := range drives {
		name := fmt.Sprintf("drive %d (%s)", dr.index, dr.path)
		var st unix.Stat_t
		err := unix.Stat(dr.path, &st)
		switch {
		case errors.Is(err, unix.ENOENT):
			res = append(res, checkResult{Level: levelFail, Area: "drive", Msg: name + ": missing",
				Fix: "mount the drive's disk there (or create the directory for a new, empty drive) and run 'cairn admin heal' to restore its shards"})
			continue
		case err != nil:
			res = append(res, checkResult{Level: levelFail, Area: "drive", Msg: fmt.Sprintf("%s: %v", name, err), Fix: "check the path and the disk (dmesg)"})
			continue
		case st.Mode&unix.S_IFMT != unix.S_IFDIR:
			res = append(res, checkResult{Level: levelFail, Area: "drive", Msg: name + ": not a directory", Fix: "a drive is a directory: point --drive at one"})
			continue
		}
		if err := probeWrite(dr.path); err != nil {
			res = append(res, checkResult{Level: levelFail, Area: "drive", Msg: fmt.Sprintf("%s: not writable: %v", name, err), Fix: writeFix(err)})
		} else {
			res = append(res, checkResult{Level: levelOK, Area: "drive", Msg: name + ": present, writable (create, fsync, remove)"})
		}
		devs[uint64(st.Dev)] = append(devs[uint64(st.Dev)], dr.index)
		res = append(res, checkFree(name, dr.path, o))
	}
	if len(drives) > 1 {
		shared := false
		keys := make([]uint64, 0, len(devs))
		for k := range devs {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, dev := range keys {
			if ids := devs[dev]; len(ids) > 1 {
				shared = true
				res = append(res, checkResult{Level: levelWarn, Area: "drive",
					Msg: fmt.Sprintf("drives %s share one filesystem (device %d:%d): one disk failing loses all of them, which defeats erasure coding", joinInts(ids), unix.Major(dev), unix.Minor(dev)),
					Fix: "give each drive its own disk (fine for a trial on one disk)"})
			}
		}
		if !shared && len(devs) > 1 {
			res = append(res, checkResult{Level: levelOK, Area: "drive", Msg: fmt.Sprintf("%d drives on %d distinct filesystems", len(drives), len(devs))})
		}
	}
	return res
}

func checkFree(name, path string, o doctorOptions) checkResult {
	var sf unix.Statfs_t
	if err := unix.Statfs(path, &sf); err != nil {
		return checkResult{Level: levelWarn, Area: "drive", Msg: fmt.Sprintf("%s: statfs: %v", name, err), Fix: "check the filesystem"}
	}
	unit := uint64(sf.Bsize)
	if sf.Frsize > 0 {
		unit = uint64(sf.Frsize)
	}
	total, avail := sf.Blocks*unit, sf.Bavail*unit
	if total == 0 {
		return checkResult{Level: levelWarn, Area: "drive", Msg: name + ": its filesystem reports no size", Fix: "use a disk-backed filesystem"}
	}
	pct := 100 * float64(avail) / float64(total)
	msg := fmt.Sprintf("%s: %s of %s free (%.0f%%)", name, humanize.IBytes(avail), humanize.IBytes(total), pct)
	switch {
	case pct < o.FailFreePercent:
		return checkResult{Level: levelFail, Area: "drive", Msg: msg + fmt.Sprintf(", under %.0f%%", o.FailFreePercent),
			Fix: "writes will soon fail: delete data (and let the cleaner run), or move the drive to a larger disk"}
	case pct < o.WarnFreePercent:
		return checkResult{Level: levelWarn, Area: "drive", Msg: msg + fmt.Sprintf(", under %.0f%%", o.WarnFreePercent),
			Fix: "plan for more room: delete data or add capacity"}
	}
	return checkResult{Level: levelOK, Area: "drive", Msg: msg}
}

func joinInts(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ", ")
}

func checkFUSE(o doctorOptions) []checkResult {
	var res []checkResult
	const need = "the mount (serve --mount, cairn mount) needs it; S3 and Iceberg work without"
	fi, err := os.Stat(o.FUSEDevice)
	switch {
	case err != nil:
		res = append(res, checkResult{Level: levelWarn, Area: "fuse", Msg: fmt.Sprintf("%s: %v", o.FUSEDevice, err),
			Fix: need + ": load the module (modprobe fuse) or, in a container, pass the device (--device /dev/fuse --cap-add SYS_ADMIN)"})
	case fi.Mode()&os.ModeCharDevice == 0:
		res = append(res, checkResult{Level: levelWarn, Area: "fuse", Msg: o.FUSEDevice + " is not a character device", Fix: need})
	default:
		f, err := os.OpenFile(o.FUSEDevice, os.O_RDWR, 0)
		if err != nil {
			res = append(res, checkResult{Level: levelWarn, Area: "fuse", Msg: fmt.Sprintf("%s cannot be opened: %v", o.FUSEDevice, err),
				Fix: need + ": allow this user to open it (its group, or run as root), or in a container allow the device (--device /dev/fuse)"})
		} else {
			_ = f.Close()
			res = append(res, checkResult{Level: levelOK, Area: "fuse", Msg: o.FUSEDevice + " present and openable"})
		}
	}
	helper := ""
	for _, name := range []string{"fusermount3", "fusermount"} {
		if p, err := exec.LookPath(name); err == nil {
			helper = p
			break
		}
	}
	if os.Geteuid() == 0 {
		msg := "running as root: the mount needs no fusermount"
		if helper != "" {
			msg += " (" + helper + " present)"
		}
		return append(res, checkResult{Level: levelOK, Area: "fuse", Msg: msg})
	}
	if helper == "" {
		res = append(res, checkResult{Level: levelWarn, Area: "fuse", Msg: "not root and no fusermount3 or fusermount on PATH",
			Fix: need + ": install fuse3 (apt install fuse3) or run the server as root"})
	} else {
		res = append(res, checkResult{Level: levelOK, Area: "fuse", Msg: "not root; " + helper + " mounts for us"})
	}
	conf, _ := os.ReadFile("/etc/fuse.conf")
	if !regexp.MustCompile(`(?m)^\s*user_allow_other\s*$`).Match(conf) {
		res = append(res, checkResult{Level: levelWarn, Area: "fuse", Msg: "not root and /etc/fuse.conf does not say user_allow_other",
			Fix: "the mount lets every user in (allow_other): add user_allow_other to /etc/fuse.conf, or run as root"})
	}
	return res
}

// buildTime is when the binary was built, from its VCS stamp; zero when
// it carries none.
func buildTime() time.Time {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return time.Time{}
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.time" {
			if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
				return t
			}
		}
	}
	return time.Time{}
}

func checkClock(o doctorOptions) []checkResult {
	now := o.Now()
	floor, what := buildTime(), "the binary's build time"
	if floor.IsZero() {
		floor, what = minSaneClock(), "the earliest date this version can run at"
	}
	if now.Before(floor) {
		return []checkResult{{Level: levelFail, Area: "clock", Msg: fmt.Sprintf("the clock says %s, before %s (%s)", now.UTC().Format(time.RFC3339), what, floor.UTC().Format(time.RFC3339)),
			Fix: "set the clock (timedatectl set-ntp true, or chronyd/ntpd): S3 signatures, object dates and leases depend on it"}}
	}
	res := []checkResult{{Level: levelOK, Area: "clock", Msg: fmt.Sprintf("%s, after %s", now.UTC().Format(time.RFC3339), what)}}
	if o.Data == "" {
		return res
	}
	newest, path := newestMtime(o.Data, 20000)
	if ahead := newest.Sub(now); ahead > time.Minute {
		res = append(res, checkResult{Level: levelWarn, Area: "clock",
			Msg: fmt.Sprintf("%s was modified %s in the future (%s): the clock went back", path, ahead.Round(time.Second), newest.UTC().Format(time.RFC3339)),
			Fix: "check the clock (timedatectl); lifecycle expiry and reader leases go by it"})
	}
	return res
}

// newestMtime returns the latest modification time under dir, looking
// at up to limit entries.
func newestMtime(dir string, limit int) (time.Time, string) {
	var newest time.Time
	var path string
	n := 0
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > limit {
			return filepath.SkipAll
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().After(newest) {
			newest, path = fi.ModTime(), p
		}
		return nil
	})
	return newest, path
}

// checkPort tells whether serve could listen on endpoint: free, or held
// by a cairn server already (its /metrics names cairn_build_info).
func checkPort(ctx context.Context, endpoint string) checkResult {
	hostport := endpoint
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" {
		hostport = u.Host
	}
	if _, _, err := net.SplitHostPort(hostport); err != nil {
		return checkResult{Level: levelFail, Area: "port", Msg: fmt.Sprintf("%q is not HOST:PORT or a URL: %v", endpoint, err), Fix: "give --endpoint as 127.0.0.1:9000 or http://127.0.0.1:9000"}
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", hostport)
	if err == nil {
		_ = ln.Close()
		return checkResult{Level: levelOK, Area: "port", Msg: hostport + " is free"}
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return checkResult{Level: levelFail, Area: "port", Msg: fmt.Sprintf("cannot listen on %s: %v", hostport, err),
			Fix: "use an address of this machine, and a port above 1023 unless running as root"}
	}
	if v, ok := cairnAt(ctx, hostport); ok {
		return checkResult{Level: levelOK, Area: "port", Msg: fmt.Sprintf("%s is served by cairn %s", hostport, v)}
	}
	return checkResult{Level: levelFail, Area: "port", Msg: hostport + " is taken by another program",
		Fix: "find it (ss -ltnp 'sport = :" + portOf(hostport) + "') and stop it, or serve on another --address"}
}

func portOf(hostport string) string {
	_, p, _ := net.SplitHostPort(hostport)
	return p
}

// cairnAt asks hostport whether it is a cairn server: it answers
// /health/live and its /metrics carry cairn_build_info{version=...}.
func cairnAt(ctx context.Context, hostport string) (string, bool) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	get := func(path string) (string, bool) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+hostport+path, nil)
		if err != nil {
			return "", false
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", false
		}
		defer func() { _ = resp.Body.Close() }()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
		return string(b), err == nil && resp.StatusCode == http.StatusOK
	}
	if _, ok := get(health.LivePath); !ok {
		return "", false
	}
	m, ok := get("/metrics")
	if !ok {
		return "", false
	}
	sub := regexp.MustCompile(`(?m)^cairn_build_info\{version="([^"]*)"\}`).FindStringSubmatch(m)
	if sub == nil {
		return "", false
	}
	return sub[1], true
}

// envCheck judges one CAIRN_* variable's value: an error is a FAIL, a
// warning a WARN.
type envCheck func(v string) (warning string, err error)

func envChecks() map[string]envCheck {
	urlCheck := func(v string) (string, error) {
		u, err := url.Parse(v)
		if err != nil {
			return "", err
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", errors.New("want http://HOST:PORT or https://HOST:PORT")
		}
		return "", nil
	}
	gate := func(v string) (string, error) {
		if _, ok := strong.ParseGate(v); !ok {
			return "", errors.New("not a boolean (true/false); serve takes it as false")
		}
		return "", nil
	}
	anyValue := func(string) (string, error) { return "", nil }
	return map[string]envCheck{
		"CAIRN_ENDPOINT":    urlCheck,
		"CAIRN_S3_ENDPOINT": urlCheck,
		"CAIRN_ROOT_USER":   anyValue,
		"CAIRN_ROOT_PASSWORD": func(v string) (string, error) {
			if len(v) < 8 {
				return "shorter than 8 characters: S3 clients refuse such secret keys", nil
			}
			return "", nil
		},
		"CAIRN_ACCESS_KEY": anyValue,
		"CAIRN_SECRET_KEY": anyValue,
		"CAIRN_DOMAIN": func(v string) (string, error) {
			host := regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$`)
			for _, d := range strings.Split(v, ",") {
				if d = strings.TrimSpace(d); d != "" && !host.MatchString(d) {
					return "", fmt.Errorf("%q is not a host name (comma-separated lower-case names)", d)
				}
			}
			return "", nil
		},
		"CAIRN_TABLE_CATALOG_BACKING": func(v string) (string, error) {
			if v != "" && v != backingObject && v != backingStrong {
				return "", fmt.Errorf("want %s or %s; serve refuses to start", backingObject, backingStrong)
			}
			return "", nil
		},
		"CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2":                 gate,
		"CAIRN_TABLE_CATALOG_STRONG_SNAPSHOT_V2_FLEET_CONFIRMED": gate,
		masterKeyEnv: func(v string) (string, error) {
			_, err := sse.ParseKey(v)
			return "", err
		},
		"CAIRN_FAILPOINTS": func(v string) (string, error) {
			if v == "" {
				return "", nil
			}
			if _, err := failpoint.Parse(v, append(migrate.Points(), pointBeforePointerFlip, pointAfterMetadata)); err != nil {
				return "", err
			}
			return "set: the server crashes or fails on purpose (crash tests only); unset it", nil
		},
	}
}

// checkEnv judges the CAIRN_* variables of environ (KEY=VALUE).
func checkEnv(environ []string) []checkResult {
	checks := envChecks()
	var res []checkResult
	seen := map[string]bool{}
	var names []string
	vals := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "CAIRN_") {
			names = append(names, k)
			vals[k] = v
			seen[k] = true
		}
	}
	sort.Strings(names)
	for _, k := range names {
		check, known := checks[k]
		if !known {
			res = append(res, checkResult{Level: levelWarn, Area: "env", Msg: k + " is not a variable cairn reads",
				Fix: "check its spelling (docs/operations/monitoring.md lists the variables doctor knows), or unset it"})
			continue
		}
		warn, err := check(vals[k])
		switch {
		case err != nil:
			res = append(res, checkResult{Level: levelFail, Area: "env", Msg: fmt.Sprintf("%s: %v", k, err), Fix: "correct or unset " + k})
		case warn != "":
			res = append(res, checkResult{Level: levelWarn, Area: "env", Msg: k + ": " + warn, Fix: "correct or unset " + k})
		}
	}
	switch user, pass := seen["CAIRN_ROOT_USER"], seen["CAIRN_ROOT_PASSWORD"]; {
	case user != pass:
		res = append(res, checkResult{Level: levelFail, Area: "env", Msg: "only one of CAIRN_ROOT_USER and CAIRN_ROOT_PASSWORD is set: serve and the admin commands refuse to start",
			Fix: "set both, or neither"})
	case !user:
		res = append(res, checkResult{Level: levelWarn, Area: "env", Msg: "CAIRN_ROOT_USER / CAIRN_ROOT_PASSWORD not set: serve uses the default root credentials",
			Fix: "set both for anything but a trial"})
	}
	bad := false
	for _, r := range res {
		bad = bad || r.Level == levelFail
	}
	if !bad {
		res = append(res, checkResult{Level: levelOK, Area: "env", Msg: fmt.Sprintf("%d CAIRN_* variables parse", len(names))})
	}
	return res
}
