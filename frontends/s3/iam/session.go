package iam

// Temporary credentials (STS AssumeRole): an access key, a secret and a
// session token, valid until an expiry, for a parent user, with an
// optional session policy that narrows what the parent may do.
//
// Nothing is stored per session. The token is the session's description
// (parent, access key, expiry, policy) with an HMAC-SHA256 under the
// directory's session key, which is kept in the store (sts/session.key)
// so that sessions outlive a restart; the secret is an HMAC of the
// access key under the same key. A request signed with a session key
// must carry its token (CheckSession): the signature proves the secret,
// the token the rest, and the parent must still exist.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/cairnstore/cairn/frontends/s3/access"
	"github.com/cairnstore/cairn/objstore"
)

// Session errors.
var (
	// ErrInvalidToken: a session token that is missing, malformed, not
	// ours, or not the access key's.
	ErrInvalidToken = errors.New("iam: invalid session token")
	// ErrExpiredToken: the session ended.
	ErrExpiredToken = errors.New("iam: session token expired")
)

// Session durations, as STS AssumeRole bounds DurationSeconds.
const (
	MinSessionDuration     = 15 * time.Minute
	MaxSessionDuration     = 12 * time.Hour
	DefaultSessionDuration = time.Hour
	// MaxSessionPolicy bounds a session policy document, in bytes (STS's
	// packed limit is about this).
	MaxSessionPolicy = 2048
)

const sessionKeyObject = "sts/session.key"

// sessionKeyRe is the form of a session access key: "ASIA" and 16
// base32 characters, as AWS's temporary keys look.
var sessionKeyRe = regexp.MustCompile(`^ASIA[A-Z2-7]{16}$`)

// IsSessionKey says whether accessKey has the form of a session's.
func IsSessionKey(accessKey string) bool { return sessionKeyRe.MatchString(accessKey) }

// Session is a set of temporary credentials.
type Session struct {
	AccessKey, SecretKey, Token string
	// Parent is the access key of the user the session acts for.
	Parent     string
	Expiration time.Time
	// Policy is the session policy, nil when none (the parent's rights).
	Policy *access.Policy
}

// sessionClaims is what a token carries.
type sessionClaims struct {
	AccessKey string `json:"ak"`
	Parent    string `json:"p"`
	Expires   int64  `json:"x"`
	Policy    string `json:"pol,omitempty"`
}

// loadSessionKey reads the session key, making it the first time (a
// conditional put: of two servers starting at once, one key wins).
func loadSessionKey(ctx context.Context, store *objstore.Store) ([]byte, error) {
	for range 2 {
		r, err := store.Open(ctx, Bucket, sessionKeyObject, objstore.GetOptions{})
		if err == nil {
			key, rerr := io.ReadAll(r)
			_ = r.Close()
			if rerr != nil {
				return nil, rerr
			}
			if len(key) != 32 {
				return nil, fmt.Errorf("iam: %s/%s holds %d bytes, not a 32-byte key", Bucket, sessionKeyObject, len(key))
			}
			return key, nil
		}
		if !errors.Is(err, objstore.ErrNoSuchKey) {
			return nil, err
		}
		key := make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			return nil, err
		}
		_, err = store.Put(ctx, Bucket, sessionKeyObject, bytes.NewReader(key), int64(len(key)), objstore.PutOptions{IfNoneMatch: "*"})
		if err == nil {
			return key, nil
		}
		if !errors.Is(err, objstore.ErrPreconditionFailed) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("iam: %s/%s: made and gone again", Bucket, sessionKeyObject)
}

func (d *Directory) mac(purpose string, msg []byte) []byte {
	h := hmac.New(sha256.New, d.sessionKey)
	h.Write([]byte(purpose))
	h.Write([]byte{0})
	h.Write(msg)
	return h.Sum(nil)
}

// sessionSecret is the secret key of a session access key.
func (d *Directory) sessionSecret(accessKey string) string {
	return base64.RawStdEncoding.EncodeToString(d.mac("secret", []byte(accessKey)))[:40]
}

// AssumeRole makes temporary credentials for parent (the root or a
// user), valid for dur from now (STS's bounds: MinSessionDuration to
// MaxSessionDuration), limited by policy (an identity policy document;
// empty: none). A session cannot make another.
func (d *Directory) AssumeRole(parent string, dur time.Duration, policy string, now time.Time) (Session, error) {
	if dur < MinSessionDuration || dur > MaxSessionDuration {
		return Session{}, fmt.Errorf("%w: a session lasts %v to %v, not %v", ErrInvalidUser, MinSessionDuration, MaxSessionDuration, dur)
	}
	return d.NewSession(parent, dur, policy, now)
}

// NewSession is AssumeRole for the server's own uses, with any duration
// from a second to MaxSessionDuration: the Iceberg catalog vends
// credentials for a table's location with its configured lifetime.
func (d *Directory) NewSession(parent string, dur time.Duration, policy string, now time.Time) (Session, error) {
	if IsSessionKey(parent) {
		return Session{}, fmt.Errorf("%w: temporary credentials cannot assume a role", ErrInvalidUser)
	}
	if !d.Exists(parent) {
		return Session{}, fmt.Errorf("%w: %s", ErrNoSuchUser, parent)
	}
	if dur < time.Second || dur > MaxSessionDuration {
		return Session{}, fmt.Errorf("%w: a session lasts 1s to %v, not %v", ErrInvalidUser, MaxSessionDuration, dur)
	}
	var pol *access.Policy
	if policy != "" {
		if len(policy) > MaxSessionPolicy {
			return Session{}, fmt.Errorf("%w: the session policy has %d bytes, more than %d", ErrPolicyTooLarge, len(policy), MaxSessionPolicy)
		}
		p, err := ParsePolicy([]byte(policy))
		if err != nil {
			return Session{}, err
		}
		pol = p.Compiled()
	}
	var id [10]byte
	if _, err := rand.Read(id[:]); err != nil {
		return Session{}, err
	}
	ak := "ASIA" + base32.StdEncoding.EncodeToString(id[:])
	c := sessionClaims{AccessKey: ak, Parent: parent, Expires: now.Add(dur).Unix(), Policy: policy}
	payload, err := json.Marshal(c)
	if err != nil {
		return Session{}, err
	}
	token := base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(d.mac("token", payload))
	return Session{AccessKey: ak, SecretKey: d.sessionSecret(ak), Token: token, Parent: parent,
		Expiration: time.Unix(c.Expires, 0).UTC(), Policy: pol}, nil
}

// CheckSession checks the token a request signed with the session access
// key accessKey carries, and returns the session (its SecretKey empty).
func (d *Directory) CheckSession(accessKey, token string, now time.Time) (Session, error) {
	enc, sig, ok := strings.Cut(token, ".")
	if !ok {
		return Session{}, fmt.Errorf("%w: not a session token of this server", ErrInvalidToken)
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(enc)
	mac, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, d.mac("token", payload)) {
		return Session{}, fmt.Errorf("%w: not a session token of this server", ErrInvalidToken)
	}
	var c sessionClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return Session{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
	}
	if c.AccessKey != accessKey {
		return Session{}, fmt.Errorf("%w: the token is another access key's", ErrInvalidToken)
	}
	exp := time.Unix(c.Expires, 0).UTC()
	if !now.Before(exp) {
		return Session{}, fmt.Errorf("%w: it expired at %s", ErrExpiredToken, exp.Format(time.RFC3339))
	}
	if !d.Exists(c.Parent) {
		return Session{}, fmt.Errorf("%w: its user %s no longer exists", ErrInvalidToken, c.Parent)
	}
	s := Session{AccessKey: accessKey, Token: token, Parent: c.Parent, Expiration: exp}
	if c.Policy != "" {
		p, err := ParsePolicy([]byte(c.Policy))
		if err != nil {
			return Session{}, fmt.Errorf("%w: %v", ErrInvalidToken, err)
		}
		s.Policy = p.Compiled()
	}
	return s, nil
}
