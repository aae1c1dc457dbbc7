package console

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"sync"
	"time"
)

// session is one signed-in browser.
type session struct {
	accessKey string
	secretKey string
	// root is whether the user is the root user (the admin APIs answer
	// it), so the UI can offer Users and table-bucket administration.
	root    bool
	expires time.Time
}

// sessions is the in-memory session table; sessions die with the process.
type sessions struct {
	mu sync.Mutex // protects byID
	// byID maps a session id (32 random bytes, base64url) to its session.
	byID map[string]*session
}

func newSessions() *sessions {
	return &sessions{byID: make(map[string]*session)}
}

// add stores s under a fresh random id and returns the id. Expired
// sessions are swept on the way, so the table stays bounded by the
// sign-ins of one lifetime.
func (t *sessions) add(s *session, now time.Time) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("reading a random session id: %w", err)
	}
	id := base64.RawURLEncoding.EncodeToString(b[:])
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, old := range t.byID {
		if !now.Before(old.expires) {
			delete(t.byID, k)
		}
	}
	t.byID[id] = s
	return id, nil
}

// get returns the live session of id, or nil (unknown or expired; an
// expired one is dropped).
func (t *sessions) get(id string, now time.Time) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.byID[id]
	if s == nil {
		return nil
	}
	if !now.Before(s.expires) {
		delete(t.byID, id)
		return nil
	}
	cp := *s
	return &cp
}

// remove drops the session of id (signing out).
func (t *sessions) remove(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.byID, id)
}

// len counts the sessions held, live or not yet swept.
func (t *sessions) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byID)
}
