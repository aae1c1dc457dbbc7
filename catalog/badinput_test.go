package catalog_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnstore/cairn/catalog"
)

func TestBadInput(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.mustCreate("t")
	for _, name := range []string{"", "a/b", "nul\x00", "ctl\x01", "del\u007f", "c1\u0085", ".", "..", string([]byte{0xff})} {
		_, err := e.svc.CreateTable(ctx, "lake", []string{"ns"}, []byte(`{"name":"`+jsonEscape(name)+`","schema":`+schemaJSON+`}`))
		wantErr(t, err, catalog.ErrBadRequest)
		wantErr(t, e.svc.CreateNamespace(ctx, "lake", []string{name}, nil), catalog.ErrBadRequest)
		_, err = e.svc.LoadTable(ctx, "lake", catalog.Ident{Namespace: []string{"ns"}, Name: name}, "")
		wantErr(t, err, catalog.ErrBadRequest)
	}
	wantErr(t, e.svc.CreateNamespace(ctx, "lake", nil, nil), catalog.ErrBadRequest)
	for _, body := range []string{``, `{`, `[]`, `{"name":"x"}`, `{"name":"x","schema":{"type":"struct","fields":[{"id":1,"name":"a","type":"bogus"}]}}`} {
		_, err := e.svc.CreateTable(ctx, "lake", []string{"ns"}, []byte(body))
		wantErr(t, err, catalog.ErrBadRequest)
	}
	for _, body := range []string{``, `{`, `null`, `{"requirements":{}}`, `{"updates":[{"action":"nope"}]}`,
		`{"requirements":[{"type":"nope"}]}`, `{"updates":[null]}`, `{"identifier":{"namespace":["ns"],"name":"other"},"updates":[]}`} {
		_, err := e.svc.CommitTable(ctx, "lake", id("t"), []byte(body))
		wantErr(t, err, catalog.ErrBadRequest)
	}
	_, err := e.svc.LoadTable(ctx, "lake", id("t"), "some")
	wantErr(t, err, catalog.ErrBadRequest)
	_, _, err = e.svc.ListTables(ctx, "lake", []string{"ns"}, "!!!", 1)
	wantErr(t, err, catalog.ErrBadRequest)
	_, err = e.svc.LoadTable(ctx, "unknown", id("t"), "")
	wantErr(t, err, catalog.ErrNoSuchWarehouse)

	// Transactions: malformed, one change (applied), several (applied
	// together), one table twice (400).
	wantErr(t, e.svc.CommitTransaction(ctx, "lake", []byte(`{}`)), catalog.ErrBadRequest)
	wantErr(t, e.svc.CommitTransaction(ctx, "lake", []byte(`{"table-changes":[{"updates":[]}]}`)), catalog.ErrBadRequest)
	one := `{"identifier":{"namespace":["ns"],"name":"t"},"requirements":[],"updates":[{"action":"set-properties","updates":{"tx":"1"}}]}`
	wantErr(t, e.svc.CommitTransaction(ctx, "lake", []byte(`{"table-changes":[`+one+`]}`)), nil)
	other := strings.Replace(one, `"name":"t"`, `"name":"u"`, 1)
	e.mustCreate("u")
	wantErr(t, e.svc.CommitTransaction(ctx, "lake", []byte(`{"table-changes":[`+one+`,`+other+`]}`)), nil)
	wantErr(t, e.svc.CommitTransaction(ctx, "lake", []byte(`{"table-changes":[`+one+`,`+one+`]}`)), catalog.ErrBadRequest)
}

func jsonEscape(s string) string {
	out := ""
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			out += `\u00` + string("0123456789abcdef"[r>>4]) + string("0123456789abcdef"[r&15])
			continue
		}
		out += string(r)
	}
	if s == string([]byte{0xff}) {
		return "\xff"
	}
	return out
}
