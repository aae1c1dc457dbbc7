package etcd

import (
	"crypto/tls"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"go.etcd.io/etcd/client/pkg/v3/transport"

	"github.com/cairnstore/cairn/objstore/meta"
)

// Defaults of Config; etcd's own defaults for the cluster settings.
const (
	DefaultDialTimeout     = 2 * time.Second
	DefaultRequestTimeout  = 5 * time.Second
	DefaultMaxTxnOps       = 128                 // etcd --max-txn-ops
	DefaultMaxRequestBytes = 3 * 1024 * 1024 / 2 // etcd --max-request-bytes, 1.5 MiB
	DefaultMaxAttempts     = 32
	DefaultPageSize        = 256
	DefaultSessionTTL      = 10 * time.Second
)

// Config says how to reach the cluster and where the store's keys live.
// ParseURL fills one from the etcd://host:2379,host:2379/prefix form.
type Config struct {
	// Endpoints are the cluster's client URLs: "host:port" (http, or
	// https when TLS is on) or "http(s)://host:port".
	Endpoints []string
	// Prefix is put before every key of the store, so that several stores
	// share a cluster; a "/" is added when it does not end in one. Two
	// stores must not have prefixes one of which starts with the other's.
	Prefix string
	// TLS, as etcdctl takes it (--cacert, --cert, --key).
	TLS TLS
	// Username and Password authenticate to a cluster with auth enabled.
	Username string
	Password string
	// DialTimeout bounds Open's first contact with the cluster (and the
	// fetch of an auth token). Zero means DefaultDialTimeout.
	DialTimeout time.Duration
	// RequestTimeout bounds each request to the cluster within the
	// caller's context: an unreachable cluster fails a call with
	// ErrUnavailable after at most this long. Zero means
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// MaxTxnOps and MaxRequestBytes are the cluster's --max-txn-ops and
	// --max-request-bytes. Zero means etcd's defaults (128, 1.5 MiB).
	MaxTxnOps       int
	MaxRequestBytes int
	// Limits is the bound Update enforces and Limits reports. Zero means
	// the most that MaxTxnOps and MaxRequestBytes allow once the index's
	// own keys and framing are taken off (see Index.Limits); a set bound
	// must be within that.
	Limits meta.Limits
	// MaxAttempts is how many times Update runs its function before it
	// gives up on conflicts with ErrConflict. Zero means
	// DefaultMaxAttempts.
	MaxAttempts int
	// PageSize is the most keys a cursor fetches in one request (pages
	// start smaller and grow). Zero means DefaultPageSize.
	PageSize int
	// SessionTTL is how long a node's registration and its leaderships
	// of background jobs outlast the process's last word to the cluster
	// (cluster.go); whole seconds, at least 2. Zero means
	// DefaultSessionTTL.
	SessionTTL time.Duration
	// Node names this process in job leaderships; empty means
	// hostname/pid.
	Node string
	// Log receives the index's own messages (retries, unknown
	// outcomes); the zero Logger discards them.
	Log zerolog.Logger
}

// TLS names the files of a TLS client, as etcd's clients take them.
type TLS struct {
	// Enabled turns TLS on with the system's roots when no CAFile is
	// given; any file set turns it on too.
	Enabled bool
	// CAFile is the CA bundle the servers' certificates must chain to.
	CAFile string
	// CertFile and KeyFile are the client certificate and key, for a
	// cluster that authenticates clients by certificate.
	CertFile string
	KeyFile  string
}

// on reports whether TLS is used.
func (t TLS) on() bool { return t.Enabled || t.CAFile != "" || t.CertFile != "" || t.KeyFile != "" }

// config builds the tls.Config, nil when TLS is off.
func (t TLS) config() (*tls.Config, error) {
	if !t.on() {
		return nil, nil
	}
	info := transport.TLSInfo{CertFile: t.CertFile, KeyFile: t.KeyFile, TrustedCAFile: t.CAFile}
	c, err := info.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("etcd: tls: %w", err)
	}
	return c, nil
}

// withDefaults returns c with every zero setting at its default and the
// prefix ending in "/".
func (c Config) withDefaults() Config {
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.MaxTxnOps == 0 {
		c.MaxTxnOps = DefaultMaxTxnOps
	}
	if c.MaxRequestBytes == 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.PageSize == 0 {
		c.PageSize = DefaultPageSize
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.Prefix != "" && !strings.HasSuffix(c.Prefix, "/") {
		c.Prefix += "/"
	}
	return c
}

// Validate reports what is wrong with c (after defaults).
func (c Config) Validate() error {
	if c.SessionTTL != 0 && (c.SessionTTL < 2*time.Second || c.SessionTTL%time.Second != 0) {
		return fmt.Errorf("etcd: session ttl %v: want whole seconds, at least 2s", c.SessionTTL)
	}
	c = c.withDefaults()
	switch {
	case len(c.Endpoints) == 0:
		return fmt.Errorf("etcd: no endpoints")
	case c.Prefix == "" || c.Prefix == "/":
		return fmt.Errorf("etcd: a key prefix is required (the store's keys live under it)")
	case (c.TLS.CertFile == "") != (c.TLS.KeyFile == ""):
		return fmt.Errorf("etcd: tls: a client certificate needs its key and the other way round")
	case c.Password != "" && c.Username == "":
		return fmt.Errorf("etcd: a password without a user name")
	case c.DialTimeout < 0 || c.RequestTimeout < 0:
		return fmt.Errorf("etcd: negative timeout")
	case c.MaxAttempts < 0 || c.PageSize < 0:
		return fmt.Errorf("etcd: negative attempts or page size")
	case c.MaxTxnOps < minTxnOps:
		return fmt.Errorf("etcd: max txn ops %d: at least %d are needed", c.MaxTxnOps, minTxnOps)
	}
	for _, e := range c.Endpoints {
		if e == "" || strings.ContainsAny(e, ", \t\n") {
			return fmt.Errorf("etcd: bad endpoint %q", e)
		}
	}
	max := c.derivedLimits()
	if max.MaxBytes < minTxnBytes {
		return fmt.Errorf("etcd: max request bytes %d leave %d for a transaction's writes, less than %d",
			c.MaxRequestBytes, max.MaxBytes, minTxnBytes)
	}
	l := c.Limits
	if l != (meta.Limits{}) && (l.MaxWrites <= 0 || l.MaxBytes <= 0 || l.MaxWrites > max.MaxWrites || l.MaxBytes > max.MaxBytes) {
		return fmt.Errorf("etcd: limits %d writes and %d bytes: each must be set and within %d and %d, what the cluster takes",
			l.MaxWrites, l.MaxBytes, max.MaxWrites, max.MaxBytes)
	}
	return nil
}

// endpoints returns the endpoints as URLs, with the scheme TLS asks for
// where none was given.
func (c Config) endpoints() []string {
	scheme := "http://"
	if c.TLS.on() {
		scheme = "https://"
	}
	out := make([]string, len(c.Endpoints))
	for i, e := range c.Endpoints {
		if !strings.Contains(e, "://") {
			e = scheme + e
		}
		out[i] = e
	}
	return out
}
