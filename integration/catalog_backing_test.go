package integration

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cairnstore/cairn/objstore"
	"github.com/cairnstore/cairn/objstore/storetest"
)

const strongWarehouse = "stronglake"

// TestCatalogBackingChoice: CAIRN_TABLE_CATALOG_BACKING picks the
// catalog's backing. An unknown value refuses to start, naming the valid
// ones. durable-strong serves the catalog and keeps it across a restart;
// a warehouse whose snapshot fails validation is not served, and
// /health/ready says which, while the server stays up.
func TestCatalogBackingChoice(t *testing.T) {
	t.Setenv("CAIRN_ROOT_USER", s3User)
	t.Setenv("CAIRN_ROOT_PASSWORD", s3Secret)

	t.Run("unknown value", func(t *testing.T) {
		t.Setenv("CAIRN_TABLE_CATALOG_BACKING", "sideways")
		s := startServer(t, t.TempDir())
		if code := s.wait(stopTimeout); code == 0 {
			t.Fatal("serve started with CAIRN_TABLE_CATALOG_BACKING=sideways")
		}
		if msg := s.stderr.String(); !strings.Contains(msg, "durable-strong") || !strings.Contains(msg, "object") {
			t.Errorf("the refusal does not name the valid values:\n%s", msg)
		}
	})

	t.Run("durable-strong", func(t *testing.T) {
		t.Setenv("CAIRN_TABLE_CATALOG_BACKING", "durable-strong")
		data := t.TempDir()
		s := startServer(t, data)
		s.waitReady(readyTimeout)
		if r := runCairn(t, 30*time.Second, "admin", "table-bucket", "create", strongWarehouse, "--endpoint", s.url("")); r.code != 0 {
			t.Fatalf("table-bucket create: %d %s", r.code, r.stderr)
		}
		tok := icebergToken(t, s)
		base := "/iceberg/v1/" + strongWarehouse
		icebergJSON(t, s, tok, http.MethodPost, base+"/namespaces", `{"namespace":["ns"],"properties":{"owner":"strong"}}`, http.StatusOK, nil)
		icebergJSON(t, s, tok, http.MethodPost, base+"/namespaces/ns/tables",
			`{"name":"t","schema":{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":true}]}}`, http.StatusOK, nil)
		var before restTable
		icebergJSON(t, s, tok, http.MethodGet, base+"/namespaces/ns/tables/t", "", http.StatusOK, &before)
		if code := s.stop(stopTimeout); code != 0 {
			t.Fatalf("exit %d after SIGTERM", code)
		}

		s = startServer(t, data)
		s.waitReady(readyTimeout)
		tok = icebergToken(t, s)
		var ns struct {
			Properties map[string]string `json:"properties"`
		}
		icebergJSON(t, s, tok, http.MethodGet, base+"/namespaces/ns", "", http.StatusOK, &ns)
		var after restTable
		icebergJSON(t, s, tok, http.MethodGet, base+"/namespaces/ns/tables/t", "", http.StatusOK, &after)
		if ns.Properties["owner"] != "strong" || after.MetadataLocation != before.MetadataLocation || after.Metadata.TableUUID != before.Metadata.TableUUID {
			t.Fatalf("after a restart: namespace %v, table %s %s, want owner=strong, %s %s",
				ns.Properties, after.MetadataLocation, after.Metadata.TableUUID, before.MetadataLocation, before.Metadata.TableUUID)
		}
		if code := s.stop(stopTimeout); code != 0 {
			t.Fatalf("exit %d after SIGTERM", code)
		}

		damageSnapshot(t, data, "strong/warehouses/"+strongWarehouse+".snapshot")
		s = startServer(t, data)
		body := waitNotReady(t, s)
		if !strings.Contains(body, strongWarehouse) {
			t.Errorf("/health/ready does not name the damaged warehouse: %s", body)
		}
		tok = icebergToken(t, s)
		req := newRaw(t, http.MethodGet, s.url(base+"/namespaces/ns/tables/t"), nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		if res := doRaw(t, req); res.status < 500 {
			t.Errorf("a table of the damaged warehouse answered %d %s, want a 5xx", res.status, res.body)
		}
		if code := s.stop(stopTimeout); code != 0 {
			t.Fatalf("exit %d after SIGTERM", code)
		}
	})
}

// damageSnapshot flips one byte in the middle of a catalog snapshot in
// the stopped server's store.
func damageSnapshot(t *testing.T, dir, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := objstore.Open(ctx, objstore.Options{Dir: dir, Parity: -1, Index: storetest.OpenBolt(t, dir)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = st.Close() }()
	r, err := st.Open(ctx, ".cairn.sys", key, objstore.GetOptions{})
	if err != nil {
		t.Fatalf("open %s: %v", key, err)
	}
	b, err := io.ReadAll(r)
	_ = r.Close()
	if err != nil || len(b) < 2 {
		t.Fatalf("read %s: %d bytes, %v", key, len(b), err)
	}
	b[len(b)/2] ^= 0x20
	if _, err := st.Put(ctx, ".cairn.sys", key, bytes.NewReader(b), int64(len(b)), objstore.PutOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitNotReady waits until /health/ready answers 503 and returns its body.
func waitNotReady(t *testing.T, s *server) string {
	t.Helper()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(readyTimeout)
	for time.Now().Before(deadline) {
		resp, err := client.Get(s.url("/health/ready"))
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusServiceUnavailable && bytes.Contains(b, []byte("catalog")) {
				return string(b)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("/health/ready never reported the damaged catalog\nstderr:\n%s", s.stderr.String())
	return ""
}
