//go:build linux

package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/loadgen/report"
)

// startNginx runs a private nginx on a free loopback port with access
// logging on, and returns its base URL and the access log's path. A log
// line is "status bytes_sent body_bytes_sent connection
// connection_requests"; the docroot is html/ next to the log, readable by
// nginx's worker; connections are kept alive for as many requests as a
// test makes. sendfile is on, as in Debian's nginx.conf: without it nginx
// feeds a large file to one fast reader for as long as it keeps up,
// accepting no other connection meanwhile (seconds for a 1 GB file).
func startNginx(t *testing.T) (string, string) {
	nginx := testenv.Tool(t, "nginx")
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
	log_format eb '$status $bytes_sent $body_bytes_sent $connection $connection_requests';
	access_log %[2]s eb;
	keepalive_requests 10000000;
	sendfile on;
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
		// The requests drained at the end of a timed run are apart from
		// the window's, and in the log too.
		want := r.Completed + r.Drained.Completed
		var lines int
		for range 50 {
			b, _ := os.ReadFile(logPath)
			lines = bytes.Count(b, []byte("\n"))
			if int64(lines-logged) >= want {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if got := int64(lines - logged); got != want {
			t.Errorf("%s keepalive=%v: edgebench completed %d (+%d drained), nginx logged %d", cfg.URL, cfg.KeepAlive, r.Completed, r.Drained.Completed, got)
		}
		missing := strings.HasSuffix(cfg.URL, "missing")
		if r.Drained.Requests != r.Drained.Completed {
			t.Errorf("%s: drained %+v", cfg.URL, r.Drained)
		}
		if r.Failed() != r.Errors.Status || missing != (r.Errors.Status == r.Completed) {
			t.Errorf("%s: errors %+v codes %v", cfg.URL, r.Errors, r.StatusCodes)
		}
		if !strings.HasPrefix(r.Server, "nginx") || (!missing && (r.OK != r.Completed || r.DocLength != 2159)) {
			t.Errorf("server %q doc length %d", r.Server, r.DocLength)
		}
		logged = lines
	}
}

// nginxLog reads the access log's lines from line skip on, as fields.
func nginxLog(t *testing.T, path string, skip int) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if i >= skip && line != "" {
			out = append(out, strings.Fields(line))
		}
	}
	return out
}

// TestWarmupReachesNoFigureNginx checks against nginx's log what the
// warm-up leaves out: each reply is the same, so the window's and the
// drain's bytes are their replies times nginx's bytes_sent; its keep-alive connections were
// opened in the warm-up, so the window opened none; and nginx logged the
// window's, the drained and the warm-up's requests, nothing else.
func TestWarmupReachesNoFigureNginx(t *testing.T) {
	base, logPath := startNginx(t)
	skip := 0
	for _, keep := range []bool{true, false} {
		r := run(t, Config{URL: base + "/index.html", Connections: 4, Duration: 700 * time.Millisecond, Warmup: 400 * time.Millisecond, KeepAlive: keep})
		total := r.Completed + r.Drained.Completed + r.WarmupRequests
		var lines [][]string
		for range 50 {
			if lines = nginxLog(t, logPath, skip); int64(len(lines)) >= total {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		skip += len(lines)
		if int64(len(lines)) != total || r.WarmupRequests == 0 || r.Failed() != 0 {
			t.Fatalf("keepalive=%v: nginx logged %d, edgebench %d + %d drained + %d warm-up (errors %+v)",
				keep, len(lines), r.Completed, r.Drained.Completed, r.WarmupRequests, r.Errors)
		}
		sent, conns := lines[0][1], map[string]bool{}
		for _, f := range lines {
			if f[0] != "200" || f[1] != sent {
				t.Fatalf("log line %v: want 200 and %s bytes as the others", f, sent)
			}
			conns[f[3]] = true
		}
		var perReply int64
		fmt.Sscan(sent, &perReply)
		// A reply in flight at the window's end gives the window what it
		// read before it, the drain the rest.
		replies := r.Completed + r.Drained.Completed
		if r.Bytes+r.Drained.Bytes != replies*perReply || r.BodyBytes+r.Drained.BodyBytes != replies*2159 ||
			r.Bytes < r.Completed*perReply || r.Bytes > replies*perReply {
			t.Errorf("keepalive=%v: %d bytes (%d drained) for %d replies (%d drained) of %d", keep, r.Bytes, r.Drained.Bytes, r.Completed, r.Drained.Completed, perReply)
		}
		if keep && (r.Connects != 0 || len(conns) != 4) {
			t.Errorf("keep-alive: %d connects in the window, nginx saw %d connections in all; want 0 and 4", r.Connects, len(conns))
		}
		if !keep && r.Connects != r.Completed {
			t.Errorf("no keep-alive: %d connects for %d requests", r.Connects, r.Completed)
		}
	}
}

// TestLargeFileCompletes is the seeds' ab -n 10 -c 10 of an ISO image, at
// 1 GB: with the default (idle) timeout every transfer completes, and the
// bytes are nginx's.
func TestLargeFileCompletes(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 10 GB over loopback")
	}
	base, logPath := startNginx(t)
	const size = 1 << 30
	f, err := os.Create(filepath.Join(filepath.Dir(logPath), "html", "big.iso"))
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(size) // sparse: no disk, and the page cache serves zeros
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	r, err := Run(ctx, Config{URL: base + "/big.iso", Connections: 10, Requests: 10, KeepAlive: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.Interrupted {
		t.Fatalf("not done in 5 minutes: %d ok", r.OK)
	}
	if r.OK != 10 || r.Failed() != 0 || r.BodyBytes != 10*size {
		t.Errorf("ok %d of 10, errors %+v, body %d bytes", r.OK, r.Errors, r.BodyBytes)
	}
	var lines [][]string
	for range 50 {
		if lines = nginxLog(t, logPath, 0); len(lines) >= 10 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	var sent int64
	for _, f := range lines {
		var n int64
		fmt.Sscan(f[1], &n)
		sent += n
		if f[0] != "200" || f[2] != fmt.Sprint(size) {
			t.Errorf("nginx: %v", f)
		}
	}
	if len(lines) != 10 || sent != r.Bytes {
		t.Errorf("nginx logged %d requests, %d bytes sent; edgebench read %d", len(lines), sent, r.Bytes)
	}
	t.Logf("10 x 1 GiB in %v (%.0f MiB/s)", r.Duration, float64(r.Bytes)/r.Duration.Seconds()/(1<<20))
}

// wrkBytesRead is wrk's "N requests in Xs, YMB read" in bytes, from its
// 1024-based units.
func wrkBytesRead(t *testing.T, out string) float64 {
	t.Helper()
	m := regexp.MustCompile(`requests in \S+, ([0-9.]+)([KMGT]?)B read`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no bytes read in wrk's report:\n%s", out)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v * math.Pow(1024, float64(strings.Index("KMGT", m[2])+1))
}

// TestBytesStillArrivingAreCounted is issue 28's item 3: a download
// still flowing when the window closes (nginx's limit_rate; the
// seeds' large files) counts the bytes read in the window as wrk does,
// whether or not the response completed: wrk -t1 -c1 -d4s read 80 MB
// where edgebench said 0. The witness is wrk on the same nginx, and
// nginx's own rate.
func TestBytesStillArrivingAreCounted(t *testing.T) {
	wrk := testenv.Tool(t, "wrk")
	const rate = 4 << 20 // limit_rate 4m: 4 MiB/s
	srv := testenv.NginxWith(t, testenv.NginxConfig{HTTPExtra: "limit_rate 4m;", LogFormat: "$bytes_sent"})
	f, err := os.Create(filepath.Join(srv.Root, "big.iso"))
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(1 << 30) // sparse: longer than any run here
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + srv.Addr + "/big.iso"
	d := 2 * time.Second
	r := run(t, Config{URL: url, Connections: 1, Threads: 1, Duration: d, KeepAlive: true, Dialect: DialectWrk,
		Timeout: time.Second, WholeRequestTimeout: true})
	// nginx logs what it sent when the connection is closed, at the end
	// of the drain: every byte read is the window's or the drain's, once.
	var sent int64
	for range 100 {
		b, _ := os.ReadFile(srv.AccessLog)
		if _, err := fmt.Sscan(string(b), &sent); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if read := r.Bytes + r.Drained.Bytes; read > sent || read < sent-1<<20 {
		t.Errorf("read %d in the window and %d in the drain, %d in all; nginx sent %d", r.Bytes, r.Drained.Bytes, read, sent)
	}
	out, err := exec.Command(wrk, "-t1", "-c1", "-d2s", url).CombinedOutput()
	if err != nil {
		t.Fatalf("wrk: %v\n%s", err, out)
	}
	theirs := wrkBytesRead(t, string(out))
	ours := float64(r.Bytes)
	t.Logf("edgebench read %.0f bytes in the window (drained %d more), wrk %.0f; nginx's rate makes %d", ours, r.Drained.Bytes, theirs, rate*2)
	if r.Completed != 0 || r.Drained.Requests != 1 || r.Latency.Count() != 0 {
		t.Fatalf("completed %d, drained %+v: want the one download in flight at the end", r.Completed, r.Drained)
	}
	if ours < 0.8*theirs || ours > 1.2*theirs {
		t.Errorf("edgebench read %.0f bytes in the window, wrk %.0f on the same nginx: want within 20 %%", ours, theirs)
	}
	if ours < 0.75*rate*d.Seconds() || ours > 1.25*rate*d.Seconds() {
		t.Errorf("edgebench read %.0f bytes in %v at nginx's %d bytes/s", ours, d, rate)
	}
	if r.BodyBytes <= 0 || r.BodyBytes >= r.Bytes || r.Bytes-r.BodyBytes > 1000 {
		t.Errorf("body bytes %d of %d: the header block is what is between them", r.BodyBytes, r.Bytes)
	}
	var text strings.Builder
	report.WriteText(&text, r)
	if !strings.Contains(text.String(), "latency     none: no response completed") {
		t.Errorf("the text report does not say no response completed:\n%s", text.String())
	}
}
