package httpx

import (
	"io"
	"net/http"
)

// Recorder is a ResponseWriter that remembers the status sent and counts
// the body bytes written, for the access log and the metrics.
type Recorder struct {
	http.ResponseWriter
	Status int   // the status sent (200 until one is)
	Bytes  int64 // body bytes written
	wrote  bool
}

// NewRecorder wraps w.
func NewRecorder(w http.ResponseWriter) *Recorder {
	return &Recorder{ResponseWriter: w, Status: http.StatusOK}
}

// Wrote says whether the status line has been sent.
func (r *Recorder) Wrote() bool { return r.wrote }

// WriteHeader sends the status once; later calls are ignored.
func (r *Recorder) WriteHeader(code int) {
	if r.wrote {
		return
	}
	r.Status, r.wrote = code, true
	r.ResponseWriter.WriteHeader(code)
}

// Write sends body bytes (and status 200 first, when none was sent).
func (r *Recorder) Write(p []byte) (int, error) {
	if !r.wrote {
		r.WriteHeader(http.StatusOK)
	}
	n, err := r.ResponseWriter.Write(p)
	r.Bytes += int64(n)
	return n, err
}

// Flush lets streamed responses reach the client.
func (r *Recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap returns the wrapped ResponseWriter, for http.ResponseController.
func (r *Recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// FileWriter is a Recorder for bodies sent partly from files. Its
// ReadFrom passes the source to the ResponseWriter's, so a file range
// (an *io.LimitedReader of an *os.File) goes out with sendfile(2). The
// Recorder itself has no ReadFrom: io.Copy into it keeps its own buffer
// size rather than net/http's generic 32 KiB copy.
type FileWriter struct{ *Recorder }

// ReadFrom implements io.ReaderFrom.
func (f FileWriter) ReadFrom(src io.Reader) (int64, error) {
	rf, ok := f.ResponseWriter.(io.ReaderFrom)
	if !ok {
		return io.Copy(struct{ io.Writer }{f.Recorder}, src)
	}
	if !f.wrote {
		f.WriteHeader(http.StatusOK)
	}
	n, err := rf.ReadFrom(src)
	f.Bytes += n
	return n, err
}
