//go:build linux

package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needTool returns the path of a system tool, skipping loudly when it is
// absent, or failing when CI=true (CI must install it).
func needTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		if p := filepath.Join(dir, name); fileExists(p) {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed: CI must install it", name)
	}
	t.Skipf("SKIPPED: %s is not installed (apt-get install it to run this test)", name)
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// startNginx runs a private nginx on a free loopback port with access
// logging on, and returns its base URL and the access log's path.
func startNginx(t *testing.T) (string, string) {
	nginx := needTool(t, "nginx")
	// Not t.TempDir: its parent is private, and nginx's worker may run as
	// another user.
	dir, err := os.MkdirTemp("", "edgebench-nginx-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	html := filepath.Join(dir, "html")
	os.MkdirAll(filepath.Join(dir, "tmp"), 0o755)
	os.MkdirAll(html, 0o755)
	os.WriteFile(filepath.Join(html, "index.html"), bytes.Repeat([]byte("x"), 2159), 0o644)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	logPath := filepath.Join(dir, "access.log")
	conf := fmt.Sprintf(`worker_processes 1;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 1024; }
http {
	access_log %[2]s;
	client_body_temp_path %[1]s/tmp;
	proxy_temp_path %[1]s/tmp;
	fastcgi_temp_path %[1]s/tmp;
	uwsgi_temp_path %[1]s/tmp;
	scgi_temp_path %[1]s/tmp;
	server { listen %[3]s; root %[1]s/html; }
}
`, dir, logPath, addr)
	confPath := filepath.Join(dir, "nginx.conf")
	os.WriteFile(confPath, []byte(conf), 0o644)
	cmd := exec.Command(nginx, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	for i := 0; ; i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if i == 100 {
			t.Fatalf("nginx did not start: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://" + addr, logPath
}

// TestCompletedMatchesNginxAccessLog checks the count edgebench reports
// against what the server logged, with and without keep-alive, by -n and
// by duration.
func TestCompletedMatchesNginxAccessLog(t *testing.T) {
	base, logPath := startNginx(t)
	logged := 0
	for _, cfg := range []Config{
		{URL: base + "/index.html", Connections: 10, Requests: 3000, KeepAlive: true},
		{URL: base + "/index.html", Connections: 10, Requests: 500, KeepAlive: false},
		{URL: base + "/index.html", Connections: 5, Duration: time.Second, KeepAlive: true},
		{URL: base + "/missing", Connections: 2, Requests: 50, KeepAlive: true},
	} {
		r, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		// nginx writes the log line after the response; give it a moment.
		var lines int
		for range 50 {
			b, _ := os.ReadFile(logPath)
			lines = bytes.Count(b, []byte("\n"))
			if int64(lines-logged) >= r.Completed {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if got := int64(lines - logged); got != r.Completed {
			t.Errorf("%s keepalive=%v: edgebench completed %d, nginx logged %d", cfg.URL, cfg.KeepAlive, r.Completed, got)
		}
		missing := strings.HasSuffix(cfg.URL, "missing")
		if r.Failed() != r.Errors.Status || missing != (r.Errors.Status == r.Completed) {
			t.Errorf("%s: errors %+v codes %v", cfg.URL, r.Errors, r.StatusCodes)
		}
		if !strings.HasPrefix(r.Server, "nginx") || (!missing && (r.OK != r.Completed || r.DocLength != 2159)) {
			t.Errorf("server %q doc length %d", r.Server, r.DocLength)
		}
		logged = lines
	}
}
