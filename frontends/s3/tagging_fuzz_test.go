package s3

import (
	"reflect"
	"testing"
	"unicode/utf8"
)

func FuzzParseTaggingXML(f *testing.F) {
	for _, s := range []string{
		simpleTags(2), simpleTags(11), `<Tagging><TagSet></TagSet></Tagging>`,
		`<Tagging><TagSet><Tag><Key>aws:x</Key><Value>1</Value></Tag></TagSet></Tagging>`,
		`<Tagging><TagSet><Tag><Key>&amp;</Key></Tag>`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		tags, err := parseTaggingXML(raw, maxBucketTags)
		if err != nil {
			if apiCode(err)[0] == '?' {
				t.Fatalf("%q: error without an S3 code: %v", raw, err)
			}
			return
		}
		checkAccepted(t, tags, maxBucketTags)
	})
}

func FuzzParseTaggingHeader(f *testing.F) {
	for _, s := range []string{"foo=bar&bar", "a=1&a=2", "%zz", "k%20x=v+w", "aws:x=1", "&&", "="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		tags, err := parseTaggingHeader(h)
		if err != nil {
			if apiCode(err)[0] == '?' {
				t.Fatalf("%q: error without an S3 code: %v", h, err)
			}
			return
		}
		checkAccepted(t, tags, maxObjectTags)
	})
}

// FuzzDecodeTags fuzzes the Sys/Config tag record decoder: whatever it
// accepts re-encodes to a record that decodes the same.
func FuzzDecodeTags(f *testing.F) {
	for _, s := range []string{"", "a=1&b=2", "a", "a=1&&", "%", "%E2%82%AC=%2B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rec string) {
		tags, err := decodeTags(rec)
		if err != nil {
			return
		}
		again, err := decodeTags(encodeTags(tags))
		if err != nil || (len(tags) > 0 && !reflect.DeepEqual(again, tags)) {
			t.Fatalf("%q: %+v re-decodes to %+v %v", rec, tags, again, err)
		}
	})
}

// checkAccepted asserts what an accepted tag set must hold.
func checkAccepted(t *testing.T, tags []tag, max int) {
	t.Helper()
	if len(tags) > max {
		t.Fatalf("accepted %d tags", len(tags))
	}
	seen := map[string]bool{}
	for i, tg := range tags {
		if tg.Key == "" || utf8.RuneCountInString(tg.Key) > maxTagKeyLen || utf8.RuneCountInString(tg.Value) > maxTagValueLen || seen[tg.Key] {
			t.Fatalf("accepted %+v", tg)
		}
		if i > 0 && tags[i-1].Key >= tg.Key {
			t.Fatalf("not sorted: %+v", tags)
		}
		seen[tg.Key] = true
	}
}
