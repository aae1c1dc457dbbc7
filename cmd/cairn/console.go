package main

import (
	"net/http"
	"strings"

	"github.com/rs/zerolog"

	"github.com/cairnstore/cairn/frontends/console"
)

// withConsole serves the web console at /console/ in front of root (the
// other faces): unsigned requests under /console go to the console, which
// calls root in process with the signed-in user's keys; everything else,
// and any signed request (to an S3 bucket named "console"), goes to root.
// secureCookie marks the session cookie Secure on plain-HTTP requests too
// (serve --console-secure-cookie, for TLS ending at a proxy).
func withConsole(root http.Handler, region string, secureCookie bool, log zerolog.Logger) (http.Handler, error) {
	c, err := console.New(console.Options{
		Upstream:     root,
		Region:       region,
		SecureCookie: secureCookie,
		Logger:       log.With().Str("component", "console").Logger(),
	})
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if (p == console.Prefix || strings.HasPrefix(p, console.Prefix+"/")) && unsigned(r, nil) {
			c.ServeHTTP(w, r)
			return
		}
		root.ServeHTTP(w, r)
	}), nil
}
