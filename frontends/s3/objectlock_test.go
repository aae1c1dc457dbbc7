package s3

import (
	"net/http"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

func lockConf(rule string) string {
	return `<ObjectLockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><ObjectLockEnabled>Enabled</ObjectLockEnabled>` + rule + `</ObjectLockConfiguration>`
}

func TestParseLockConfig(t *testing.T) {
	rule := func(inner string) string {
		return lockConf("<Rule><DefaultRetention>" + inner + "</DefaultRetention></Rule>")
	}
	for _, tc := range []struct {
		name string
		body string
		want *lockDefault
		code string
	}{
		{"enabled only", lockConf(""), nil, ""},
		{"days", rule("<Mode>GOVERNANCE</Mode><Days>1</Days>"), &lockDefault{Mode: "GOVERNANCE", N: 1}, ""},
		{"years", rule("<Mode>COMPLIANCE</Mode><Years>1</Years>"), &lockDefault{Mode: "COMPLIANCE", N: 1, Years: true}, ""},
		{"days and years", rule("<Mode>GOVERNANCE</Mode><Days>1</Days><Years>1</Years>"), nil, "MalformedXML"},
		{"neither", rule("<Mode>GOVERNANCE</Mode>"), nil, "MalformedXML"},
		{"zero days", rule("<Mode>GOVERNANCE</Mode><Days>0</Days>"), nil, "InvalidRetentionPeriod"},
		{"negative years", rule("<Mode>GOVERNANCE</Mode><Years>-1</Years>"), nil, "InvalidRetentionPeriod"},
		{"too many years", rule("<Mode>GOVERNANCE</Mode><Years>101</Years>"), nil, "InvalidRetentionPeriod"},
		{"too many days", rule("<Mode>GOVERNANCE</Mode><Days>36501</Days>"), nil, "InvalidRetentionPeriod"},
		{"unknown mode", rule("<Mode>abc</Mode><Years>1</Years>"), nil, "MalformedXML"},
		{"lower-case mode", rule("<Mode>governance</Mode><Years>1</Years>"), nil, "MalformedXML"},
		{"rule without retention", lockConf("<Rule></Rule>"), nil, "MalformedXML"},
		{"disabled", `<ObjectLockConfiguration><ObjectLockEnabled>Disabled</ObjectLockEnabled></ObjectLockConfiguration>`, nil, "MalformedXML"},
		{"days not a number", rule("<Mode>GOVERNANCE</Mode><Days>x</Days>"), nil, "MalformedXML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseLockConfig([]byte(tc.body))
			if apiCode(err) != tc.code {
				t.Fatalf("error %v, want %q", err, tc.code)
			}
			if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			if got != nil {
				back, err := decodeLockDefault(got.encode())
				if err != nil || back != *got {
					t.Fatalf("record %q decodes to %+v %v", got.encode(), back, err)
				}
			}
		})
	}
}

func TestLockDefaultUntil(t *testing.T) {
	t0 := time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		d    lockDefault
		want time.Time
	}{
		{lockDefault{Mode: "GOVERNANCE", N: 1}, time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)},
		{lockDefault{Mode: "GOVERNANCE", N: 30}, time.Date(2024, 3, 30, 12, 0, 0, 0, time.UTC)},
		{lockDefault{Mode: "COMPLIANCE", N: 1, Years: true}, time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)},
	} {
		if got := tc.d.until(t0); !got.Equal(tc.want) {
			t.Errorf("%+v: %v, want %v", tc.d, got, tc.want)
		}
	}
}

func TestParseRetention(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ret := func(mode, date string) string {
		return "<Retention><Mode>" + mode + "</Mode><RetainUntilDate>" + date + "</RetainUntilDate></Retention>"
	}
	for _, tc := range []struct {
		name string
		body string
		want objstore.Retention
		code string
	}{
		{"governance", ret("GOVERNANCE", "2030-01-01T00:00:00Z"), objstore.Retention{Mode: "GOVERNANCE", Until: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}, ""},
		{"millis and offset", ret("COMPLIANCE", "2030-01-01T02:00:00.500+02:00"), objstore.Retention{Mode: "COMPLIANCE", Until: time.Date(2030, 1, 1, 0, 0, 0, 5e8, time.UTC)}, ""},
		{"empty removes", "<Retention></Retention>", objstore.Retention{}, ""},
		{"lower-case mode", ret("governance", "2030-01-01T00:00:00Z"), objstore.Retention{}, "MalformedXML"},
		{"unknown mode", ret("abc", "2030-01-01T00:00:00Z"), objstore.Retention{}, "MalformedXML"},
		{"no date", "<Retention><Mode>GOVERNANCE</Mode></Retention>", objstore.Retention{}, "MalformedXML"},
		{"bad date", ret("GOVERNANCE", "tomorrow"), objstore.Retention{}, "MalformedXML"},
		{"past date", ret("GOVERNANCE", "2020-01-01T00:00:00Z"), objstore.Retention{}, "InvalidArgument"},
		{"not xml", "<Retention>", objstore.Retention{}, "MalformedXML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseRetention([]byte(tc.body), now)
			if apiCode(err) != tc.code || got.Mode != tc.want.Mode || !got.Until.Equal(tc.want.Until) {
				t.Fatalf("%+v %v, want %+v %q", got, err, tc.want, tc.code)
			}
		})
	}
}

func TestParseLegalHold(t *testing.T) {
	for _, tc := range []struct {
		body string
		on   bool
		code string
	}{
		{"<LegalHold><Status>ON</Status></LegalHold>", true, ""},
		{`<LegalHold xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Status>OFF</Status></LegalHold>`, false, ""},
		{"<LegalHold><Status>abc</Status></LegalHold>", false, "MalformedXML"},
		{"<LegalHold></LegalHold>", false, "MalformedXML"},
		{"<Hold><Status>ON</Status></Hold>", false, "MalformedXML"},
	} {
		on, err := parseLegalHold([]byte(tc.body))
		if on != tc.on || apiCode(err) != tc.code {
			t.Errorf("%s: %v %v, want %v %q", tc.body, on, err, tc.on, tc.code)
		}
	}
}

func TestParseLockHeaders(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		h    map[string]string
		want lockHeaderValues
		code string
	}{
		{"none", nil, lockHeaderValues{}, ""},
		{"retention", map[string]string{"x-amz-object-lock-mode": "GOVERNANCE", "x-amz-object-lock-retain-until-date": "2030-01-01T00:00:00Z"},
			lockHeaderValues{any: true, hasRetention: true, retention: objstore.Retention{Mode: "GOVERNANCE", Until: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}}, ""},
		{"hold", map[string]string{"x-amz-object-lock-legal-hold": "ON"}, lockHeaderValues{any: true, hasHold: true, legalHold: true}, ""},
		{"hold off", map[string]string{"x-amz-object-lock-legal-hold": "OFF"}, lockHeaderValues{any: true, hasHold: true}, ""},
		{"mode alone", map[string]string{"x-amz-object-lock-mode": "GOVERNANCE"}, lockHeaderValues{}, "InvalidArgument"},
		{"date alone", map[string]string{"x-amz-object-lock-retain-until-date": "2030-01-01T00:00:00Z"}, lockHeaderValues{}, "InvalidArgument"},
		{"bad mode", map[string]string{"x-amz-object-lock-mode": "FOREVER", "x-amz-object-lock-retain-until-date": "2030-01-01T00:00:00Z"}, lockHeaderValues{}, "InvalidArgument"},
		{"bad date", map[string]string{"x-amz-object-lock-mode": "GOVERNANCE", "x-amz-object-lock-retain-until-date": "2030"}, lockHeaderValues{}, "InvalidArgument"},
		{"past date", map[string]string{"x-amz-object-lock-mode": "GOVERNANCE", "x-amz-object-lock-retain-until-date": "2025-01-01T00:00:00Z"}, lockHeaderValues{}, "InvalidArgument"},
		{"bad hold", map[string]string{"x-amz-object-lock-legal-hold": "on"}, lockHeaderValues{}, "InvalidArgument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.h {
				h.Set(k, v)
			}
			got, err := parseLockHeaders(h, now)
			if apiCode(err) != tc.code {
				t.Fatalf("error %v, want %q", err, tc.code)
			}
			if err == nil && (got.any != tc.want.any || got.hasHold != tc.want.hasHold || got.legalHold != tc.want.legalHold ||
				got.hasRetention != tc.want.hasRetention || got.retention.Mode != tc.want.retention.Mode || !got.retention.Until.Equal(tc.want.retention.Until)) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestHasChecksum(t *testing.T) {
	for _, tc := range []struct {
		h    map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"Content-MD5": "x"}, true},
		{map[string]string{"x-amz-checksum-crc32": "x"}, true},
		{map[string]string{"x-amz-sdk-checksum-algorithm": "CRC32"}, true},
		{map[string]string{"x-amz-trailer": "x-amz-checksum-crc64nvme"}, true},
		{map[string]string{"x-amz-checksum-type": "FULL_OBJECT"}, false},
		{map[string]string{"x-amz-content-sha256": "UNSIGNED-PAYLOAD"}, false},
		{map[string]string{"x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"}, false},
		{map[string]string{"x-amz-content-sha256": "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"}, true},
	} {
		h := http.Header{}
		for k, v := range tc.h {
			h.Set(k, v)
		}
		if got := hasChecksum(h); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.h, got, tc.want)
		}
	}
}

func TestBucketLockOption(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want bool
		code string
	}{{"", false, ""}, {"true", true, ""}, {"True", true, ""}, {"false", false, ""}, {"yes", false, "InvalidArgument"}} {
		r, _ := http.NewRequest("PUT", "http://h/b", nil)
		if tc.v != "" {
			r.Header.Set("x-amz-bucket-object-lock-enabled", tc.v)
		}
		got, err := bucketLockOption(&request{Request: r})
		if got != tc.want || apiCode(err) != tc.code {
			t.Errorf("%q: %v %v", tc.v, got, err)
		}
	}
}

func TestLockHeadersOut(t *testing.T) {
	until := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	h := http.Header{}
	(&Server{}).lockHeaders(h, objstore.ObjectInfo{Attrs: objstore.Attrs{Retention: objstore.Retention{Mode: "COMPLIANCE", Until: until}, LegalHold: true}})
	if h.Get("x-amz-object-lock-mode") != "COMPLIANCE" || h.Get("x-amz-object-lock-retain-until-date") != "2030-01-01T00:00:00.000Z" || h.Get("x-amz-object-lock-legal-hold") != "ON" {
		t.Fatalf("headers %v", h)
	}
	h = http.Header{}
	(&Server{}).lockHeaders(h, objstore.ObjectInfo{})
	if len(h) != 0 {
		t.Fatalf("headers of an unlocked version: %v", h)
	}
}
