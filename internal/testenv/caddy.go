package testenv

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// CaddyServer is a private caddy instance a test started.
type CaddyServer struct {
	HTTPS string // 127.0.0.1:port: HTTPS, HTTP/1.1 and HTTP/2 by ALPN
	H2C   string // 127.0.0.1:port: cleartext HTTP/1.1 and h2c
	PID   int
	Root  string   // the document root (index.html, 612 bytes)
	Certs WebCerts // Certs.Cert is the server's; Certs.CA signed it
	// AccessLog holds one JSON line per request handled ("msg":"handled
	// request"), of both listeners.
	AccessLog string
}

// Caddy runs Debian's caddy 2 on two free loopback ports until the test
// ends: HTTPS (TLS 1.2 and 1.3, HTTP/1.1 and HTTP/2, a throwaway
// certificate for localhost and 127.0.0.1 chosen whatever the SNI) and
// cleartext HTTP with h2c, both serving files, with an access log. No
// admin endpoint, no automatic HTTPS, no HTTP/3. Without caddy the test is
// skipped, except in CI (CI=true), where it fails.
func Caddy(t testing.TB) CaddyServer {
	t.Helper()
	bin := Tool(t, "caddy")
	dir := t.TempDir()
	srv := CaddyServer{
		HTTPS: FreeAddr(t), H2C: FreeAddr(t), Root: filepath.Join(dir, "html"),
		Certs: WebCertificates(t, dir), AccessLog: filepath.Join(dir, "access.log"),
	}
	if err := os.MkdirAll(srv.Root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(srv.Root, "index.html"), []byte(strings.Repeat("x", 612)), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []any{map[string]any{"handler": "file_server", "root": srv.Root}}
	server := func(addr string, protocols ...string) map[string]any {
		return map[string]any{
			"listen": []string{addr}, "protocols": protocols,
			"automatic_https": map[string]any{"disable": true},
			"routes":          []any{map[string]any{"handle": files}},
			"logs":            map[string]any{"default_logger_name": "access"},
		}
	}
	tlsServer := server(srv.HTTPS, "h1", "h2")
	tlsServer["tls_connection_policies"] = []any{map[string]any{"certificate_selection": map[string]any{"any_tag": []string{"test"}}}}
	conf := map[string]any{
		"admin":   map[string]any{"disabled": true},
		"storage": map[string]any{"module": "file_system", "root": filepath.Join(dir, "data")},
		"logging": map[string]any{"logs": map[string]any{
			"default": map[string]any{"level": "ERROR", "exclude": []string{"http.log.access.access"}},
			"access": map[string]any{
				"writer":  map[string]any{"output": "file", "filename": srv.AccessLog},
				"encoder": map[string]any{"format": "json"},
				"include": []string{"http.log.access.access"},
			},
		}},
		"apps": map[string]any{
			"http": map[string]any{"servers": map[string]any{"tls": tlsServer, "h2c": server(srv.H2C, "h1", "h2c")}},
			"tls": map[string]any{"certificates": map[string]any{"load_files": []any{map[string]any{
				"certificate": srv.Certs.Cert, "key": srv.Certs.Key, "tags": []string{"test"},
			}}}},
		},
	}
	b, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	confPath := filepath.Join(dir, "caddy.json")
	if err := os.WriteFile(confPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", confPath)
	cmd.Dir = dir
	// caddy keeps its state under $HOME and $XDG_*: keep it in dir.
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	out := start(t, cmd, os.Interrupt)
	srv.PID = cmd.Process.Pid
	deadline := time.Now().Add(20 * time.Second)
	for {
		ok := true
		for _, a := range []string{srv.HTTPS, srv.H2C} {
			c, err := net.DialTimeout("tcp", a, time.Second)
			if err != nil {
				ok = false
				break
			}
			c.Close()
		}
		if ok {
			return srv
		}
		if time.Now().After(deadline) {
			t.Fatalf("caddy did not listen on %s and %s:\n%s", srv.HTTPS, srv.H2C, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
