package access

import (
	"errors"
	"reflect"
	"testing"
)

func TestCannedAndPerms(t *testing.T) {
	for _, tc := range []struct {
		canned, who string
		want        Perm
	}{
		{"private", "alice", FullControl},
		{"private", "bob", 0},
		{"private", "", 0},
		{"public-read", "", Read},
		{"public-read", "bob", Read},
		{"public-read-write", "", Read | Write},
		{"authenticated-read", "", 0},
		{"authenticated-read", "bob", Read},
		{"bucket-owner-read", "carol", Read},
		{"bucket-owner-full-control", "carol", FullControl},
		{"bucket-owner-full-control", "bob", 0},
		{"aws-exec-read", "bob", 0},
		{"log-delivery-write", "bob", 0},
	} {
		a, err := Canned(tc.canned, "alice", "carol")
		if err != nil {
			t.Fatal(err)
		}
		if got := a.Perms(&Request{Principal: tc.who}, "alice", false); got != tc.want {
			t.Errorf("%s for %q: %v, want %v", tc.canned, tc.who, got, tc.want)
		}
	}
	if _, err := Canned("world-writable", "a", "a"); !errors.Is(err, ErrUnknownCanned) {
		t.Errorf("unknown canned: %v", err)
	}
	// The owner keeps READ_ACP and WRITE_ACP without a grant.
	if got := (ACL{}).Perms(&Request{Principal: "alice"}, "alice", false); got != ReadACP|WriteACP {
		t.Errorf("owner without grants: %v", got)
	}
}

func TestGrantsRoundTrip(t *testing.T) {
	for _, a := range []ACL{
		Default("alice"),
		{},
		{Grants: []Grant{{ID: "alice", Perm: FullControl}, {Group: AllUsers, Perm: Read}, {Group: AuthenticatedUsers, Perm: Write | ReadACP}, {ID: "bob", Perm: WriteACP}, {Group: LogDelivery, Perm: Write}}},
	} {
		enc := EncodeGrants(a, "alice")
		got, err := DecodeGrants(enc, "alice")
		if err != nil {
			t.Fatalf("%q: %v", enc, err)
		}
		if len(a.Grants) == 0 {
			a.Grants = nil
		}
		if !reflect.DeepEqual(got, a) {
			t.Errorf("%q: %+v, want %+v", enc, got, a)
		}
	}
	if EncodeGrants(Default("alice"), "alice") != "" {
		t.Error("the default ACL is not stored as empty")
	}
	for _, bad := range []string{"x", "u0alice", "gfnobody", "zfalice", "ufalice\n", "uzalice"} {
		if _, err := DecodeGrants(bad, "alice"); !errors.Is(err, ErrBadRecord) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestPermNames(t *testing.T) {
	for _, n := range []string{"FULL_CONTROL", "READ", "WRITE", "READ_ACP", "WRITE_ACP"} {
		p, ok := ParsePerm(n)
		if !ok || len(p.Names()) != 1 || p.Names()[0] != n {
			t.Errorf("%s: %v %v", n, p, p.Names())
		}
	}
	if _, ok := ParsePerm("read"); ok {
		t.Error("lower-case permission accepted")
	}
}

func FuzzDecodeGrants(f *testing.F) {
	f.Add("ufalice\ng1all\ng6auth")
	f.Add("-")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := DecodeGrants(s, "o")
		if err != nil {
			return
		}
		back, err := DecodeGrants(EncodeGrants(a, "o"), "o")
		if err != nil || len(back.Grants) != len(a.Grants) {
			t.Fatalf("%q: re-encoding lost grants: %v %+v %+v", s, err, a, back)
		}
	})
}
