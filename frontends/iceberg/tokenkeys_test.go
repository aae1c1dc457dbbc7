package iceberg

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/catalog"
	"github.com/cairnstore/cairn/catalog/objectbacked"
	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

// TestTokenKeysInTheStore: with the keys in a real catalog on a real
// store, a token outlives its Server (a restart), outlives one rotation,
// and is refused after the second with a message that says to get a new
// token; rotation is for the root user only.
func TestTokenKeysInTheStore(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, objstore.Options{Dir: t.TempDir(), DriveCount: 1, Parity: -1, NoBackground: true})
	b, err := objectbacked.New(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := catalog.New(st, b, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	server := func() *Server {
		s, err := New(Options{Catalog: newFakeCatalog("wh"), TokenKeys: svc, Authenticator: fakeAuth{}, Authorizer: fakeAuth{},
			Now: func() time.Time { return now }, Logger: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	e := &testEnv{t: t, s: server(), cat: newFakeCatalog("wh")}
	token := func() string {
		t.Helper()
		form := url.Values{"grant_type": {"client_credentials"}, "client_id": {"writer1"}, "client_secret": {"secret-writer1"}}
		w := e.do("", "POST", "/iceberg/v1/oauth/tokens", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
		var tr tokenResponse
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &tr) != nil {
			t.Fatalf("token: %d %s", w.Code, w.Body)
		}
		return tr.AccessToken
	}
	use := func(tok string) (int, string) {
		t.Helper()
		w := e.do("", "GET", "/iceberg/v1/config?warehouse=wh", "", "Authorization", "Bearer "+tok)
		if w.Code == 200 {
			return 200, ""
		}
		return w.Code, errorOf(t, w).Message
	}
	rotate := func(who string) (int, tokenKeysResponse) {
		t.Helper()
		w := e.do(who, "POST", "/iceberg/v1"+strings.TrimPrefix(TokenKeysPath, "/v1"), "")
		var r tokenKeysResponse
		_ = json.Unmarshal(w.Body.Bytes(), &r)
		if strings.Contains(w.Body.String(), "secret") {
			t.Errorf("the rotation's answer shows a secret: %s", w.Body)
		}
		return w.Code, r
	}

	first := token()
	e.s = server() // a restart: the keys come from the store again
	if c, msg := use(first); c != 200 {
		t.Fatalf("the first token after a restart: %d %s", c, msg)
	}
	if c, _ := rotate("writer1"); c != 403 {
		t.Fatalf("rotation by a non-root user: %d, want 403", c)
	}
	c, r := rotate("root")
	if c != 200 || r.Current.ID != 2 || r.Previous == nil || r.Previous.ID != 1 {
		t.Fatalf("first rotation: %d %+v", c, r)
	}
	second := token()
	if c, msg := use(first); c != 200 {
		t.Fatalf("the first token after one rotation: %d %s", c, msg)
	}
	// Another Server on the store, which has loaded the keys, learns of
	// the next rotation from a token of the new key, or once keyRefresh
	// has passed.
	other, rotating := server(), e.s
	e.s = other
	if c, msg := use(second); c != 200 {
		t.Fatalf("the second token on another server: %d %s", c, msg)
	}
	e.s = rotating
	if c, _ = rotate("root"); c != 200 {
		t.Fatalf("second rotation: %d", c)
	}
	third := token()
	now = now.Add(keyRefresh) // the other server reads the keys again
	for name, s := range map[string]*Server{"rotating server": rotating, "other server": other} {
		e.s = s
		c, msg := use(first)
		if c != 401 || !strings.Contains(msg, "rotated out") || !strings.Contains(msg, "get a new one from POST /v1/oauth/tokens") {
			t.Errorf("%s: the first token after two rotations: %d %q, want 401 saying to get a new token", name, c, msg)
		}
		for _, tok := range []string{second, third} {
			if c, msg := use(tok); c != 200 {
				t.Errorf("%s: a token of a kept key: %d %s", name, c, msg)
			}
		}
	}
	now = now.Add(2 * time.Hour)
	if c, msg := use(third); c != 401 || !strings.Contains(msg, "expired") || !strings.Contains(msg, "get a new one") {
		t.Errorf("an expired token: %d %q", c, msg)
	}
}
