package catalog

import (
	"encoding/json"
	"testing"
	"time"
)

// FuzzTokenKeys: the token-key record parser never panics, and what it
// accepts has a current key with an id, every key a 32-byte secret or
// longer, and survives a write and a read back unchanged.
func FuzzTokenKeys(f *testing.F) {
	key := func(id int) TokenKey {
		return TokenKey{ID: id, Secret: []byte("0123456789abcdef0123456789abcdef"), Created: time.Unix(1_800_000_000, 0).UTC()}
	}
	prev := key(1)
	for _, k := range []TokenKeys{{Current: key(1)}, {Current: key(2), Previous: &prev}} {
		raw, err := json.Marshal(k)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	for _, s := range []string{
		`{"current":{"id":1,"secret":"c2hvcnQ="}}`, `{"current":{"id":0,"secret":""}}`,
		`{"current":{"id":1,"secret":"!!"}}`, `{"previous":null}`, `null`, `[]`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		k, err := parseTokenKeys(raw)
		if err != nil {
			return
		}
		if k.Current.ID < 1 || len(k.Current.Secret) < 32 || k.Previous != nil && len(k.Previous.Secret) < 32 {
			t.Fatalf("accepted keys without an id or a full secret: %+v", k)
		}
		again, err := json.Marshal(k)
		if err != nil {
			t.Fatalf("accepted keys do not marshal: %v", err)
		}
		k2, err := parseTokenKeys(again)
		if err != nil {
			t.Fatalf("accepted keys written back do not parse: %v (%s)", err, again)
		}
		if b, _ := json.Marshal(k2); string(b) != string(again) {
			t.Fatalf("keys changed on a round trip: %s then %s", again, b)
		}
	})
}
