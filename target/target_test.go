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
	srv, err := Start("127.0.0.1:0", "edgebench/test", dir)
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
	srv, err := Start("127.0.0.1:0", "edgebench/test", "")
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
