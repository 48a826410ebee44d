package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// PHPFPM is a private php-fpm a test started.
type PHPFPM struct {
	// Listen is where the pool accepts FastCGI connections: a unix
	// socket's path, or 127.0.0.1:port.
	Listen string
	Master int // the master's PID; the workers are its children
	// Pass is Listen as nginx's fastcgi_pass takes it.
	Pass string
}

// PHPFPMConfig is the php-fpm StartPHPFPM starts.
type PHPFPMConfig struct {
	Workers int  // pm static, this many workers; default 2
	TCP     bool // listen on a free loopback port, not on a unix socket
	// Comm, when set, is the processes' command name (ps -e, --watch
	// NAME): php-fpm8.2 runs through a link of that name, so that a
	// test's php-fpm is told from others running beside it.
	Comm string
}

// StartPHPFPM runs Debian's php-fpm8.2 in the foreground with one static
// pool until the test ends: on a unix socket in a folder of its own that
// any user may open (nginx's workers run as nobody), or on a loopback
// port. Run as root, its workers are nobody's. Without php-fpm8.2 the test
// is skipped, except in CI (CI=true), where it fails.
func StartPHPFPM(t testing.TB, c PHPFPMConfig) PHPFPM {
	t.Helper()
	bin := Tool(t, "php-fpm8.2")
	if c.Workers == 0 {
		c.Workers = 2
	}
	// Not t.TempDir: its parent is private, and the workers and nginx's
	// run as another user.
	dir, err := os.MkdirTemp("", "edgebench-fpm-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	var srv PHPFPM
	if c.TCP {
		srv.Listen = FreeAddr(t)
		srv.Pass = srv.Listen
	} else {
		srv.Listen = filepath.Join(dir, "fpm.sock")
		srv.Pass = "unix:" + srv.Listen
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user = nobody\ngroup = nogroup\n"
	}
	conf := fmt.Sprintf(`[global]
pid = %[1]s/fpm.pid
error_log = %[1]s/fpm.log
daemonize = no
[test]
%[2]slisten = %[3]s
listen.mode = 0666
pm = static
pm.max_children = %[4]d
`, dir, user, srv.Listen, c.Workers)
	confPath := filepath.Join(dir, "fpm.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if c.Comm != "" {
		link := filepath.Join(dir, c.Comm)
		if err := os.Symlink(bin, link); err != nil {
			t.Fatal(err)
		}
		bin = link
	}
	cmd := exec.Command(bin, "-F", "-n", "-y", confPath)
	out := start(t, cmd, os.Interrupt)
	srv.Master = cmd.Process.Pid
	network := "unix"
	if c.TCP {
		network = "tcp"
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout(network, srv.Listen, time.Second)
		if err == nil {
			conn.Close()
			if len(Children(srv.Master)) == c.Workers {
				return srv
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("php-fpm did not start %d workers on %s: %v\n%s", c.Workers, srv.Listen, err, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// FastCGILocation is the nginx location (NginxConfig.ServerExtra) that
// hands the .php pages of its root to fpm.
func FastCGILocation(fpm PHPFPM) string {
	return fmt.Sprintf(`location ~ \.php$ { include /etc/nginx/fastcgi_params; fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name; fastcgi_pass %s; }`, fpm.Pass)
}
