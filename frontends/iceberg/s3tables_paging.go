package iceberg

import (
	"encoding/base64"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// The S3 Tables lists page with continuationToken and maxBuckets,
// maxNamespaces or maxTables (1 to 1000, default 1000). A token is the
// last key of the page before, base64url-encoded: the next page starts
// after it, so a list keeps its place when keys are added or removed
// meanwhile.

// s3tMaxPage is the largest page and the default one.
const s3tMaxPage = 1000

// s3tPaging is a list request's paging.
type s3tPaging struct {
	prefix string
	after  string // the last key of the page before; "" for the first
	max    int
}

// parsePaging reads prefix, continuationToken and the limit parameter
// named limit from q.
func parsePaging(q url.Values, limit string) (s3tPaging, error) {
	p := s3tPaging{prefix: q.Get("prefix"), max: s3tMaxPage}
	if tok := q.Get("continuationToken"); tok != "" {
		after, err := decodeListToken(tok)
		if err != nil {
			return s3tPaging{}, err
		}
		p.after = after
	}
	if v := q.Get(limit); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > s3tMaxPage {
			return s3tPaging{}, badRequest("%s %q: give a number from 1 to %d", limit, v, s3tMaxPage)
		}
		p.max = n
	}
	return p, nil
}

// page returns the keys of the page: those with the prefix, after the
// token's key, at most max of them, in order; next is the token of the
// next page, "" on the last one.
func (p s3tPaging) page(keys []string, prefixOf func(string) string) (out []string, next string) {
	sort.Strings(keys)
	for _, k := range keys {
		if (p.after != "" && k <= p.after) || !strings.HasPrefix(prefixOf(k), p.prefix) {
			continue
		}
		if len(out) == p.max {
			return out, encodeListToken(out[len(out)-1])
		}
		out = append(out, k)
	}
	return out, ""
}

// encodeListToken is the continuationToken that resumes after key.
func encodeListToken(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(key))
}

// decodeListToken is the key a continuationToken resumes after.
func decodeListToken(tok string) (string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || len(raw) == 0 {
		return "", badRequest("continuationToken %q is not one this server gave: pass the continuationToken of the previous page unchanged, or none for the first page", clipQuoted(tok))
	}
	return string(raw), nil
}
