package postform

import (
	"encoding/xml"
	"fmt"
	"net/url"
	"strings"
)

// maxTagging bounds a tagging field (S3 allows 10 tags of 128+256
// characters; 16 KiB holds them in any encoding).
const maxTagging = 16 << 10

// TaggingQuery turns a form's tagging field, S3's Tagging XML
// (<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag>...), into the
// URL-encoded form of the x-amz-tagging header a PUT carries ("k=v&..."),
// in the order given. Whether the tags are acceptable (count, lengths,
// duplicates) is for the tagging code that reads that header to say.
func TaggingQuery(doc string) (string, error) {
	if len(doc) > maxTagging {
		return "", fmt.Errorf("%w: The tagging field is larger than %d bytes", ErrInvalidArgument, maxTagging)
	}
	var t struct {
		XMLName xml.Name `xml:"Tagging"`
		Tags    []struct {
			Key   *string `xml:"Key"`
			Value *string `xml:"Value"`
		} `xml:"TagSet>Tag"`
	}
	if err := xml.Unmarshal([]byte(doc), &t); err != nil {
		return "", fmt.Errorf("%w: The tagging field is not well-formed Tagging XML", ErrInvalidArgument)
	}
	var b strings.Builder
	for i, tag := range t.Tags {
		if tag.Key == nil {
			return "", fmt.Errorf("%w: A Tag of the tagging field has no Key", ErrInvalidArgument)
		}
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(url.QueryEscape(*tag.Key))
		b.WriteByte('=')
		if tag.Value != nil {
			b.WriteString(url.QueryEscape(*tag.Value))
		}
	}
	return b.String(), nil
}
