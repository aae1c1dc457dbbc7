package main

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/cairnstore/cairn/frontends/iceberg"
	"github.com/cairnstore/cairn/frontends/s3/access"
)

// s3tablesOptions configure the AWS S3 Tables API of the Iceberg face:
// its ARNs carry serve's --region and the one account of Cairn's users.
func s3tablesOptions(parts *catalogParts) iceberg.S3TablesOptions {
	return iceberg.S3TablesOptions{Region: parts.regionName(), AccountID: access.AccountID}
}

// s3tablesRequest matches requests signed for the service s3tables (the
// credential scope of a SigV4 Authorization header or of a presigned
// X-Amz-Credential) outside the Iceberg face's own paths: the AWS S3
// Tables API, whose paths (/buckets, /namespaces/..., /tables/...,
// /get-table) would otherwise name S3 buckets. The face checks the
// signature; this only routes. /_cairn/ stays Cairn's admin API.
func s3tablesRequest(r *http.Request, _ *mux.RouteMatch) bool {
	p := r.URL.Path
	for _, own := range []string{iceberg.Base + "/", iceberg.AliasBase + "/", "/_cairn/"} {
		if strings.HasPrefix(p, own) {
			return false
		}
	}
	return signingService(r) == "s3tables"
}

// signingService is the service of a SigV4 request's credential scope
// (AKID/DATE/REGION/SERVICE/aws4_request), or "" when it has none.
func signingService(r *http.Request) string {
	var cred string
	if h := r.Header.Get("Authorization"); h != "" {
		_, rest, ok := strings.Cut(h, "Credential=")
		if !ok {
			return ""
		}
		cred, _, _ = strings.Cut(rest, ",")
	} else {
		cred = r.URL.Query().Get("X-Amz-Credential")
	}
	parts := strings.Split(strings.TrimSpace(cred), "/")
	if len(parts) < 5 || parts[len(parts)-1] != "aws4_request" {
		return ""
	}
	return parts[len(parts)-2]
}
