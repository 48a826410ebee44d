package target

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTargetEndpoints(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.html"), []byte(strings.Repeat("x", 2159)), 0o644)
	files, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Start("127.0.0.1:0", "edgebench/test", files)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	base := "http://" + srv.Addr()
	get := func(method, path string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, body := get("GET", "/bytes/100000")
	if resp.StatusCode != 200 || len(body) != 100000 || resp.ContentLength != 100000 || body[26] != 'a' {
		t.Errorf("/bytes/100000: %d, %d bytes, length %d", resp.StatusCode, len(body), resp.ContentLength)
	}
	if resp.Header.Get("Server") != "edgebench/test" {
		t.Errorf("Server %q", resp.Header.Get("Server"))
	}
	resp, body = get("HEAD", "/bytes/5000")
	if resp.ContentLength != 5000 || len(body) != 0 {
		t.Errorf("HEAD /bytes/5000: length %d, body %d", resp.ContentLength, len(body))
	}
	start := time.Now()
	resp, _ = get("GET", "/delay/150")
	if resp.StatusCode != 200 || time.Since(start) < 150*time.Millisecond {
		t.Errorf("/delay/150: %d after %v", resp.StatusCode, time.Since(start))
	}
	if resp, _ = get("GET", "/status/503"); resp.StatusCode != 503 {
		t.Errorf("/status/503: %d", resp.StatusCode)
	}
	if resp, body = get("GET", "/index.html"); resp.StatusCode != 200 || len(body) != 2159 {
		t.Errorf("static file: %d, %d bytes", resp.StatusCode, len(body))
	}
	for _, bad := range []string{"/bytes/-1", "/bytes/x", "/delay/600000", "/status/42", "/bytes/99999999999999"} {
		if resp, _ := get("GET", bad); resp.StatusCode != 400 {
			t.Errorf("%s: %d, want 400", bad, resp.StatusCode)
		}
	}
}

func TestTargetWithoutDir(t *testing.T) {
	srv, err := Start("127.0.0.1:0", "edgebench/test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get("http://" + srv.Addr() + "/nothing")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("without --dir: %d, want 404", resp.StatusCode)
	}
}

// TestTargetFilesStayInTheirFolder: a symlink in the served folder that
// leads out of it, or a path with "..", serves nothing (http.Dir followed
// the symlink and served /etc/passwd).
func TestTargetFilesStayInTheirFolder(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "site")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("ok"), 0o644)
	os.WriteFile(filepath.Join(parent, "secret"), []byte("secret"), 0o600)
	if err := os.Symlink("/etc", filepath.Join(dir, "etc")); err != nil {
		t.Fatal(err)
	}
	os.Symlink("../secret", filepath.Join(dir, "up"))
	os.Symlink("ok.txt", filepath.Join(dir, "alias.txt"))
	files, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Start("127.0.0.1:0", "edgebench/test", files)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + srv.Addr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, p := range []string{"/etc/passwd", "/etc/", "/up", "/../secret", "/%2e%2e/secret", "/..%2fsecret"} {
		if code, body := get(p); code == 200 {
			t.Errorf("%s: 200, %d bytes", p, len(body))
		}
	}
	if code, body := get("/alias.txt"); code != 200 || body != "ok" {
		t.Errorf("a symlink inside the folder: %d %q", code, body)
	}
}

// TestIndexHTMLIsServed: /index.html (and sub/index.html) is the file, 200,
// as nginx serves it, not Go's file server's 301 to ./, which a load test
// would measure as nothing but redirects. / and sub/ still serve it.
func TestIndexHTMLIsServed(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.html"), []byte(strings.Repeat("x", 612)), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "index.html"), []byte("sub"), 0o644)
	os.MkdirAll(filepath.Join(dir, "dir", "index.html"), 0o755) // a folder of that name
	files, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Start("127.0.0.1:0", "edgebench/test", files)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, c := range []struct {
		method, path string
		code, size   int
	}{
		{"GET", "/index.html", 200, 612},
		{"HEAD", "/index.html", 200, 0},
		{"GET", "/", 200, 612},
		{"GET", "/sub/index.html", 200, 3},
		{"GET", "/sub/", 200, 3},
		{"GET", "/nothere/index.html", 404, -1},
		{"GET", "/../index.html", 200, 612},
	} {
		req, _ := http.NewRequest(c.method, "http://"+srv.Addr()+c.path, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.code || (c.size >= 0 && len(body) != c.size) {
			t.Errorf("%s %s: %d, %d bytes (Location %q); want %d, %d bytes", c.method, c.path, resp.StatusCode, len(body), resp.Header.Get("Location"), c.code, c.size)
		}
	}
}
