// Package target is edgebench's built-in HTTP target: static files from a
// folder and synthetic endpoints whose cost is known, so a load test can run
// on a board that has no web server of its own.
//
//	/bytes/N     N bytes of body (Content-Length set), streamed from a fixed buffer
//	/delay/MS    waits MS milliseconds (at most a minute), then answers "ok"
//	/status/N    answers with status N
//	anything else: a file below the served folder, or 404 without one;
//	            a folder serves its index.html, and /index.html is the
//	            file itself (200, as nginx serves it, not a redirect)
//
// Files are read through an os.Root: a request, or a symlink in the
// folder, that leads out of it is refused.
package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// Limits of the synthetic endpoints.
const (
	MaxBytes = int64(16) << 30
	MaxDelay = time.Minute
)

// Handler returns the target's handler. serverName goes into the Server
// header; files, when not nil, are served as static files.
func Handler(serverName string, files fs.FS) http.Handler {
	var static http.Handler
	if files != nil {
		static = http.FileServerFS(files)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Server", serverName)
		switch {
		case strings.HasPrefix(r.URL.Path, "/bytes/"):
			serveBytes(w, r, strings.TrimPrefix(r.URL.Path, "/bytes/"))
		case strings.HasPrefix(r.URL.Path, "/delay/"):
			serveDelay(w, r, strings.TrimPrefix(r.URL.Path, "/delay/"))
		case strings.HasPrefix(r.URL.Path, "/status/"):
			code, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/status/"))
			if err != nil || code < 200 || code > 599 {
				http.Error(w, "want /status/200..599", http.StatusBadRequest)
				return
			}
			w.WriteHeader(code)
		case static != nil && path.Base(r.URL.Path) == "index.html" && serveIndex(w, r, files):
		case static != nil:
			static.ServeHTTP(w, r)
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			fmt.Fprintln(w, "edgebench target: /bytes/N, /delay/MS, /status/N")
		default:
			http.NotFound(w, r)
		}
	})
}

// serveIndex serves a file named index.html as the file it is, and
// reports whether there was one. Go's file server answers /index.html
// with a 301 to ./ (nginx and Apache serve the file), so a load test of
// the URL people type measured nothing but redirects.
func serveIndex(w http.ResponseWriter, r *http.Request, files fs.FS) bool {
	name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
	if !fs.ValidPath(name) {
		return false
	}
	f, err := files.Open(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		http.NotFound(w, r)
		return true
	case errors.Is(err, fs.ErrPermission):
		http.Error(w, "403 Forbidden", http.StatusForbidden)
		return true
	case err != nil:
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	rs, seeks := f.(io.ReadSeeker)
	if err != nil || !st.Mode().IsRegular() || !seeks {
		return false
	}
	http.ServeContent(w, r, name, st.ModTime(), rs)
	return true
}

// chunk is the body pattern /bytes/N repeats.
var chunk = func() []byte {
	b := make([]byte, 32<<10)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}()

func serveBytes(w http.ResponseWriter, r *http.Request, arg string) {
	n, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || n < 0 || n > MaxBytes {
		http.Error(w, fmt.Sprintf("want /bytes/0..%d", MaxBytes), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	if r.Method == http.MethodHead {
		return
	}
	for n > 0 {
		k := min(n, int64(len(chunk)))
		if _, err := w.Write(chunk[:k]); err != nil {
			return
		}
		n -= k
	}
}

func serveDelay(w http.ResponseWriter, r *http.Request, arg string) {
	ms, err := strconv.ParseInt(arg, 10, 64)
	if err != nil || ms < 0 || time.Duration(ms)*time.Millisecond > MaxDelay {
		http.Error(w, "want /delay/0..60000", http.StatusBadRequest)
		return
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("ok\n"))
	case <-r.Context().Done():
	}
}

// Server is a running target.
type Server struct {
	srv   *http.Server
	ln    net.Listener
	files *os.Root
	done  chan error
}

// OpenDir opens dir as the folder to serve files from.
func OpenDir(dir string) (*os.Root, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	return r, nil
}

// Start listens on addr and serves in a goroutine that Close stops. files,
// when not nil, is the folder served as static files (see OpenDir); the
// Server closes it.
func Start(addr, serverName string, files *os.Root) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if files != nil {
			files.Close()
		}
		return nil, fmt.Errorf("target listen %s: %w", addr, err)
	}
	var fsys fs.FS
	if files != nil {
		fsys = files.FS()
	}
	s := &Server{
		files: files,
		srv: &http.Server{
			Handler:           Handler(serverName, fsys),
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       75 * time.Second,
			MaxHeaderBytes:    64 << 10,
		},
		ln:   ln,
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address the target listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the target, letting requests in flight finish for up to a
// few seconds, and waits for it.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if err != nil {
		s.srv.Close()
	}
	serr := <-s.done
	if s.files != nil {
		s.files.Close()
	}
	if serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}
