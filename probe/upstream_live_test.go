package probe

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/probe/machine"
)

// burnPHP is a PHP page that keeps a php-fpm worker busy for tens of
// milliseconds.
const burnPHP = `<?php $x = 0; for ($i = 0; $i < 400000; $i++) { $x += $i * $i % 7; } echo "ok $x\n";`

// cpuTicks is the witness: the user and system ticks of pids summed, read
// from /proc/PID/stat here, apart from the probe's own parser (the 14th and
// 15th fields, counted after the command name's closing parenthesis).
func cpuTicks(t *testing.T, pids []int) int64 {
	t.Helper()
	var sum int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			t.Fatalf("witness: %v", err)
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		for _, i := range []int{11, 12} {
			n, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				t.Fatalf("witness: %q: %v", s, err)
			}
			sum += n
		}
	}
	return sum
}

// hammer requests url from n goroutines until the returned stop is
// called.
func hammer(t *testing.T, url string, n int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	// The server's work, not the client's: a gzip body is read as it is.
	tr := &http.Transport{MaxIdleConnsPerHost: n, DisableCompression: true}
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
				req.Header.Set("Accept-Encoding", "gzip")
				resp, err := c.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 && ctx.Err() == nil {
					t.Errorf("GET %s: %s", url, resp.Status)
					return
				}
			}
		})
	}
	return func() {
		cancel()
		wg.Wait()
		tr.CloseIdleConnections()
	}
}

func portOf(t *testing.T, addr string) int {
	_, ps, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(ps)
	return port
}

// The server behind the server: nginx in front of php-fpm (over a unix
// socket) and in front of another nginx (proxy_pass over loopback TCP),
// as the seeds' PHP blog is served. A run's watches are the listening
// nginx; the probe finds the upstream from nginx's connected sockets as
// soon as requests flow and watches it as a row of its own, "php-fpm8.2
// [PID] (upstream of nginx)", master and workers. Its CPU over the window
// is what /proc says of those processes (the witness, read here), the
// first slice included: before, no row named php-fpm, and its CPU went to
// "other processes".
func TestUpstreamFoundLive(t *testing.T) {
	if testing.Short() {
		t.Skip("live processes and sock_diag: not in -short (the 32-bit pass runs under qemu-user)")
	}
	type setup struct {
		url      string
		port     int
		upstream int // the upstream's top process
		name     string
	}
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) setup
	}{
		{"php-fpm on a unix socket", func(t *testing.T) setup {
			fpm := testenv.StartPHPFPM(t, testenv.PHPFPMConfig{Workers: 4})
			ng := testenv.NginxWith(t, testenv.NginxConfig{ServerExtra: testenv.FastCGILocation(fpm)})
			if err := os.WriteFile(filepath.Join(ng.Root, "burn.php"), []byte(burnPHP), 0o644); err != nil {
				t.Fatal(err)
			}
			return setup{"http://" + ng.Addr + "/burn.php", portOf(t, ng.Addr), fpm.Master, "php-fpm8.2"}
		}},
		{"nginx behind nginx over loopback TCP", func(t *testing.T) setup {
			back := testenv.NginxWith(t, testenv.NginxConfig{Workers: 2,
				ServerExtra: "gzip on; gzip_comp_level 9; gzip_http_version 1.0; gzip_types text/plain;"})
			// Text that gzip works hard on, 2 MB of it.
			r := rand.New(rand.NewPCG(1, 2))
			var b strings.Builder
			for b.Len() < 2<<20 {
				b.WriteByte(byte('a' + r.IntN(26)))
			}
			if err := os.WriteFile(filepath.Join(back.Root, "big.txt"), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			front := testenv.NginxWith(t, testenv.NginxConfig{ServerExtra: "location /big.txt { proxy_pass http://" + back.Addr + "; }"})
			return setup{"http://" + front.Addr + "/big.txt", portOf(t, front.Addr), back.Master, "nginx"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.start(t)
			witness := append([]int{s.upstream}, testenv.Children(s.upstream)...)

			ws := DefaultWatches("/", s.port)
			if len(ws) != 2 || ws[0].Role != machine.RoleServer || !ws[0].Upstreams || ws[1].Role != machine.RoleGenerator {
				t.Fatalf("watches %+v: want the server (looking for its upstreams), then this process", ws)
			}
			p := New("/")
			defer p.Close()
			w0, t0 := cpuTicks(t, witness), time.Now()
			// As a run does: the probe's first sample, then the load.
			rec := p.Record(context.Background(), 500*time.Millisecond, ws)
			stop := hammer(t, s.url, 6)
			defer stop()
			time.Sleep(3 * time.Second)
			rep := rec.Stop()
			w1, t1 := cpuTicks(t, witness), time.Now()
			want := float64(w1-w0) / userHZ / t1.Sub(t0).Seconds() * 100

			var up *machine.ProcSummary
			for i, pr := range rep.Summary.Procs {
				t.Logf("row %s: role %q, %d processes, CPU %+v", pr.Label(), pr.Role, pr.Count, pr.CPU)
				if pr.Role == machine.RoleUpstream {
					up = &rep.Summary.Procs[i]
				}
			}
			t.Logf("/proc: %s [%d] and its %d children used %.1f %% over %v", s.name, s.upstream, len(witness)-1, want, t1.Sub(t0).Round(time.Millisecond))
			if want < 5 {
				t.Skipf("!!! the upstream used %.1f %% only: the machine gave the test's load too little CPU to witness it; SKIPPING", want)
			}
			if up == nil {
				t.Fatalf("no upstream row; /proc says %s [%d] used %.1f %%", s.name, s.upstream, want)
			}
			if up.Name != s.name || up.PID != s.upstream || up.Of != "nginx" || up.Count != len(witness) {
				t.Errorf("upstream row %s (%d processes), want %s [%d] (upstream of nginx) with %d", up.Label(), up.Count, s.name, s.upstream, len(witness))
			}
			if got := rep.Summary.Procs[0]; got.Role != machine.RoleServer || got.Name != "nginx" {
				t.Errorf("first row %s role %q, want the listening nginx", got.Label(), got.Role)
			}
			if up.CPU == nil || math.Abs(up.CPU.Mean-want) > math.Max(5, 0.05*want) {
				t.Errorf("upstream CPU %+v %%, /proc says %.1f %% over the window", up.CPU, want)
			}
			// Found while requests flow (none before the load), in the
			// window's first slices; the slice it is found in has its CPU,
			// from the counters kept at the sample before.
			for i, smp := range rep.Samples {
				j := slices.IndexFunc(smp.Procs, func(p machine.Proc) bool { return p.Role == machine.RoleUpstream })
				if j < 0 {
					continue
				}
				if i == 0 || i > upstreamEarly || smp.Procs[j].CPU == nil {
					t.Errorf("the upstream first in sample %d of %d (%+v), want it in the first %d, with its CPU", i, len(rep.Samples), smp.Procs[j], upstreamEarly)
				}
				break
			}
		})
	}
}

// An upstream's own upstreams are found the same way: nginx proxying to
// another nginx, which hands .php pages to php-fpm. Each is a row of its
// own, named after the process that hands it its work.
func TestUpstreamOfAnUpstreamLive(t *testing.T) {
	if testing.Short() {
		t.Skip("live processes and sock_diag: not in -short (the 32-bit pass runs under qemu-user)")
	}
	fpm := testenv.StartPHPFPM(t, testenv.PHPFPMConfig{Workers: 2})
	back := testenv.NginxWith(t, testenv.NginxConfig{ServerExtra: testenv.FastCGILocation(fpm)})
	if err := os.WriteFile(filepath.Join(back.Root, "burn.php"), []byte(burnPHP), 0o644); err != nil {
		t.Fatal(err)
	}
	front := testenv.NginxWith(t, testenv.NginxConfig{ServerExtra: "location /burn.php { proxy_pass http://" + back.Addr + "; }"})
	p := New("/")
	defer p.Close()
	rec := p.Record(context.Background(), 500*time.Millisecond, DefaultWatches("/", portOf(t, front.Addr)))
	stop := hammer(t, "http://"+front.Addr+"/burn.php", 4)
	time.Sleep(3 * time.Second)
	rep := rec.Stop()
	stop()
	want := []struct {
		name, role, of string
		pid            int
	}{
		{"nginx", machine.RoleServer, "", front.Master},
		{"probe.test", machine.RoleGenerator, "", os.Getpid()},
		{"nginx", machine.RoleUpstream, "nginx", back.Master},
		{"php-fpm8.2", machine.RoleUpstream, "nginx", fpm.Master},
	}
	rows := rep.Summary.Procs
	for _, r := range rows {
		t.Logf("row %s: role %q, %d processes, CPU %+v", r.Label(), r.Role, r.Count, r.CPU)
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, w := range want {
		if r := rows[i]; r.Role != w.role || r.Of != w.of || r.PID != w.pid || (w.role != machine.RoleGenerator && r.Name != w.name) {
			t.Errorf("row %d %s role %q, want %s [%d] role %q of %q", i, r.Label(), r.Role, w.name, w.pid, w.role, w.of)
		}
	}
}
