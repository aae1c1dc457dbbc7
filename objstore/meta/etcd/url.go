package etcd

import (
	"fmt"
	"net"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The URL form of a Config, for `cairn serve --meta`:
//
//	etcd://[user[:password]@]host:port[,host:port...]/prefix[?option=value&...]
//	etcds://...   the same over TLS (the system's roots unless cacert is given)
//
// Options, named as etcdctl's flags: cacert, cert, key (files; any of them
// turns TLS on), dial-timeout, request-timeout (Go durations),
// max-txn-ops, max-request-bytes (the cluster's settings). The prefix is
// the path, "/" included, and must not be empty. A password is better
// given out of band (the URL shows in process lists): cmd/ may set
// Config.Password from elsewhere after parsing.
const (
	schemePlain = "etcd://"
	schemeTLS   = "etcds://"
)

// urlOptions are the query options ParseURL takes, each with its setter.
var urlOptions = map[string]func(c *Config, v string) error{
	"cacert":            func(c *Config, v string) error { c.TLS.CAFile = v; return nil },
	"cert":              func(c *Config, v string) error { c.TLS.CertFile = v; return nil },
	"key":               func(c *Config, v string) error { c.TLS.KeyFile = v; return nil },
	"dial-timeout":      func(c *Config, v string) error { return parseDuration(v, &c.DialTimeout) },
	"request-timeout":   func(c *Config, v string) error { return parseDuration(v, &c.RequestTimeout) },
	"max-txn-ops":       func(c *Config, v string) error { return parseCount(v, &c.MaxTxnOps) },
	"max-request-bytes": func(c *Config, v string) error { return parseCount(v, &c.MaxRequestBytes) },
}

// ParseURL parses the etcd://host:2379,host:2379/prefix form into a
// Config (see the form above); the fields it does not set keep their
// zero values, the defaults.
func ParseURL(s string) (Config, error) {
	var c Config
	rest, ok := strings.CutPrefix(s, schemePlain)
	if !ok {
		if rest, ok = strings.CutPrefix(s, schemeTLS); !ok {
			return c, fmt.Errorf("etcd: url %q: want %s or %s", redactURL(s), schemePlain, schemeTLS)
		}
		c.TLS.Enabled = true
	}
	authority, pathQuery, ok := strings.Cut(rest, "/")
	if !ok {
		return c, fmt.Errorf("etcd: url %q: no /prefix", redactURL(s))
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		if err := parseUser(&c, authority[:i]); err != nil {
			return c, err
		}
		authority = authority[i+1:]
	}
	for _, h := range strings.Split(authority, ",") {
		if err := checkHost(h); err != nil {
			return c, err
		}
		c.Endpoints = append(c.Endpoints, h)
	}
	path, query, _ := strings.Cut(pathQuery, "?")
	prefix, err := url.PathUnescape(path)
	if err != nil {
		return c, fmt.Errorf("etcd: url prefix %q: %w", path, err)
	}
	c.Prefix = "/" + prefix
	if strings.Trim(c.Prefix, "/") == "" {
		return c, fmt.Errorf("etcd: url %q: the prefix is empty", redactURL(s))
	}
	if strings.ContainsAny(c.Prefix, "\x00") {
		return c, fmt.Errorf("etcd: url prefix %q holds a NUL byte", c.Prefix)
	}
	if err := parseQuery(&c, query); err != nil {
		return c, err
	}
	return c, nil
}

func parseUser(c *Config, info string) error {
	user, pass, hasPass := strings.Cut(info, ":")
	var err error
	if c.Username, err = url.PathUnescape(user); err != nil || c.Username == "" {
		return fmt.Errorf("etcd: url user name: empty or badly escaped")
	}
	if hasPass {
		if c.Password, err = url.PathUnescape(pass); err != nil {
			return fmt.Errorf("etcd: url password: badly escaped")
		}
	}
	return nil
}

// checkHost accepts host:port, the host a name or an address (IPv6 in
// brackets), the port 1 to 65535.
func checkHost(h string) error {
	host, port, err := net.SplitHostPort(h)
	if err != nil {
		return fmt.Errorf("etcd: url endpoint %q: %w", h, err)
	}
	if host == "" || strings.ContainsAny(host, "/?#@%,[] \t\r\n\x00") {
		return fmt.Errorf("etcd: url endpoint %q: bad host", h)
	}
	if bracketed := strings.HasPrefix(h, "["); bracketed != strings.Contains(host, ":") || bracketed && net.ParseIP(host) == nil {
		return fmt.Errorf("etcd: url endpoint %q: an IPv6 address, and only one, goes in brackets", h)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return fmt.Errorf("etcd: url endpoint %q: bad port", h)
	}
	return nil
}

func parseQuery(c *Config, query string) error {
	if query == "" {
		return nil
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return fmt.Errorf("etcd: url options: %w", err)
	}
	for name, vs := range q {
		set, ok := urlOptions[name]
		if !ok {
			return fmt.Errorf("etcd: url option %q: unknown (known: %s)", name, strings.Join(optionNames(), ", "))
		}
		if len(vs) != 1 || vs[0] == "" {
			return fmt.Errorf("etcd: url option %q: give it once, with a value", name)
		}
		if err := set(c, vs[0]); err != nil {
			return fmt.Errorf("etcd: url option %q: %w", name, err)
		}
	}
	return nil
}

func optionNames() []string {
	names := make([]string, 0, len(urlOptions))
	for n := range urlOptions {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func parseDuration(v string, d *time.Duration) error {
	x, err := time.ParseDuration(v)
	if err != nil || x <= 0 {
		return fmt.Errorf("%q is not a positive duration", v)
	}
	*d = x
	return nil
}

func parseCount(v string, n *int) error {
	x, err := strconv.Atoi(v)
	if err != nil || x <= 0 || x > 1<<30 {
		return fmt.Errorf("%q is not a positive count", v)
	}
	*n = x
	return nil
}

// URL returns c in the URL form ParseURL reads, password included.
// Endpoints given as URLs lose their scheme (TLS says which).
func (c Config) URL() string { return c.format(false) }

// String returns c in the URL form with the password left out: for logs.
func (c Config) String() string { return c.format(true) }

func (c Config) format(redact bool) string {
	var b strings.Builder
	if c.TLS.Enabled {
		b.WriteString(schemeTLS)
	} else {
		b.WriteString(schemePlain)
	}
	if c.Username != "" {
		switch {
		case c.Password != "" && redact:
			b.WriteString(url.UserPassword(c.Username, "xxxxx").String())
		case c.Password != "":
			b.WriteString(url.UserPassword(c.Username, c.Password).String())
		default:
			b.WriteString(url.User(c.Username).String())
		}
		b.WriteString("@")
	}
	eps := make([]string, len(c.Endpoints))
	for i, e := range c.Endpoints {
		if _, after, ok := strings.Cut(e, "://"); ok {
			e = after
		}
		eps[i] = e
	}
	b.WriteString(strings.Join(eps, ","))
	b.WriteString((&url.URL{Path: "/" + strings.TrimPrefix(c.Prefix, "/")}).EscapedPath())
	q := url.Values{}
	set := func(name, v string, zero bool) {
		if !zero {
			q.Set(name, v)
		}
	}
	set("cacert", c.TLS.CAFile, c.TLS.CAFile == "")
	set("cert", c.TLS.CertFile, c.TLS.CertFile == "")
	set("key", c.TLS.KeyFile, c.TLS.KeyFile == "")
	set("dial-timeout", c.DialTimeout.String(), c.DialTimeout == 0)
	set("request-timeout", c.RequestTimeout.String(), c.RequestTimeout == 0)
	set("max-txn-ops", strconv.Itoa(c.MaxTxnOps), c.MaxTxnOps == 0)
	set("max-request-bytes", strconv.Itoa(c.MaxRequestBytes), c.MaxRequestBytes == 0)
	if len(q) > 0 {
		b.WriteString("?" + q.Encode())
	}
	return b.String()
}

// redactURL hides a password in a URL that did not parse, for errors.
func redactURL(s string) string {
	rest, ok := strings.CutPrefix(s, schemePlain)
	scheme := schemePlain
	if !ok {
		if rest, ok = strings.CutPrefix(s, schemeTLS); !ok {
			return s
		}
		scheme = schemeTLS
	}
	authority, tail, _ := strings.Cut(rest, "/")
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		if user, _, hasPass := strings.Cut(authority[:i], ":"); hasPass {
			return scheme + user + ":xxxxx" + authority[i:] + "/" + tail
		}
	}
	return s
}
