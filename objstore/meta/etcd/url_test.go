package etcd_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore/meta/etcd"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		in   string
		want etcd.Config
		err  string // a substring of the error; "" when it parses
	}{
		{in: "etcd://127.0.0.1:2379/cairn", want: etcd.Config{Endpoints: []string{"127.0.0.1:2379"}, Prefix: "/cairn"}},
		{in: "etcd://a:2379,b:2379,c:12379/cairn/store-1/", want: etcd.Config{Endpoints: []string{"a:2379", "b:2379", "c:12379"}, Prefix: "/cairn/store-1/"}},
		{in: "etcd://[::1]:2379/p", want: etcd.Config{Endpoints: []string{"[::1]:2379"}, Prefix: "/p"}},
		{in: "etcd://root:s%40cret:x@h:2379/p", want: etcd.Config{Endpoints: []string{"h:2379"}, Prefix: "/p", Username: "root", Password: "s@cret:x"}},
		{in: "etcd://alice@h:2379/p", want: etcd.Config{Endpoints: []string{"h:2379"}, Prefix: "/p", Username: "alice"}},
		{in: "etcd://h:2379/a%20b%3Fc", want: etcd.Config{Endpoints: []string{"h:2379"}, Prefix: "/a b?c"}},
		{in: "etcds://h:2379/p", want: etcd.Config{Endpoints: []string{"h:2379"}, Prefix: "/p", TLS: etcd.TLS{Enabled: true}}},
		{
			in: "etcd://h:2379/p?cacert=/etc/ca.pem&cert=/c.pem&key=/k.pem&dial-timeout=3s&request-timeout=1m&max-txn-ops=1024&max-request-bytes=10485760",
			want: etcd.Config{Endpoints: []string{"h:2379"}, Prefix: "/p",
				TLS:         etcd.TLS{CAFile: "/etc/ca.pem", CertFile: "/c.pem", KeyFile: "/k.pem"},
				DialTimeout: 3 * time.Second, RequestTimeout: time.Minute, MaxTxnOps: 1024, MaxRequestBytes: 10 << 20},
		},
		{in: "http://h:2379/p", err: "want etcd://"},
		{in: "etcd://h:2379", err: "no /prefix"},
		{in: "etcd://h:2379/", err: "prefix is empty"},
		{in: "etcd://h:2379///", err: "prefix is empty"},
		{in: "etcd://h/p", err: "missing port"},
		{in: "etcd://h:0/p", err: "bad port"},
		{in: "etcd://h:99999/p", err: "bad port"},
		{in: "etcd://h:+1/p", err: "bad port"},
		{in: "etcd://:2379/p", err: "bad host"},
		{in: "etcd://a:1,,b:2/p", err: "missing port"},
		{in: "etcd://::1:2379/p", err: "too many colons"},
		{in: "etcd://[h]:2379/p", err: "brackets"},
		{in: "etcd://@h:2379/p", err: "user name"},
		{in: "etcd://h:2379/p?bogus=1", err: "unknown"},
		{in: "etcd://h:2379/p?dial-timeout=-1s", err: "positive duration"},
		{in: "etcd://h:2379/p?max-txn-ops=x", err: "positive count"},
		{in: "etcd://h:2379/p?cert=a&cert=b", err: "once"},
		{in: "etcd://h:2379/p%zz", err: "invalid URL escape"},
		{in: "etcd://u:secret@h:1", err: "u:xxxxx@h:1"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := etcd.ParseURL(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseURL: %v, want an error with %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Fatalf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseURL = %+v, want %+v", got, tc.want)
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("a parsed URL does not validate: %v", err)
			}
			if strings.Contains(got.String(), "secret") {
				t.Fatalf("String shows the password: %s", got)
			}
		})
	}
}

// FuzzParseURL checks that ParseURL never panics and that what it
// accepts formats back (URL) to a string it parses to the same Config.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"etcd://127.0.0.1:2379/cairn",
		"etcds://u:p%40w@a:1,[::1]:2/x%2Fy/?cacert=c&max-txn-ops=9&dial-timeout=1s",
		"etcd://h:2379/p?key=k&cert=c&request-timeout=2m&max-request-bytes=7",
		"etcd://h:1//",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := etcd.ParseURL(s)
		if err != nil {
			return
		}
		again, err := etcd.ParseURL(c.URL())
		if err != nil {
			t.Fatalf("%q parsed, but its URL %q does not: %v", s, c.URL(), err)
		}
		if !reflect.DeepEqual(c, again) {
			t.Fatalf("%q: %#v, through URL %q: %#v", s, c, c.URL(), again)
		}
		if c.Password != "" && strings.Contains(c.String(), ":"+c.Password+"@") {
			t.Fatalf("String shows the password: %s", c.String())
		}
	})
}
