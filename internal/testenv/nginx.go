package testenv

import (
	"fmt"
	"net"
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
	Addr      string // 127.0.0.1:port
	Master    int    // the master's PID; the workers are its children
	Root      string // the document root, readable by the workers
	AccessLog string // the access log's path; empty when it is off
}

// Nginx runs Debian's nginx in the foreground with a master and the given
// number of workers on a free loopback port, serving an index.html of 612
// bytes, access log off, until the test ends. Without nginx the test is
// skipped, except in CI (CI=true), where it fails.
func Nginx(t testing.TB, workers int) NginxServer {
	t.Helper()
	return startNginx(t, workers, "")
}

// NginxLogging is Nginx with an access log whose lines have the given
// log_format (for example '$connection $connection_requests "$request"'),
// and keep-alive connections that last as many requests as a test makes.
func NginxLogging(t testing.TB, workers int, format string) NginxServer {
	t.Helper()
	return startNginx(t, workers, format)
}

func startNginx(t testing.TB, workers int, logFormat string) NginxServer {
	t.Helper()
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/nginx"); serr == nil {
			bin, err = "/usr/sbin/nginx", nil
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("nginx is not installed: CI must have it (apt-get install nginx-light)")
		}
		t.Skip("!!! nginx is not installed: SKIPPING this test against a real nginx (apt-get install nginx-light)")
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
	if err := os.WriteFile(filepath.Join(dir, "html", "index.html"), []byte(strings.Repeat("x", 612)), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	logging, accessLog := "access_log off;", ""
	if logFormat != "" {
		accessLog = filepath.Join(dir, "access.log")
		logging = fmt.Sprintf("log_format t '%s';\n\taccess_log %s t;\n\tkeepalive_requests 10000000;", logFormat, accessLog)
	}
	conf := fmt.Sprintf(`worker_processes %[3]d;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 1024; }
http {
	%[4]s
	client_body_temp_path %[1]s/tmp;
	proxy_temp_path %[1]s/tmp;
	fastcgi_temp_path %[1]s/tmp;
	uwsgi_temp_path %[1]s/tmp;
	scgi_temp_path %[1]s/tmp;
	server { listen %[2]s; root %[1]s/html; }
}
`, dir, addr, workers, logging)
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	// Listening is not enough: wait for every worker.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			if len(Children(cmd.Process.Pid)) == workers {
				return NginxServer{Addr: addr, Master: cmd.Process.Pid, Root: filepath.Join(dir, "html"), AccessLog: accessLog}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx did not start %d workers on %s: %v\n%s", workers, addr, err, out.String())
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
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed: CI must install it", name)
	}
	t.Skipf("!!! %s is not installed: SKIPPING this test (apt-get install it to run it)", name)
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
