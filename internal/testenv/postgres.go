package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres is a private PostgreSQL server a test started with Debian's
// initdb and pg_ctl: a cluster in a temporary folder, listening on a free
// loopback port only, trust authentication, user postgres.
type Postgres struct {
	Addr string // 127.0.0.1:port

	bin     string // the folder of initdb, pg_ctl and postgres
	dir     string // holds data/ and the log
	cred    *syscall.Credential
	watcher *exec.Cmd // stops the server should the test process die first
	dbs     atomic.Int64
}

// StartPostgres runs a PostgreSQL server for this test alone, stopped and
// removed when the test ends (Stop and Start restart it, for fault tests).
// Without PostgreSQL the test is skipped, except in CI (CI=true), where it
// fails.
func StartPostgres(t testing.TB) *Postgres {
	t.Helper()
	p, err := startPostgres(postgresBin(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.remove)
	return p
}

var shared struct {
	once sync.Once
	p    *Postgres
	err  error
}

// PostgresDB returns the URL of a new, empty database on a server the
// test process shares between its tests (started at the first call;
// stopped and removed when the process ends, or by StopPostgres). Without
// PostgreSQL the test is skipped, except in CI (CI=true), where it fails.
func PostgresDB(t testing.TB) string {
	t.Helper()
	bin := postgresBin(t)
	shared.once.Do(func() { shared.p, shared.err = startPostgres(bin) })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.p.NewDatabase(t)
}

// StopPostgres stops the server PostgresDB started, if any: call it from
// TestMain after the tests ran.
func StopPostgres() {
	if shared.p != nil {
		shared.p.remove()
	}
}

// postgresBin finds the folder of initdb: on the PATH or Debian's
// /usr/lib/postgresql/<version>/bin, the newest.
func postgresBin(t testing.TB) string {
	t.Helper()
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(found, func(i, j int) bool { return pgVersion(found[i]) < pgVersion(found[j]) })
	if len(found) > 0 {
		return filepath.Dir(found[len(found)-1])
	}
	Missing(t, "PostgreSQL is not installed", "apt-get install postgresql")
	return ""
}

func pgVersion(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

func startPostgres(bin string) (*Postgres, error) {
	p := &Postgres{bin: bin}
	// Not t.TempDir: its parent is private, and the server may run as
	// another user.
	dir, err := os.MkdirTemp("", "edgebench-pg-")
	if err != nil {
		return nil, err
	}
	p.dir = dir
	if os.Geteuid() == 0 { // initdb and the server refuse to run as root
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("running as root, PostgreSQL must run as the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	if p.Addr, err = freeLoopback(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if out, err := p.run("initdb", "-D", p.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if err := p.watch(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := p.Start(); err != nil {
		p.remove()
		return nil, err
	}
	return p, nil
}

func (p *Postgres) data() string { return filepath.Join(p.dir, "data") }

// run runs one of PostgreSQL's programs as the server's user.
func (p *Postgres) run(prog string, args ...string) ([]byte, error) {
	cmd := exec.Command(filepath.Join(p.bin, prog), args...)
	cmd.Dir = p.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if p.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	}
	out, err := cmd.CombinedOutput()
	return out, err
}

// watch starts a shell that stops the server (immediate shutdown) and
// removes its folder once this process is gone, so that a test binary
// killed at its timeout leaves no server behind.
func (p *Postgres) watch() error {
	script := fmt.Sprintf(`while kill -0 %d 2>/dev/null; do sleep 1; done
pid=$(head -n 1 %q/postmaster.pid 2>/dev/null) && kill -QUIT "$pid" 2>/dev/null
sleep 1; rm -rf %q`, os.Getpid(), p.data(), p.dir)
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("postgres watcher: %w", err)
	}
	p.watcher = cmd
	return nil
}

// Start starts the server (again) and waits until it accepts connections.
// fsync is off: the tests kill processes, not the machine.
func (p *Postgres) Start() error {
	host, port, _ := net.SplitHostPort(p.Addr)
	opts := fmt.Sprintf("-c listen_addresses=%s -p %s -c unix_socket_directories='' -c fsync=off -c full_page_writes=off "+
		"-c max_connections=200 -c shared_buffers=32MB", host, port)
	if out, err := p.run("pg_ctl", "-D", p.data(), "-l", filepath.Join(p.dir, "log"), "-o", opts, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(filepath.Join(p.dir, "log"))
		return fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return nil
}

// Stop stops the server: mode "fast" (clients disconnected, a clean
// shutdown) or "immediate" (as a crash: recovery from the WAL on the next
// start).
func (p *Postgres) Stop(mode string) error {
	if out, err := p.run("pg_ctl", "-D", p.data(), "-m", mode, "-w", "-t", "60", "stop"); err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	return nil
}

// Log is the server's log so far.
func (p *Postgres) Log() string {
	b, _ := os.ReadFile(filepath.Join(p.dir, "log"))
	return string(b)
}

func (p *Postgres) remove() {
	p.Stop("immediate")
	if p.watcher != nil {
		p.watcher.Process.Kill()
		p.watcher.Wait()
	}
	os.RemoveAll(p.dir)
}

// URL is the connection URL of database db.
func (p *Postgres) URL(db string) string {
	return "postgres://postgres@" + p.Addr + "/" + db + "?sslmode=disable"
}

// NewDatabase creates an empty database and returns its URL.
func (p *Postgres) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%s", p.dbs.Add(1), strings.ToLower(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, t.Name())))
	if len(name) > 60 {
		name = name[:60]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, p.URL("postgres"))
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	return p.URL(name)
}

// StoreEngines are the engines of the collector's store that its tests
// run against.
var StoreEngines = []string{"sqlite", "postgres"}

// StoreDB is the --db of a new, empty store of engine: a SQLite file in
// the test's folder, or a new database on the PostgreSQL the test process
// shares (see PostgresDB).
func StoreDB(t testing.TB, engine string) string {
	t.Helper()
	if engine == "postgres" {
		return PostgresDB(t)
	}
	return filepath.Join(t.TempDir(), "edgebench.db")
}

// Freeze stops the server's processes (SIGSTOP) as a hung database: its
// connections stay open and nothing answers. The returned func, also
// called when the test ends, lets them go on.
func (p *Postgres) Freeze(t testing.TB) (thaw func()) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p.data(), "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	main, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		t.Fatalf("postmaster.pid: %v", err)
	}
	// The postmaster first: stopped, it forks no backend that a list of
	// its children taken before would miss (a collector that opens a
	// connection as the test freezes the server was served by one).
	syscall.Kill(main, syscall.SIGSTOP)
	pids := []int{main}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		s, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so after ")".
		fields := strings.Fields(string(s[strings.LastIndexByte(string(s), ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(main) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			pids = append(pids, pid)
		}
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGSTOP)
	}
	var once sync.Once
	thaw = func() {
		once.Do(func() {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGCONT)
			}
		})
	}
	t.Cleanup(thaw)
	return thaw
}
