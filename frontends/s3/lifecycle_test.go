package s3

import (
	"encoding/xml"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
)

// lcDoc wraps rules in a LifecycleConfiguration.
func lcDoc(rules ...string) string {
	return `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">` +
		strings.Join(rules, "") + `</LifecycleConfiguration>`
}

// lcRule is a rule element of the given inner XML.
func lcRule(inner string) string { return "<Rule>" + inner + "</Rule>" }

const lcExpire = `<Status>Enabled</Status><Expiration><Days>1</Days></Expiration>`

func TestParseLifecycleRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc, code string
	}{
		{"not xml", "<Lifecycle", "MalformedXML"},
		{"no rules", lcDoc(), "MalformedXML"},
		{"too many rules", lcDoc(strings.Repeat(lcRule(`<Prefix/>`+lcExpire), 1001)), "MalformedXML"},
		{"id too long", lcDoc(lcRule(`<ID>` + strings.Repeat("a", 256) + `</ID><Prefix>p/</Prefix>` + lcExpire)), "InvalidArgument"},
		{"same id", lcDoc(lcRule(`<ID>r</ID><Prefix>a/</Prefix>`+lcExpire), lcRule(`<ID>r</ID><Prefix>b/</Prefix>`+lcExpire)), "InvalidArgument"},
		{"lowercase status", lcDoc(lcRule(`<Prefix/><Status>enabled</Status><Expiration><Days>1</Days></Expiration>`)), "MalformedXML"},
		{"no status", lcDoc(lcRule(`<Prefix/><Expiration><Days>1</Days></Expiration>`)), "MalformedXML"},
		{"neither prefix nor filter", lcDoc(lcRule(lcExpire)), "MalformedXML"},
		{"prefix and filter", lcDoc(lcRule(`<Prefix/><Filter/>` + lcExpire)), "MalformedXML"},
		{"filter with two conditions", lcDoc(lcRule(`<Filter><Prefix>a</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></Filter>` + lcExpire)), "MalformedXML"},
		{"empty and", lcDoc(lcRule(`<Filter><And></And></Filter>` + lcExpire)), "MalformedXML"},
		{"bad tag key", lcDoc(lcRule(`<Filter><Tag><Key>aws:x</Key><Value>v</Value></Tag></Filter>` + lcExpire)), "InvalidTag"},
		{"duplicate and tags", lcDoc(lcRule(`<Filter><And><Tag><Key>k</Key><Value>1</Value></Tag><Tag><Key>k</Key><Value>2</Value></Tag></And></Filter>` + lcExpire)), "InvalidTag"},
		{"negative size", lcDoc(lcRule(`<Filter><ObjectSizeGreaterThan>-1</ObjectSizeGreaterThan></Filter>` + lcExpire)), "InvalidArgument"},
		{"size bounds crossed", lcDoc(lcRule(`<Filter><And><ObjectSizeGreaterThan>10</ObjectSizeGreaterThan><ObjectSizeLessThan>10</ObjectSizeLessThan></And></Filter>` + lcExpire)), "InvalidArgument"},
		{"size not a number", lcDoc(lcRule(`<Filter><ObjectSizeLessThan>ten</ObjectSizeLessThan></Filter>` + lcExpire)), "MalformedXML"},
		{"no action", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status>`)), "InvalidRequest"},
		{"days zero", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status><Expiration><Days>0</Days></Expiration>`)), "InvalidArgument"},
		{"days not a number", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status><Expiration><Days>x</Days></Expiration>`)), "MalformedXML"},
		{"empty expiration", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status><Expiration></Expiration>`)), "MalformedXML"},
		{"days and date", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status><Expiration><Days>1</Days><Date>2030-01-01T00:00:00Z</Date></Expiration>`)), "MalformedXML"},
		{"days and delete marker", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status><Expiration><Days>1</Days><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>`)), "MalformedXML"},
		{"date not midnight", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status><Expiration><Date>1970-08-22T19:08:21Z</Date></Expiration>`)), "InvalidArgument"},
		{"date not iso 8601", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status><Expiration><Date>20200101</Date></Expiration>`)), "InvalidArgument"},
		{"delete marker with tags", lcDoc(lcRule(`<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>`)), "InvalidRequest"},
		{"noncurrent days zero", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>0</NoncurrentDays></NoncurrentVersionExpiration>`)), "InvalidArgument"},
		{"noncurrent without days", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status><NoncurrentVersionExpiration><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration>`)), "InvalidArgument"},
		{"newer noncurrent over 100", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays><NewerNoncurrentVersions>101</NewerNoncurrentVersions></NoncurrentVersionExpiration>`)), "InvalidArgument"},
		{"abort days zero", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>0</DaysAfterInitiation></AbortIncompleteMultipartUpload>`)), "InvalidArgument"},
		{"abort with tags", lcDoc(lcRule(`<Filter><Tag><Key>k</Key><Value>v</Value></Tag></Filter><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>1</DaysAfterInitiation></AbortIncompleteMultipartUpload>`)), "InvalidRequest"},
		{"transition", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status><Transition><Days>30</Days><StorageClass>GLACIER</StorageClass></Transition>`)), "InvalidStorageClass"},
		{"transition with an expiration", lcDoc(lcRule(`<Prefix/>` + lcExpire + `<Transition><Days>30</Days><StorageClass>STANDARD_IA</StorageClass></Transition>`)), "InvalidStorageClass"},
		{"transition date not iso 8601", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status><Expiration><Date>2023-09-27T00:00:00Z</Date></Expiration><Transition><Date>1970-08-22T19:08:21Z</Date><StorageClass>GLACIER</StorageClass></Transition>`)), "InvalidArgument"},
		{"noncurrent transition", lcDoc(lcRule(`<Prefix/><Status>Enabled</Status><NoncurrentVersionTransition><NoncurrentDays>30</NoncurrentDays><StorageClass>GLACIER</StorageClass></NoncurrentVersionTransition>`)), "InvalidStorageClass"},
	} {
		rules, err := parseLifecycle([]byte(tc.doc))
		if got := apiCode(err); got != tc.code {
			t.Errorf("%s: %q (%v, rules %+v), want %s", tc.name, got, err, rules, tc.code)
		}
		if err != nil && errStatus(err) != 400 {
			t.Errorf("%s: status %d, want 400", tc.name, errStatus(err))
		}
	}
}

func errStatus(err error) int {
	if api, ok := err.(*APIError); ok {
		return api.Status
	}
	return 0
}

func TestParseLifecycleRules(t *testing.T) {
	t.Parallel()
	size := func(n int64) *int64 { return &n }
	midnight := time.Date(2017, 9, 27, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		rule string
		want objstore.LifecycleRule
	}{
		{"legacy prefix", `<ID>r</ID><Prefix>test1/</Prefix>` + lcExpire,
			objstore.LifecycleRule{ID: "r", Prefix: "test1/", Enabled: true, ExpirationDays: 1}},
		{"filter prefix, disabled", `<ID>r</ID><Filter><Prefix>foo</Prefix></Filter><Status>Disabled</Status><Expiration><Days>3</Days></Expiration>`,
			objstore.LifecycleRule{ID: "r", Prefix: "foo", ExpirationDays: 3}},
		{"empty filter, delete marker", `<ID>r</ID><Filter/><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>`,
			objstore.LifecycleRule{ID: "r", Enabled: true, ExpiredDeleteMarker: true}},
		{"date", `<ID>r</ID><Prefix/><Status>Enabled</Status><Expiration><Date>2017-09-27T00:00:00.000Z</Date></Expiration>`,
			objstore.LifecycleRule{ID: "r", Enabled: true, ExpirationDate: midnight}},
		{"tag", `<ID>r</ID><Filter><Tag><Key>key1</Key><Value>tag1</Value></Tag></Filter>` + lcExpire,
			objstore.LifecycleRule{ID: "r", Enabled: true, ExpirationDays: 1, Tags: []objstore.Tag{{Key: "key1", Value: "tag1"}}, TagRecord: sysTags}},
		{"and", `<ID>r</ID><Filter><And><Prefix>p/</Prefix><Tag><Key>b</Key><Value>2</Value></Tag><Tag><Key>a</Key><Value>1</Value></Tag>` +
			`<ObjectSizeGreaterThan>0</ObjectSizeGreaterThan><ObjectSizeLessThan>1024</ObjectSizeLessThan></And></Filter>` + lcExpire,
			objstore.LifecycleRule{ID: "r", Prefix: "p/", Enabled: true, ExpirationDays: 1,
				Tags: []objstore.Tag{{Key: "b", Value: "2"}, {Key: "a", Value: "1"}}, TagRecord: sysTags,
				SizeGreaterThan: size(0), SizeLessThan: size(1024)}},
		{"size alone", `<ID>r</ID><Filter><ObjectSizeLessThan>5</ObjectSizeLessThan></Filter>` + lcExpire,
			objstore.LifecycleRule{ID: "r", Enabled: true, ExpirationDays: 1, SizeLessThan: size(5)}},
		{"noncurrent", `<ID>r</ID><Prefix>past/</Prefix><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>2</NoncurrentDays><NewerNoncurrentVersions>3</NewerNoncurrentVersions></NoncurrentVersionExpiration>`,
			objstore.LifecycleRule{ID: "r", Prefix: "past/", Enabled: true, NoncurrentDays: 2, NewerNoncurrent: 3}},
		{"all object actions", `<ID>r</ID><Prefix/><Status>Enabled</Status><Expiration><Days>9</Days></Expiration>` +
			`<NoncurrentVersionExpiration><NoncurrentDays>1</NoncurrentDays></NoncurrentVersionExpiration>` +
			`<AbortIncompleteMultipartUpload><DaysAfterInitiation>2</DaysAfterInitiation></AbortIncompleteMultipartUpload>`,
			objstore.LifecycleRule{ID: "r", Enabled: true, ExpirationDays: 9, NoncurrentDays: 1, AbortIncompleteDays: 2}},
	} {
		rules, err := parseLifecycle([]byte(lcDoc(lcRule(tc.rule))))
		if err != nil || len(rules) != 1 {
			t.Errorf("%s: %+v %v", tc.name, rules, err)
			continue
		}
		got := rules[0]
		if len(got.Doc) == 0 {
			t.Errorf("%s: no rule element kept", tc.name)
		}
		got.Doc = nil
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

// GET returns each rule in the shape it was put in, a rule put without an
// ID with a generated one.
func TestLifecycleRoundTrip(t *testing.T) {
	t.Parallel()
	in := []string{
		`<ID>test1/</ID><Prefix>test1/</Prefix><Status>Enabled</Status><Expiration><Days>31</Days></Expiration>`,
		`<ID>f</ID><Filter><Prefix>foo</Prefix></Filter><Status>Enabled</Status><Expiration><ExpiredObjectDeleteMarker>true</ExpiredObjectDeleteMarker></Expiration>`,
		`<ID>e</ID><Filter></Filter><Status>Disabled</Status><Expiration><Date>2017-09-27T00:00:00Z</Date></Expiration>`,
		`<ID>t</ID><Filter><And><Prefix>p</Prefix><Tag><Key>k</Key><Value>v</Value></Tag></And></Filter><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>2</NoncurrentDays></NoncurrentVersionExpiration>`,
		`<Prefix>noid/</Prefix><Status>Enabled</Status><AbortIncompleteMultipartUpload><DaysAfterInitiation>2</DaysAfterInitiation></AbortIncompleteMultipartUpload>`,
	}
	var rules []string
	for _, r := range in {
		rules = append(rules, lcRule(r))
	}
	parsed, err := parseLifecycle([]byte(lcDoc(rules...)))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range parsed {
		out, err := xml.Marshal(renderRule(r))
		if err != nil {
			t.Fatal(err)
		}
		want := rules[i]
		if i == len(in)-1 {
			if r.ID == "" || len(r.ID) > maxRuleIDLen {
				t.Fatalf("generated ID %q", r.ID)
			}
			want = lcRule(`<ID>` + r.ID + `</ID>` + in[i])
		}
		if string(out) != want {
			t.Errorf("rule %d:\n got %s\nwant %s", i, out, want)
		}
	}
	// A rule stored before rules kept their element renders from its fields.
	old := renderRule(objstore.LifecycleRule{ID: "o", Prefix: "tmp/", Enabled: true, ExpirationDays: 2})
	if out, _ := xml.Marshal(old); string(out) != `<Rule><ID>o</ID><Filter><Prefix>tmp/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>2</Days></Expiration></Rule>` {
		t.Errorf("old rule: %s", out)
	}
}

// FuzzParseLifecycle: any body is refused with an S3 error or accepted;
// an accepted rule's kept element parses again to the same rule.
func FuzzParseLifecycle(f *testing.F) {
	for _, s := range []string{
		lcDoc(lcRule(`<ID>r</ID><Prefix>a/</Prefix>` + lcExpire)),
		lcDoc(lcRule(`<Filter><And><Prefix>p</Prefix><Tag><Key>k</Key><Value>v</Value></Tag><ObjectSizeLessThan>9</ObjectSizeLessThan></And></Filter><Status>Enabled</Status><NoncurrentVersionExpiration><NoncurrentDays>2</NoncurrentDays><NewerNoncurrentVersions>1</NewerNoncurrentVersions></NoncurrentVersionExpiration>`)),
		lcDoc(lcRule(`<Filter/><Status>Enabled</Status><Expiration><Date>2030-01-01T00:00:00Z</Date></Expiration><Transition><Days>1</Days><StorageClass>GLACIER</StorageClass></Transition>`)),
		lcDoc(lcRule(`<Filter><Tag><Key>k</Key></Tag></Filter><Status>Disabled</Status><Expiration><ExpiredObjectDeleteMarker>false</ExpiredObjectDeleteMarker></Expiration>`)),
		"", "<LifecycleConfiguration><Rule>",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		rules, err := parseLifecycle(raw)
		if err != nil {
			if apiCode(err)[0] == '?' {
				t.Fatalf("%q: error without an S3 code: %v", raw, err)
			}
			return
		}
		var again []string
		for _, r := range rules {
			if r.ID == "" || len(r.ID) > maxRuleIDLen {
				t.Fatalf("rule ID %q", r.ID)
			}
			again = append(again, string(r.Doc))
		}
		back, err := parseLifecycle([]byte(lcDoc(again...)))
		if err != nil {
			t.Fatalf("kept elements refused: %v\n%s", err, strings.Join(again, "\n"))
		}
		for i := range back {
			a, b := rules[i], back[i]
			a.Doc, b.Doc = nil, nil
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("rule %d changed on the way back:\n%+v\n%+v", i, a, b)
			}
		}
	})
}
