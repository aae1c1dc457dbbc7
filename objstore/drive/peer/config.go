package peer

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/cairnstore/cairn/objstore/drive"
)

// MinSecretLen is the shortest cluster secret accepted (256 bits).
const MinSecretLen = 32

// DefaultTimeout is Config.Timeout when left zero.
const DefaultTimeout = time.Minute

// ErrConfig is wrapped by every error of Config.Validate and
// ServerConfig.Validate.
var ErrConfig = errors.New("peer: invalid configuration")

// Config is one remote drive slot, for New.
type Config struct {
	// URL is the peer's base URL, "http://host:port" (or https, with a
	// Client that trusts the peer's certificate). No path, query or
	// fragment: the API lives at /peer/v1/ of the host.
	URL string
	// Slot is the drive's slot in the set (Index), which the peer serves.
	Slot int
	// Secret is the cluster secret shared by every node, at least
	// MinSecretLen bytes. New copies it.
	Secret []byte
	// Client carries the requests; nil means one of the package's own
	// (dial timeout, keep-alives, 100-continue, no proxy). New uses a
	// copy that follows no redirects. Its Timeout, if any, must outlast
	// the longest shard stream (a Create to its Close); Timeout below
	// is the bound meant for stalls.
	Client *http.Client
	// Description is what String returns; empty means "peer:URL#slot".
	Description string
	// Timeout bounds each exchange with the peer: a call's round trip
	// (the peer's flushes included, so it must outlast the slowest
	// Sync), a handle's ReadAt or WriteAt, a stream's progress between
	// writes and its final answer, the gap between a walk's lines. A
	// peer that exceeds it counts as unreachable (ErrUnreachable). Zero
	// means DefaultTimeout.
	Timeout time.Duration
	// Cooldown is how long, once the peer was found unreachable, the
	// Drive's calls fail at once with ErrUnreachable instead of trying
	// it, so that a peer down or stopped costs one Timeout per Cooldown,
	// not one per request. Zero means DefaultCooldown; negative, none.
	Cooldown time.Duration
}

// DefaultCooldown is Config.Cooldown when left zero.
const DefaultCooldown = 5 * time.Second

// Validate checks the configuration.
func (c Config) Validate() error {
	if _, err := parseBase(c.URL); err != nil {
		return err
	}
	if c.Slot < 0 {
		return fmt.Errorf("%w: slot %d is negative", ErrConfig, c.Slot)
	}
	if len(c.Secret) < MinSecretLen {
		return fmt.Errorf("%w: the secret has %d bytes, at least %d needed", ErrConfig, len(c.Secret), MinSecretLen)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("%w: negative timeout %v", ErrConfig, c.Timeout)
	}
	return nil
}

// parseBase checks a peer's base URL and returns it without a trailing
// slash.
func parseBase(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%w: URL %q: %w", ErrConfig, raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%w: URL %q: scheme must be http or https", ErrConfig, raw)
	}
	if u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("%w: URL %q: want scheme://host:port alone", ErrConfig, raw)
	}
	return u.Scheme + "://" + u.Host, nil
}

// ServerConfig is what a Server serves, for NewServer.
type ServerConfig struct {
	// Secret is the cluster secret, at least MinSecretLen bytes.
	// NewServer copies it.
	Secret []byte
	// Drives are the local drives served, each under its Index; two
	// with the same Index are refused.
	Drives []drive.Drive
	// Now is the clock requests' timestamps are checked against; nil
	// means time.Now.
	Now func() time.Time
}

// Validate checks the configuration.
func (c ServerConfig) Validate() error {
	if len(c.Secret) < MinSecretLen {
		return fmt.Errorf("%w: the secret has %d bytes, at least %d needed", ErrConfig, len(c.Secret), MinSecretLen)
	}
	seen := map[int]bool{}
	for i, d := range c.Drives {
		if d == nil {
			return fmt.Errorf("%w: drive %d is nil", ErrConfig, i)
		}
		if d.Index() < 0 || d.Index() > maxSlot {
			return fmt.Errorf("%w: drive %s has slot %d, outside 0..%d", ErrConfig, d, d.Index(), maxSlot)
		}
		if seen[d.Index()] {
			return fmt.Errorf("%w: two drives with slot %d", ErrConfig, d.Index())
		}
		seen[d.Index()] = true
	}
	return nil
}

// newHTTPClient is the client used when Config.Client is nil: a transport
// of its own sized for many concurrent shard streams to one host.
func newHTTPClient(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: min(timeout, 10*time.Second), KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		DialContext:           dialer.DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   min(timeout, 10*time.Second),
		ExpectContinueTimeout: min(timeout, 10*time.Second),
		DisableCompression:    true,
		WriteBufferSize:       64 << 10,
		ReadBufferSize:        64 << 10,
	}}
}
