package failpoint

import (
	"errors"
	"testing"
)

func TestParse(t *testing.T) {
	known := []string{"a", "b"}
	for _, tc := range []struct {
		spec string
		ok   bool
		want string
	}{
		{"", true, ""},
		{" a=kill , b=error ", true, "a=kill,b=error"},
		{"a=error-once", true, "a=error-once"},
		{"a", false, ""},
		{"c=kill", false, ""},
		{"a=explode", false, ""},
	} {
		s, err := Parse(tc.spec, known)
		if (err == nil) != tc.ok {
			t.Errorf("%q: err %v", tc.spec, err)
			continue
		}
		if err == nil && s.String() != tc.want {
			t.Errorf("%q: %q, want %q", tc.spec, s.String(), tc.want)
		}
	}
}

func TestHit(t *testing.T) {
	s, err := Parse("a=kill,b=error,c=error-once", []string{"a", "b", "c", "d"})
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	s.kill = func() { killed++ }
	for _, tc := range []struct {
		point   string
		wantErr bool
	}{
		{"d", false}, {"b", true}, {"b", true}, {"c", true}, {"c", false}, {"a", true},
	} {
		if err := s.Hit(tc.point); (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, ErrInjected)) {
			t.Errorf("Hit(%s) = %v", tc.point, err)
		}
	}
	if killed != 1 {
		t.Errorf("kill ran %d times", killed)
	}
	var empty *Set
	if empty.Hit("a") != nil || !empty.Empty() {
		t.Error("nil set fires")
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "a=kill", "a=error,b=error-once", "=", "a==kill", ",,a=kill,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := Parse(spec, []string{"a", "b"})
		if err != nil {
			return
		}
		again, err := Parse(s.String(), []string{"a", "b"})
		if err != nil || again.String() != s.String() {
			t.Fatalf("%q -> %q does not parse back: %v", spec, s.String(), err)
		}
	})
}
