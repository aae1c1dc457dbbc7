package s3

import (
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/objstore"
)

func apiCode(err error) string {
	var api *APIError
	if errors.As(err, &api) {
		return api.Code
	}
	if err == nil {
		return ""
	}
	return "?" + err.Error()
}

func simpleTags(n int) string {
	var b strings.Builder
	b.WriteString("<Tagging><TagSet>")
	for i := 0; i < n; i++ {
		b.WriteString("<Tag><Key>k" + string(rune('a'+i%26)) + strings.Repeat("x", i/26) + "</Key><Value>v</Value></Tag>")
	}
	b.WriteString("</TagSet></Tagging>")
	return b.String()
}

func TestParseTaggingXML(t *testing.T) {
	tag1 := func(k, v string) string {
		return "<Tagging><TagSet><Tag><Key>" + k + "</Key><Value>" + v + "</Value></Tag></TagSet></Tagging>"
	}
	for _, tc := range []struct {
		name string
		body string
		max  int
		want []tag
		code string
	}{
		{"two, sorted", `<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet><Tag><Key>b</Key><Value>2</Value></Tag><Tag><Key>a</Key><Value></Value></Tag></TagSet></Tagging>`,
			maxObjectTags, []tag{{"a", ""}, {"b", "2"}}, ""},
		{"empty set", `<Tagging><TagSet></TagSet></Tagging>`, maxObjectTags, nil, ""},
		{"no tag set", `<Tagging></Tagging>`, maxObjectTags, nil, "MalformedXML"},
		{"wrong root", `<Tags><TagSet></TagSet></Tags>`, maxObjectTags, nil, "MalformedXML"},
		{"not xml", `<Tagging><TagSet>`, maxObjectTags, nil, "MalformedXML"},
		{"ten", simpleTags(10), maxObjectTags, nil, ""},
		{"eleven", simpleTags(11), maxObjectTags, nil, "InvalidTag"},
		{"fifty on a bucket", simpleTags(50), maxBucketTags, nil, ""},
		{"fifty-one on a bucket", simpleTags(51), maxBucketTags, nil, "InvalidTag"},
		{"key of 128", tag1(strings.Repeat("k", 128), "v"), maxObjectTags, []tag{{strings.Repeat("k", 128), "v"}}, ""},
		{"key of 128 runes", tag1(strings.Repeat("é", 128), "v"), maxObjectTags, []tag{{strings.Repeat("é", 128), "v"}}, ""},
		{"key of 129", tag1(strings.Repeat("k", 129), "v"), maxObjectTags, nil, "InvalidTag"},
		{"value of 256", tag1("k", strings.Repeat("v", 256)), maxObjectTags, []tag{{"k", strings.Repeat("v", 256)}}, ""},
		{"value of 257", tag1("k", strings.Repeat("v", 257)), maxObjectTags, nil, "InvalidTag"},
		{"empty key", tag1("", "v"), maxObjectTags, nil, "InvalidTag"},
		{"aws prefix", tag1("aws:cost", "v"), maxObjectTags, nil, "InvalidTag"},
		{"AWS prefix", tag1("AWS:cost", "v"), maxObjectTags, nil, "InvalidTag"},
		{"allowed symbols", tag1("a+-=._:/@ b", "x y"), maxObjectTags, []tag{{"a+-=._:/@ b", "x y"}}, ""},
		{"bad character", tag1("a{b}", "v"), maxObjectTags, nil, "InvalidTag"},
		{"duplicate", `<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>a</Key><Value>2</Value></Tag></TagSet></Tagging>`,
			maxObjectTags, nil, "InvalidTag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTaggingXML([]byte(tc.body), tc.max)
			if apiCode(err) != tc.code {
				t.Fatalf("error %v, want code %q", err, tc.code)
			}
			if tc.want != nil && !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("tags %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseTaggingHeader(t *testing.T) {
	for _, tc := range []struct {
		h    string
		want []tag
		code string
	}{
		{"foo=bar&bar", []tag{{"bar", ""}, {"foo", "bar"}}, ""},
		{"a=1", []tag{{"a", "1"}}, ""},
		{"k%20x=v+w", []tag{{"k x", "v w"}}, ""},
		{"%C3%A9=1", []tag{{"é", "1"}}, ""},
		{"%E2%82%AC=1", nil, "InvalidTag"}, // a currency sign is no letter
		{"a=1&a=2", nil, "InvalidArgument"},
		{"a=%zz", nil, "InvalidArgument"},
		{"aws:x=1", nil, "InvalidTag"},
		{"a=1&&b=2", nil, "InvalidTag"},
		{strings.Repeat("k", 129) + "=1", nil, "InvalidTag"},
		{"a=1&b=1&c=1&d=1&e=1&f=1&g=1&h=1&i=1&j=1&k=1", nil, "InvalidTag"},
	} {
		got, err := parseTaggingHeader(tc.h)
		if apiCode(err) != tc.code || (tc.want != nil && !reflect.DeepEqual(got, tc.want)) {
			t.Errorf("%q: %+v %v, want %+v %q", tc.h, got, err, tc.want, tc.code)
		}
	}
}

func TestTagRecordRoundTrip(t *testing.T) {
	for _, tags := range [][]tag{
		nil,
		{{"a", ""}},
		{{"a b", "c&d=e"}, {"€", "%+/"}},
	} {
		rec := encodeTags(tags)
		got, err := decodeTags(rec)
		if err != nil || !reflect.DeepEqual(got, tags) {
			t.Errorf("%+v: record %q decodes to %+v %v", tags, rec, got, err)
		}
		info := objstore.ObjectInfo{Attrs: objstore.Attrs{Sys: map[string]string{sysTags: rec}}}
		h := http.Header{}
		(&Server{}).tagHeaders(h, info)
		if want := len(tags); (want == 0 && h.Get("x-amz-tagging-count") != "") || (want > 0 && h.Get("x-amz-tagging-count") != string(rune('0'+want))) {
			t.Errorf("%+v: x-amz-tagging-count %q", tags, h.Get("x-amz-tagging-count"))
		}
		m, err := objectTags(info)
		if err != nil || len(m) != len(tags) {
			t.Errorf("objectTags %v %v", m, err)
		}
	}
}

func TestTagAttrs(t *testing.T) {
	s := &Server{}
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   string // the record, "" none
		code   string
	}{
		{"none", nil, "", ""},
		{"put", map[string]string{"x-amz-tagging": "b=2&a=1"}, "a=1&b=2", ""},
		{"bad header", map[string]string{"x-amz-tagging": "a=1&a=1"}, "", "InvalidArgument"},
		{"copy keeps", map[string]string{"x-amz-copy-source": "/b/k", "x-amz-tagging": "a=1"}, "", ""},
		{"copy COPY", map[string]string{"x-amz-copy-source": "/b/k", "x-amz-tagging-directive": "COPY", "x-amz-tagging": "a=1"}, "", ""},
		{"copy REPLACE", map[string]string{"x-amz-copy-source": "/b/k", "x-amz-tagging-directive": "REPLACE", "x-amz-tagging": "a=1"}, "a=1", ""},
		{"copy bad directive", map[string]string{"x-amz-copy-source": "/b/k", "x-amz-tagging-directive": "MERGE"}, "", "InvalidArgument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := http.NewRequest("PUT", "http://h/b/k", nil)
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			var a objstore.Attrs
			err := s.tagAttrs(&request{Request: r}, &a)
			if apiCode(err) != tc.code || a.Sys[sysTags] != tc.want {
				t.Fatalf("record %q err %v, want %q %q", a.Sys[sysTags], err, tc.want, tc.code)
			}
			if err == nil {
				m, err := requestTags(&request{Request: r})
				if err != nil || (tc.header["x-amz-tagging"] == "" && len(m) != 0) {
					t.Fatalf("requestTags %v %v", m, err)
				}
			}
		})
	}
}
