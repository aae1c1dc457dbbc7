package s3

import (
	"net/http"
	"testing"
	"time"
)

var fuzzNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func FuzzParseLockConfig(f *testing.F) {
	for _, s := range []string{
		lockConf(""), lockConf("<Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule>"),
		lockConf("<Rule><DefaultRetention><Mode>COMPLIANCE</Mode><Years>99999999999999999999</Years></DefaultRetention></Rule>"),
		"<ObjectLockConfiguration>", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := parseLockConfig(raw)
		if err != nil {
			if apiCode(err)[0] == '?' {
				t.Fatalf("%q: error without an S3 code: %v", raw, err)
			}
			return
		}
		if d == nil {
			return
		}
		back, err := decodeLockDefault(d.encode())
		if err != nil || back != *d {
			t.Fatalf("%q: accepted %+v, whose record %q decodes to %+v %v", raw, d, d.encode(), back, err)
		}
	})
}

// FuzzDecodeLockDefault fuzzes the cfgObjectLock record decoder.
func FuzzDecodeLockDefault(f *testing.F) {
	for _, s := range []string{"GOVERNANCE/1d", "COMPLIANCE/100y", "GOVERNANCE/0d", "/", "GOVERNANCE/d", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := decodeLockDefault(s)
		if err != nil {
			return
		}
		if d.N <= 0 || !validMode(d.Mode) || d.until(fuzzNow).Before(fuzzNow) {
			t.Fatalf("%q: accepted %+v", s, d)
		}
	})
}

func FuzzParseRetention(f *testing.F) {
	for _, s := range []string{
		"<Retention><Mode>GOVERNANCE</Mode><RetainUntilDate>2030-01-01T00:00:00Z</RetainUntilDate></Retention>",
		"<Retention></Retention>", "<Retention><Mode>x</Mode></Retention>", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := parseRetention(raw, fuzzNow)
		if err != nil {
			if apiCode(err)[0] == '?' {
				t.Fatalf("%q: error without an S3 code: %v", raw, err)
			}
			return
		}
		if r.Mode != "" && (!validMode(r.Mode) || !r.Until.After(fuzzNow)) {
			t.Fatalf("%q: accepted %+v", raw, r)
		}
	})
}

func FuzzParseLegalHold(f *testing.F) {
	for _, s := range []string{"<LegalHold><Status>ON</Status></LegalHold>", "<LegalHold><Status>OFF</Status></LegalHold>", "<LegalHold>", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if _, err := parseLegalHold(raw); err != nil && apiCode(err)[0] == '?' {
			t.Fatalf("%q: error without an S3 code: %v", raw, err)
		}
	})
}

func FuzzParseLockHeaders(f *testing.F) {
	f.Add("GOVERNANCE", "2030-01-01T00:00:00Z", "ON")
	f.Add("", "", "")
	f.Add("COMPLIANCE", "2030-13-01T00:00:00Z", "OFF")
	f.Fuzz(func(t *testing.T, mode, until, hold string) {
		h := http.Header{}
		for k, v := range map[string]string{"x-amz-object-lock-mode": mode, "x-amz-object-lock-retain-until-date": until, "x-amz-object-lock-legal-hold": hold} {
			if v != "" {
				h.Set(k, v)
			}
		}
		v, err := parseLockHeaders(h, fuzzNow)
		if err != nil {
			if apiCode(err)[0] == '?' {
				t.Fatalf("error without an S3 code: %v", err)
			}
			return
		}
		if v.hasRetention && (!validMode(v.retention.Mode) || !v.retention.Until.After(fuzzNow)) {
			t.Fatalf("accepted %+v", v)
		}
	})
}
