package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/verdict"
)

// phpPage keeps a php-fpm worker busy for tens of milliseconds, as a
// blog's PHP page does.
const phpPage = `<?php $x = 0; for ($i = 0; $i < 400000; $i++) { $x += $i * $i % 7; } echo "<html>$x</html>\n";`

// ticks is the witness: the user and system ticks of pids summed, read
// from /proc/PID/stat here, apart from the probe; false when one is gone.
func ticks(pids ...int) (int64, bool) {
	var sum int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, false
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		sum += u + k
	}
	return sum, true
}

// reading is the witness's ticks of two sets of processes at one time.
type reading struct {
	at    time.Time
	ticks [2]int64
}

// between is the CPU % of set i over [from, to], the ticks at each end
// interpolated between the readings around it.
func between(rs []reading, i int, from, to time.Time) float64 {
	at := func(t time.Time) float64 {
		for k := 1; k < len(rs); k++ {
			if !rs[k].at.Before(t) {
				a, b := rs[k-1], rs[k]
				f := float64(t.Sub(a.at)) / float64(b.at.Sub(a.at))
				return float64(a.ticks[i]) + f*float64(b.ticks[i]-a.ticks[i])
			}
		}
		return math.NaN()
	}
	return (at(to) - at(from)) / 100 / to.Sub(from).Seconds() * 100
}

// row is a watched process of a run's JSON.
type row struct {
	Name  string `json:"name"`
	PID   int    `json:"pid"`
	Role  string `json:"role"`
	Of    string `json:"of"`
	Count int    `json:"count"`
	CPU   *struct {
		Mean float64 `json:"mean"`
	} `json:"cpu"`
}

// witnessedRun runs the binary with args and reads, every 20 ms while it
// runs, the witness's ticks of the php-fpm processes and of the run
// itself. It returns the rows and verdict of the JSON report and the
// witness's CPU % of fpm and of the run over the report's window (its
// start and end as the System section gives them).
func witnessedRun(t *testing.T, fpm []int, args ...string) (rows []row, v verdict.Verdict, fpmCPU, genCPU float64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, testenv.Binary(t, "."), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	var rs []reading
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			f, ok1 := ticks(fpm...)
			g, ok2 := ticks(pid)
			if !ok1 || !ok2 {
				return
			}
			rs = append(rs, reading{time.Now(), [2]int64{f, g}})
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	err := cmd.Wait()
	close(stop)
	<-done
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, errb.String())
	}
	var doc struct {
		System struct {
			Summary struct {
				Start time.Time `json:"start"`
				End   time.Time `json:"end"`
				Procs []row     `json:"procs"`
			} `json:"summary"`
		} `json:"system"`
		Verdict *verdict.Verdict `json:"verdict"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil || doc.Verdict == nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, r := range doc.System.Summary.Procs {
		if r.Role == "generator" && r.PID != pid {
			t.Errorf("generator row %+v, want the run's PID %d", r, pid)
		}
	}
	su := doc.System.Summary
	return su.Procs, *doc.Verdict, between(rs, 0, su.Start, su.End), between(rs, 1, su.Start, su.End)
}

// near reports whether a figure is within a few points of the witness's.
func near(got, want float64) bool { return math.Abs(got-want) <= math.Max(5, 0.05*want) }

// Issue 28 items 2 and 11, with the seed's PHP blog: nginx in front of
// php-fpm (4 workers, on a unix socket), a PHP page that burns CPU, and
// the seed's command line. php-fpm is the server's: a row of its own,
// "php-fpm8.2 [PID] (upstream of nginx)", its CPU what /proc says of its
// processes, and the verdict names it where it names the CPU's shares,
// never as "other processes" (it said "nginx 39 %, edgebench 25 % ...
// other processes 123 % of 200 %" while php-fpm's workers used 131 %).
// With --watch php-fpm8.2 the row is the watched name, nginx is still
// found, and edgebench's own row is there with its CPU (the verdict said
// "edgebench 0 %").
func TestPHPBehindNginxIsTheServer(t *testing.T) {
	// Its own command name: --watch NAME sums every process of the name,
	// and other tests may run php-fpm8.2 beside this one.
	const comm = "php-fpm-edgeb"
	fpm := testenv.StartPHPFPM(t, testenv.PHPFPMConfig{Workers: 4, Comm: comm})
	ng := testenv.NginxWith(t, testenv.NginxConfig{ServerExtra: testenv.FastCGILocation(fpm)})
	if err := os.WriteFile(filepath.Join(ng.Root, "index.php"), []byte(phpPage), 0o644); err != nil {
		t.Fatal(err)
	}
	url := "http://" + ng.Addr + "/index.php"
	procs := append([]int{fpm.Master}, testenv.Children(fpm.Master)...)

	check := func(t *testing.T, rows []row, v verdict.Verdict, fpmWitness, genWitness float64, fpmRow func(row) bool) {
		t.Helper()
		var shown []string
		for _, r := range rows {
			cpu := "-"
			if r.CPU != nil {
				cpu = fmt.Sprintf("%.1f %%", r.CPU.Mean)
			}
			shown = append(shown, fmt.Sprintf("%s [%d] %s of %q: %s", r.Name, r.PID, r.Role, r.Of, cpu))
		}
		t.Logf("witness: php-fpm %.1f %%, edgebench %.1f %%; rows %s; verdict %s", fpmWitness, genWitness, strings.Join(shown, ", "), v.Line())
		var php, gen, server *row
		for i, r := range rows {
			switch {
			case fpmRow(r):
				php = &rows[i]
			case r.Role == "generator":
				gen = &rows[i]
			case r.Role == "server" && r.Name == "nginx" && r.PID == ng.Master:
				server = &rows[i]
			}
		}
		if server == nil {
			t.Errorf("no row for the listening nginx [%d]", ng.Master)
		}
		if php == nil || php.CPU == nil || !near(php.CPU.Mean, fpmWitness) {
			t.Errorf("php-fpm's row %+v, /proc says %.1f %%", php, fpmWitness)
		}
		if gen == nil || gen.CPU == nil || gen.CPU.Mean <= 0 || !near(gen.CPU.Mean, genWitness) {
			t.Errorf("edgebench's row %+v, /proc says %.1f %%", gen, genWitness)
		}
		all := strings.Join(v.Reasons, " | ")
		if strings.Contains(all, "other processes") && !strings.Contains(all, comm) {
			t.Errorf("the verdict counts php-fpm in other processes: %s", v.Line())
		}
		if strings.Contains(all, "edgebench 0 %") && genWitness >= 1 {
			t.Errorf("the verdict says edgebench 0 %%, /proc says %.1f %%: %s", genWitness, v.Line())
		}
	}

	t.Run("found from nginx's sockets", func(t *testing.T) {
		rows, v, fw, gw := witnessedRun(t, procs, "wrk", "-t10", "-c10", "-d4s", "--latency", "--format", "json", url)
		check(t, rows, v, fw, gw, func(r row) bool {
			return r.Role == "upstream" && r.Name == comm && r.PID == fpm.Master && r.Of == "nginx" && r.Count == 5
		})
	})
	t.Run("--watch php-fpm8.2", func(t *testing.T) {
		rows, v, fw, gw := witnessedRun(t, procs, "wrk", "-t10", "-c10", "-d4s", "--latency", "--format", "json", "--watch", comm, url)
		check(t, rows, v, fw, gw, func(r row) bool { return r.Role == "server" && r.Name == comm && r.PID == 0 && r.Count == 5 })
		for _, r := range rows {
			if r.Role == "upstream" {
				t.Errorf("php-fpm counted twice: %+v", rows)
			}
		}
	})
}
