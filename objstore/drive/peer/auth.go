package peer

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"
)

// The authentication headers every request carries.
const (
	// HeaderTime is the request's Unix time in seconds, decimal.
	HeaderTime = "Cairn-Peer-Time"
	// HeaderMAC is the hex HMAC-SHA256 of macInput under the secret.
	HeaderMAC = "Cairn-Peer-Mac"
)

// MaxSkew is how far a request's time may be from the server's clock,
// either way.
const MaxSkew = 5 * time.Minute

// macVersion starts the MAC input, so that a MAC of another protocol (or
// version) never verifies here.
const macVersion = "cairn-peer-v1"

// macInput is what a request's MAC covers: method, escaped path, raw
// query, time and slot, one per line. None of them holds a raw newline
// (HTTP's request line cannot), so the lines cannot be shifted into each
// other.
func macInput(method, path, rawQuery, ts, slot string) []byte {
	b := make([]byte, 0, len(macVersion)+len(method)+len(path)+len(rawQuery)+len(ts)+len(slot)+5)
	b = append(b, macVersion...)
	for _, s := range []string{method, path, rawQuery, ts, slot} {
		b = append(b, '\n')
		b = append(b, s...)
	}
	return b
}

func computeMAC(secret []byte, method, path, rawQuery, ts, slot string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(macInput(method, path, rawQuery, ts, slot))
	return m.Sum(nil)
}

// sign sets the authentication headers of req, a request for slot at
// time now.
func sign(req *http.Request, secret []byte, slot int, now time.Time) {
	ts := strconv.FormatInt(now.Unix(), 10)
	mac := computeMAC(secret, req.Method, req.URL.EscapedPath(), req.URL.RawQuery, ts, strconv.Itoa(slot))
	req.Header.Set(HeaderTime, ts)
	req.Header.Set(HeaderMAC, hex.EncodeToString(mac))
}

// verify reports whether the request described by method, path (escaped),
// rawQuery and header carries a valid MAC for slot (the slot's text as the
// path has it) and a time within MaxSkew of now. It compares MACs in
// constant time and tells no reason.
func verify(secret []byte, method, path, rawQuery, slot string, header http.Header, now time.Time) bool {
	tsv, macv := header.Values(HeaderTime), header.Values(HeaderMAC)
	if len(tsv) != 1 || len(macv) != 1 {
		return false
	}
	ts := tsv[0]
	if len(ts) == 0 || len(ts) > 12 {
		return false
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || secs < 0 || strconv.FormatInt(secs, 10) != ts {
		return false
	}
	skew := now.Sub(time.Unix(secs, 0))
	if skew > MaxSkew || skew < -MaxSkew {
		return false
	}
	got, err := hex.DecodeString(macv[0])
	if err != nil || len(got) != sha256.Size {
		return false
	}
	return hmac.Equal(got, computeMAC(secret, method, path, rawQuery, ts, slot))
}
