package s3

import (
	"io"
	"net/http"
	"time"
)

const (
	// maxDrain is the most of a refused request's body the server reads
	// and drops so that the client hears the error; a body declared larger
	// is left unread and the connection is closed under it.
	maxDrain = 64 << 20
	// drainTimeout bounds the time a refused body is drained for.
	drainTimeout = 10 * time.Second
)

// drainRefused reads and drops what is left of the body of a request the
// server has answered with an error, after the answer has been flushed.
//
// net/http closes the connection after an answer that left the body
// unread. A client that sends its body without waiting for "100 Continue"
// is still writing it then, and the close resets the connection: the
// client sees "connection reset" instead of the S3 error. aws-sdk-go-v2
// is such a client: it sets "Expect: 100-continue" on bodies over 2 MiB
// but builds requests without a protocol version, so net/http's transport
// does not wait. A client that does wait has the final answer, and
// Connection: close, before any byte of its body: it sends none, and the
// read here ends as it hangs up. Bounded by maxDrain and drainTimeout.
func drainRefused(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 || r.ContentLength > maxDrain {
		return
	}
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		return
	}
	if err := rc.SetReadDeadline(time.Now().Add(drainTimeout)); err != nil {
		return
	}
	_, _ = io.CopyN(io.Discard, r.Body, maxDrain)
}
