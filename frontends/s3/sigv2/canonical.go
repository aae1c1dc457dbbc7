package sigv2

import (
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// awsSubresources are the query parameters AWS's "Constructing the
// CanonicalizedResource element" lists (acl, lifecycle, location, logging,
// notification, partNumber, policy, requestPayment, torrent, uploadId,
// uploads, versionId, versioning, versions, website, the response-*
// overrides, delete, cors, tagging) with those added for later APIs that
// minio-go signs too.
var awsSubresources = map[string]bool{
	"acl": true, "cors": true, "delete": true, "encryption": true, "legal-hold": true,
	"lifecycle": true, "location": true, "logging": true, "notification": true,
	"partNumber": true, "policy": true, "replication": true, "requestPayment": true,
	"response-cache-control": true, "response-content-disposition": true,
	"response-content-encoding": true, "response-content-language": true,
	"response-content-type": true, "response-expires": true, "retention": true,
	"select": true, "select-type": true, "tagging": true, "torrent": true,
	"uploadId": true, "uploads": true, "versionId": true, "versioning": true,
	"versions": true, "website": true,
}

// botocoreSubresources are the parameters botocore's HmacV1Auth signs
// (aws-cli v1, boto3 with signature_version "s3").
var botocoreSubresources = map[string]bool{
	"accelerate": true, "acl": true, "analytics": true, "cors": true, "defaultObjectAcl": true,
	"delete": true, "inventory": true, "lifecycle": true, "location": true, "logging": true,
	"metrics": true, "notification": true, "object-lock": true, "partNumber": true,
	"policy": true, "replication": true, "requestPayment": true,
	"response-cache-control": true, "response-content-disposition": true,
	"response-content-encoding": true, "response-content-language": true,
	"response-content-type": true, "response-expires": true, "restore": true,
	"select": true, "select-type": true, "storageClass": true, "tagging": true,
	"torrent": true, "uploadId": true, "uploads": true, "versionId": true,
	"versioning": true, "versions": true, "website": true,
}

// resourceRule is how one family of clients builds the sub-resource part.
type resourceRule struct {
	names map[string]bool
	// all keeps every occurrence of a name and writes "name=" when the
	// query had "name=" (botocore); otherwise only the first value is
	// kept and an empty value is written as "name" alone (minio-go, AWS).
	all bool
}

var (
	ruleAWS      = resourceRule{names: awsSubresources}
	ruleBotocore = resourceRule{names: botocoreSubresources, all: true}
)

// subresources returns the "?name=value&..." suffix of the
// CanonicalizedResource for rawQuery under rule, or "" when the query
// carries no sub-resource. Names and values are percent-decoded; the
// parts are sorted by name, stably.
func subresources(rawQuery string, rule resourceRule) string {
	type param struct{ name, part string }
	var ps []param
	seen := map[string]bool{}
	for part := range strings.SplitSeq(rawQuery, "&") {
		if part == "" {
			continue
		}
		k, v, hasEq := strings.Cut(part, "=")
		name := unescape(k)
		if !rule.names[name] || (!rule.all && seen[name]) {
			continue
		}
		seen[name] = true
		val := unescape(v)
		s := name
		if val != "" || (rule.all && hasEq) {
			s += "=" + val
		}
		ps = append(ps, param{name, s})
	}
	if len(ps) == 0 {
		return ""
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].name < ps[j].name })
	var b strings.Builder
	for i, p := range ps {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(p.part)
	}
	return b.String()
}

// unescape percent-decodes a query name or value, '+' as a space; an
// invalid escape leaves s as it is.
func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// wirePath is r's path as the client sent it: from RequestURI on a
// server, or as net/http will send it on a client.
func wirePath(r *http.Request) string {
	if strings.HasPrefix(r.RequestURI, "/") {
		p, _, _ := strings.Cut(r.RequestURI, "?")
		return p
	}
	return r.URL.EscapedPath()
}

// encodePath encodes every byte of p outside A-Z a-z 0-9 - _ . ~ / as %XX,
// as minio-go does before signing.
func encodePath(p string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~/", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// resourcePaths returns the path candidates of the CanonicalizedResource:
// the wire path, then the decoded path re-encoded, each after "/" + bucket
// for a virtual-hosted request (bucket not empty); for a path-style
// request of a bucket ("/bucket"), also "/bucket/".
func resourcePaths(r *http.Request, bucket string) []string {
	prefix := ""
	if bucket != "" {
		prefix = "/" + bucket
	}
	wire := wirePath(r)
	if wire == "" && bucket == "" {
		wire = "/"
	}
	out := []string{prefix + wire}
	if enc := encodePath(r.URL.Path); enc != wire && r.URL.Path != "" {
		out = append(out, prefix+enc)
	}
	if bucket == "" && len(wire) > 1 && !strings.Contains(wire[1:], "/") {
		// A path-style bucket request, "/bucket": botocore signs the
		// bucket's resource, "/bucket/", as for a virtual-hosted one.
		out = append(out, wire+"/")
	}
	return out
}

// amzHeaders returns the CanonicalizedAmzHeaders: every x-amz-* header of
// h and every x-amz-* parameter of query (presigned URLs carry them there),
// names lowercase and sorted, each "name:value\n" with the values of a
// repeated name trimmed and joined by ",". skip names one to leave out.
func amzHeaders(h http.Header, query url.Values, skip string) string {
	vals := map[string][]string{}
	for k, vv := range h {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-amz-") && lk != skip {
			vals[lk] = append(vals[lk], vv...)
		}
	}
	for k, vv := range query {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-amz-") && lk != skip {
			vals[lk] = append(vals[lk], vv...)
		}
	}
	if len(vals) == 0 {
		return ""
	}
	names := make([]string, 0, len(vals))
	for k := range vals {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		b.WriteString(k)
		b.WriteByte(':')
		for i, v := range vals[k] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strings.TrimSpace(strings.ReplaceAll(v, "\n", " ")))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// stringToSign joins the parts of a StringToSign.
func stringToSign(method, contentMD5, contentType, date, amz, resource string) string {
	return method + "\n" + contentMD5 + "\n" + contentType + "\n" + date + "\n" + amz + resource
}
