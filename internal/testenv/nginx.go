package testenv

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// NginxServer is a private nginx instance a test started.
type NginxServer struct {
	Addr      string // 127.0.0.1:port, plain HTTP/1.1
	Master    int    // the master's PID; the workers are its children
	Root      string // the document root, readable by the workers
	AccessLog string // the access log's path; empty when it is off
	// With NginxConfig.TLS: the addresses of HTTPS with TLS 1.2 and 1.3 and
	// HTTP/2 by ALPN, of HTTPS with TLS 1.2 alone, and of h2c (HTTP/2 in
	// cleartext, prior knowledge only, as nginx has no Upgrade), and the
	// certificates (Certs.Cert is the server's; Certs.CA signed it).
	HTTPS, HTTPS12, H2C string
	Certs               WebCerts
	// HTTPS1 (with NginxConfig.TLS) is HTTPS without HTTP/2: ALPN offers
	// http/1.1 alone.
	HTTPS1 string
}

// NginxConfig is the nginx NginxWith starts.
type NginxConfig struct {
	Workers int // default 1
	// LogFormat, when set, turns on an access log whose lines have this
	// log_format (for example '$connection $connection_requests
	// "$request"'); connections are then kept alive for as many requests
	// as a test makes.
	LogFormat string
	// TLS adds the HTTPS and h2c listeners of NginxServer, with a
	// throwaway certificate for localhost and 127.0.0.1 (ECDSA P-256).
	TLS bool
	// DocSize is the size of index.html; default 612 bytes.
	DocSize int
	// KeepaliveRequests, when set, is nginx's keepalive_requests: the
	// requests a connection carries before nginx closes it (HTTP/2: with
	// a GOAWAY).
	KeepaliveRequests int
	// HTTPExtra is added to the http block as it is: a limit_req_zone and
	// its limit_req, say, for a server of known capacity.
	HTTPExtra string
	// ServerExtra is added to the plain HTTP server block (of Addr) as it
	// is: a location that hands pages to php-fpm, or proxies to a
	// backend.
	ServerExtra string
	// Files are more documents beside index.html, by name, of the given
	// sizes in bytes (a large body for a test of a link's speed).
	Files map[string]int
	// Netns, when set, runs nginx inside that network namespace,
	// listening on its address, port 8080 (Addr); the test reaches it
	// through the namespace's veth. TLS is not offered there.
	Netns *Netns
}

// Nginx runs Debian's nginx in the foreground with a master and the given
// number of workers on a free loopback port, serving an index.html of 612
// bytes, access log off, until the test ends. Without nginx the test is
// skipped, except in CI (CI=true), where it fails.
func Nginx(t testing.TB, workers int) NginxServer {
	t.Helper()
	return NginxWith(t, NginxConfig{Workers: workers})
}

// NginxLogging is Nginx with an access log whose lines have the given
// log_format (for example '$connection $connection_requests "$request"'),
// and keep-alive connections that last as many requests as a test makes.
func NginxLogging(t testing.TB, workers int, format string) NginxServer {
	t.Helper()
	return NginxWith(t, NginxConfig{Workers: workers, LogFormat: format})
}

// NginxWith runs nginx as Nginx does, configured by c.
func NginxWith(t testing.TB, c NginxConfig) NginxServer {
	t.Helper()
	bin := Tool(t, "nginx")
	if c.Workers == 0 {
		c.Workers = 1
	}
	if c.DocSize == 0 {
		c.DocSize = 612
	}
	// Not t.TempDir: its parent is private, and a worker may run as
	// another user.
	dir, err := os.MkdirTemp("", "edgebench-nginx-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	for _, d := range []string{"html", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "html", "index.html"), []byte(strings.Repeat("x", c.DocSize)), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, size := range c.Files {
		if !filepath.IsLocal(name) || strings.ContainsRune(name, '/') {
			t.Fatalf("nginx: document name %q", name)
		}
		if err := os.WriteFile(filepath.Join(dir, "html", name), []byte(strings.Repeat("y", size)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := NginxServer{Root: filepath.Join(dir, "html")}
	if c.Netns != nil {
		if c.TLS {
			t.Fatal("nginx: no TLS listeners in a namespace")
		}
		srv.Addr = netip.AddrPortFrom(c.Netns.Addr, 8080).String()
	} else {
		srv.Addr = FreeAddr(t)
	}
	logging := "access_log off;"
	if c.LogFormat != "" {
		srv.AccessLog = filepath.Join(dir, "access.log")
		logging = fmt.Sprintf("log_format t '%s';\n\taccess_log %s t;", c.LogFormat, srv.AccessLog)
		if c.KeepaliveRequests == 0 {
			c.KeepaliveRequests = 10000000
		}
	}
	if c.KeepaliveRequests > 0 {
		logging += fmt.Sprintf("\n\tkeepalive_requests %d;", c.KeepaliveRequests)
	}
	if c.HTTPExtra != "" {
		logging += "\n\t" + c.HTTPExtra
	}
	servers := fmt.Sprintf("server { listen %s; root %s/html; %s }", srv.Addr, dir, c.ServerExtra)
	if c.TLS {
		srv.Certs = WebCertificates(t, dir)
		srv.HTTPS, srv.HTTPS12, srv.H2C, srv.HTTPS1 = FreeAddr(t), FreeAddr(t), FreeAddr(t), FreeAddr(t)
		// nginx 1.22's syntax ("listen ... ssl http2"; 1.25 has "http2
		// on"). Resumption by session tickets, nginx's default. HTTP/2
		// connections end after keepalive_requests streams (1000 by
		// default) with a GOAWAY: tests that count set LogFormat, which
		// raises it.
		servers += fmt.Sprintf(`
	ssl_certificate %[1]s;
	ssl_certificate_key %[2]s;
	server { listen %[3]s ssl http2; ssl_protocols TLSv1.2 TLSv1.3; root %[6]s/html; }
	server { listen %[4]s ssl http2; ssl_protocols TLSv1.2; root %[6]s/html; }
	server { listen %[5]s http2; root %[6]s/html; }
	server { listen %[7]s ssl; root %[6]s/html; }`, srv.Certs.Cert, srv.Certs.Key, srv.HTTPS, srv.HTTPS12, srv.H2C, dir, srv.HTTPS1)
	}
	conf := fmt.Sprintf(`worker_processes %[2]d;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 1024; }
http {
	%[3]s
	client_body_temp_path %[1]s/tmp;
	proxy_temp_path %[1]s/tmp;
	fastcgi_temp_path %[1]s/tmp;
	uwsgi_temp_path %[1]s/tmp;
	scgi_temp_path %[1]s/tmp;
	%[4]s
}
`, dir, c.Workers, logging, servers)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	if c.Netns != nil {
		cmd = c.Netns.Command(bin, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	}
	out := start(t, cmd, os.Interrupt)
	srv.Master = cmd.Process.Pid
	// Listening is not enough: wait for every worker.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c2, err := net.DialTimeout("tcp", srv.Addr, time.Second)
		if err == nil {
			c2.Close()
			if len(Children(cmd.Process.Pid)) == c.Workers {
				return srv
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx did not start %d workers on %s: %v\n%s", c.Workers, srv.Addr, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Children returns the PIDs of the live machine's processes whose parent is
// pid, ascending.
func Children(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// The parent is the second field after the command name, which
		// may hold spaces and parentheses.
		s := string(b)
		fs := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fs) > 1 && fs[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	slices.Sort(out)
	return out
}

// Tool returns the path of a system tool (ab, wrk, nginx...), looked up in
// PATH and then /usr/sbin and /sbin. Without it the test is skipped with a
// loud message, except in CI (CI=true), where it fails.
func Tool(t testing.TB, name string) string {
	t.Helper()
	if path, err := exec.LookPath(name); err == nil {
		return path
	}
	for _, dir := range []string{"/usr/sbin", "/sbin"} {
		if p := filepath.Join(dir, name); fileExists(p) {
			return p
		}
	}
	Missing(t, name+" is not installed", "apt-get install it")
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
