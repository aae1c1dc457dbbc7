package peer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
)

// Drive is a drive.Drive served by a peer's Server: one slot of the set,
// reached over HTTP. It is safe for concurrent use, and holds no state
// but its configuration and its cooldown.
type Drive struct {
	base       string // scheme://host
	slot       int
	slotText   string
	secret     []byte
	hc         *http.Client
	desc       string
	timeout    time.Duration
	errStalled error // the cause of an exchange ended for exceeding timeout
	cooldown   time.Duration
	downUntil  atomic.Int64 // Unix nanoseconds until which calls fail at once
	stats      counters
}

var _ drive.Drive = (*Drive)(nil)

// New returns the drive of cfg.Slot served at cfg.URL. It does not contact
// the peer: a peer that is down shows at the first call, as ErrUnreachable.
func New(cfg Config) (*Drive, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base, _ := parseBase(cfg.URL)
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	var hc http.Client
	if cfg.Client != nil {
		hc = *cfg.Client
	} else {
		hc = *newHTTPClient(timeout)
	}
	// A redirect would carry the MAC elsewhere and a stream cannot be
	// replayed; the API never redirects.
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	cooldown := cfg.Cooldown
	if cooldown == 0 {
		cooldown = DefaultCooldown
	}
	desc := cfg.Description
	if desc == "" {
		desc = fmt.Sprintf("peer:%s#%d", base, cfg.Slot)
	}
	return &Drive{
		base:       base,
		slot:       cfg.Slot,
		slotText:   strconv.Itoa(cfg.Slot),
		secret:     bytes.Clone(cfg.Secret),
		hc:         &hc,
		desc:       desc,
		timeout:    timeout,
		cooldown:   cooldown,
		errStalled: fmt.Errorf("%s: %w: no progress within %v", desc, ErrUnreachable, timeout),
	}, nil
}

// Index implements drive.Drive: the slot.
func (d *Drive) Index() int { return d.slot }

// String implements drive.Drive: the description.
func (d *Drive) String() string { return d.desc }

// expectContinueOver is the body size from which a request waits for the
// peer's 100 Continue, so that a refusal does not race the body.
const expectContinueOver = 256 << 10

// newRequest builds the signed request for sub, a path below the slot
// ("/shards/0a01").
func (d *Drive) newRequest(ctx context.Context, method, sub string, q url.Values, body io.Reader) (*http.Request, error) {
	u := d.base + pathPrefix + d.slotText + sub
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.desc, err)
	}
	if req.ContentLength > expectContinueOver {
		req.Header.Set("Expect", "100-continue")
	}
	sign(req, d.secret, d.slot, time.Now())
	return req, nil
}

// withTimeout bounds an exchange by the drive's timeout, whose expiry
// ends it with errStalled as the cause.
func (d *Drive) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, d.timeout, d.errStalled)
}

// transportErr maps the failure of an exchange run in ctx: the context's
// error when the caller's context ended, ErrUnreachable (with err) when
// the peer could not be reached, broke the exchange or stalled.
// An unreachable peer also starts the cooldown (markDown).
func (d *Drive) transportErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil {
		if errors.Is(cause, ErrUnreachable) {
			d.markDown()
			return cause
		}
		return fmt.Errorf("%s: %w", d.desc, ctx.Err())
	}
	d.markDown()
	return fmt.Errorf("%s: %w: %w", d.desc, ErrUnreachable, err)
}

// markDown starts the cooldown: calls fail at once until it ends.
func (d *Drive) markDown() {
	d.stats.unreachable.Add(1)
	if d.cooldown > 0 {
		d.downUntil.Store(time.Now().Add(d.cooldown).UnixNano())
	}
}

// cooling returns ErrUnreachable, without contacting the peer, while the
// cooldown runs.
func (d *Drive) cooling() error {
	until := d.downUntil.Load()
	if until == 0 || time.Now().UnixNano() >= until {
		return nil
	}
	d.stats.unreachable.Add(1)
	return fmt.Errorf("%s: %w: it did not answer less than %v ago; tried again after that", d.desc, ErrUnreachable, d.cooldown)
}

// badAnswer is an answer the client cannot use, which counts as the peer
// failing.
func (d *Drive) badAnswer(format string, args ...any) error {
	return fmt.Errorf("%s: %w: bad answer: %s", d.desc, ErrUnreachable, fmt.Sprintf(format, args...))
}

// do sends req and returns the response when its status is 2xx, the
// mapped error otherwise.
func (d *Drive) do(ctx context.Context, req *http.Request) (*http.Response, error) {
	if err := d.cooling(); err != nil {
		return nil, err
	}
	d.stats.requests.Add(1)
	if req.ContentLength > 0 {
		d.stats.sent.Add(uint64(req.ContentLength))
	}
	resp, err := d.hc.Do(req)
	if err != nil {
		return nil, d.transportErr(ctx, err)
	}
	if resp.StatusCode/100 != 2 {
		d.stats.refused.Add(1)
		return nil, remoteError(d.desc, resp)
	}
	return resp, nil
}

// call makes a request whose answer carries nothing but its status, or,
// with out non-nil, a JSON body decoded into out.
func (d *Drive) call(ctx context.Context, method, sub string, q url.Values, body []byte, out any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx, cancel := d.withTimeout(ctx)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := d.newRequest(ctx, method, sub, q, rd)
	if err != nil {
		return err
	}
	resp, err := d.do(ctx, req)
	if err != nil {
		return err
	}
	defer drainClose(resp)
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		if ctx.Err() != nil {
			return d.transportErr(ctx, err)
		}
		return d.badAnswer("%v", err)
	}
	return nil
}

// drainClose reads what is left of a small answer and closes it, so that
// the connection goes back to the pool.
func drainClose(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
}

func shardPath(name string) string  { return "/shards/" + url.PathEscape(name) }
func stagedPath(name string) string { return "/staged/" + url.PathEscape(name) }
func packPath(seg uint64) string    { return "/packs/" + drive.PackName(seg) }

// Create implements drive.Drive with a write stream (see stream). The
// stream runs in ctx: cancelling it breaks the writer.
func (d *Drive) Create(ctx context.Context, name string) (drive.ShardWriter, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	s, err := d.openStream(ctx, shardPath(name))
	if err != nil {
		return nil, err
	}
	return &shardWriter{s}, nil
}

// Open implements drive.Drive: it asks the peer whether the file is
// there; each ReadAt is then a ranged GET run in ctx.
func (d *Drive) Open(ctx context.Context, name string) (drive.ShardReader, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	sub := shardPath(name)
	if err := d.call(ctx, http.MethodGet, sub, url.Values{"op": {"open"}}, nil, nil); err != nil {
		return nil, err
	}
	return &reader{d: d, ctx: ctx, sub: sub}, nil
}

// Remove implements drive.Drive.
func (d *Drive) Remove(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	return d.call(ctx, http.MethodDelete, shardPath(name), nil, nil, nil)
}

// Stage implements drive.Drive with a write stream that the peer writes
// to a staged file; Commit returns once the peer's Commit did.
func (d *Drive) Stage(ctx context.Context, name string) (drive.StagedFile, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	s, err := d.openStream(ctx, stagedPath(name))
	if err != nil {
		return nil, err
	}
	return &stagedFile{s}, nil
}

// maxWalkLine bounds a line of a walk's answer (a quoted name is at most
// 4 times maxNameLen, a message is cut at maxWalkMessage).
const maxWalkLine = 64 << 10

// Walk implements drive.Drive: the peer streams the names as lines (see
// lines.go), and a walk whose answer ends without its last line fails
// with ErrUnreachable rather than look complete.
func (d *Drive) Walk(ctx context.Context, fn func(name string) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The peer must send a line at least every timeout while fn is not
	// running.
	stall := time.AfterFunc(d.timeout, func() { cancel(d.errStalled) })
	defer stall.Stop()
	req, err := d.newRequest(ctx, http.MethodGet, "/shards", nil, nil)
	if err != nil {
		return err
	}
	resp, err := d.do(ctx, req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 4096), maxWalkLine)
	var count uint64
	for sc.Scan() {
		stall.Stop()
		l, err := parseWalkLine(sc.Text())
		if err != nil {
			return d.badAnswer("walk: %v", err)
		}
		switch {
		case l.err != nil:
			l.err.Peer = d.desc
			return l.err
		case l.end:
			if l.count != count {
				return d.badAnswer("walk: %d names, the peer counted %d", count, l.count)
			}
			return nil
		}
		count++
		if err := fn(l.name); err != nil {
			return err
		}
		stall.Reset(d.timeout)
	}
	if err := sc.Err(); err != nil {
		return d.transportErr(ctx, err)
	}
	if ctx.Err() != nil {
		return d.transportErr(ctx, io.ErrUnexpectedEOF)
	}
	return d.badAnswer("walk cut after %d names", count)
}

// OpenPack implements drive.Drive. The PackFile's calls run in ctx's
// values without its cancellation (the store keeps segments open across
// requests), each bounded by the timeout.
func (d *Drive) OpenPack(ctx context.Context, seg uint64, create bool) (drive.PackFile, error) {
	c := "0"
	if create {
		c = "1"
	}
	sub := packPath(seg)
	if err := d.call(ctx, http.MethodPost, sub, url.Values{"create": {c}}, nil, nil); err != nil {
		return nil, err
	}
	return &packFile{reader: reader{d: d, ctx: context.WithoutCancel(ctx), sub: sub}}, nil
}

// RemovePack implements drive.Drive.
func (d *Drive) RemovePack(ctx context.Context, seg uint64) error {
	return d.call(ctx, http.MethodDelete, packPath(seg), nil, nil, nil)
}

// packList is the answer to GET packs and the body of POST sync/packs.
type packList struct {
	Segs []uint64 `json:"segs"`
}

// Packs implements drive.Drive.
func (d *Drive) Packs(ctx context.Context) ([]uint64, error) {
	var out packList
	if err := d.call(ctx, http.MethodGet, "/packs", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Segs, nil
}

// Sync implements drive.Drive: it returns once the peer's Sync did.
func (d *Drive) Sync(ctx context.Context) error {
	return d.call(ctx, http.MethodPost, "/sync", nil, nil, nil)
}

// SyncFiles implements drive.Drive: names go in batches of maxSyncNames,
// one after the other, each answered once the peer's SyncFiles returned.
func (d *Drive) SyncFiles(ctx context.Context, names []string) error {
	for _, name := range names {
		if err := checkName(name); err != nil {
			return err
		}
	}
	for len(names) > 0 {
		batch := names[:min(len(names), maxSyncNames)]
		names = names[len(batch):]
		if err := d.call(ctx, http.MethodPost, "/sync/files", nil, nameLines(batch), nil); err != nil {
			return err
		}
	}
	return nil
}

// SyncPacks implements drive.Drive, in batches of maxSyncSegs like
// SyncFiles.
func (d *Drive) SyncPacks(ctx context.Context, segs []uint64) error {
	for len(segs) > 0 {
		batch := segs[:min(len(segs), maxSyncSegs)]
		segs = segs[len(batch):]
		body, _ := json.Marshal(packList{Segs: batch})
		if err := d.call(ctx, http.MethodPost, "/sync/packs", nil, body, nil); err != nil {
			return err
		}
	}
	return nil
}
