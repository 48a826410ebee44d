package verdict

import (
	"strings"
	"testing"

	"github.com/edgebench/edgebench/probe/machine"
)

// phpBlog is the seeds' PHP blog on a 2-core box, as the probe sees it
// with roles: nginx listening, php-fpm its upstream, edgebench the
// generator; the cores busy % busy, the rest other processes'.
func phpBlog(busy, nginx, fpm, gen float64) *machine.Report {
	return &machine.Report{Summary: machine.Summary{
		CPU:        &machine.CPUSummary{Idle: stat(100 - busy), User: stat(busy)},
		PerCPUBusy: []machine.CoreStat{{ID: 0, Stat: stat(busy)}, {ID: 1, Stat: stat(busy)}},
		Procs: []machine.ProcSummary{
			{Name: "nginx", PID: 812, Role: machine.RoleServer, Count: 2, CPU: pstat(nginx)},
			{Name: "edgebench", PID: 4242, Role: machine.RoleGenerator, Count: 1, CPU: pstat(gen)},
			{Name: "php-fpm8.2", PID: 790, Role: machine.RoleUpstream, Of: "nginx", Count: 5, CPU: pstat(fpm)},
		},
	}}
}

// The server is what listens and what it hands the work to: php-fpm's
// CPU is the server's, named, never "other processes" (issue 28: "NOT
// VALID ... nginx 39 %, edgebench 25 % ... other processes 123 % of 200
// %" while php-fpm's workers used 131 %).
func TestServerWithItsUpstream(t *testing.T) {
	in := Input{Load: load(3100, 96_000), System: phpBlog(99, 39, 131, 25)}
	v := Judge(in)
	all := strings.Join(v.Reasons, " | ")
	if v.LimitedBy != CPU || !v.Valid || !strings.Contains(all, "shared by the server and edgebench") ||
		!strings.Contains(all, "nginx 39 %, php-fpm8.2 (upstream of nginx) 131 %, edgebench 25 %") || !strings.Contains(all, "other processes 3 %") {
		t.Errorf("verdict %s", v.Line())
	}
	if cpu, ok := ServerCPU(in); !ok || cpu != 170 {
		t.Errorf("ServerCPU = %v, %v; want nginx's and php-fpm's 170", cpu, ok)
	}
	// Everything at its cores: the server with its upstream, by name.
	v = Judge(Input{Load: load(3100, 96_000), System: phpBlog(99, 40, 148, 5)})
	if v.LimitedBy != Server || !strings.Contains(v.Reasons[0], "nginx with php-fpm8.2 at 188 % of the 2 cores") {
		t.Errorf("verdict %s", v.Line())
	}
	// Two single-threaded workers of php-fpm on a 4-core box: php-fpm's
	// whole cores, nginx's share aside.
	four := phpBlog(60, 20, 199, 10)
	four.Summary.PerCPUBusy = append(four.Summary.PerCPUBusy, machine.CoreStat{ID: 2, Stat: stat(60)}, machine.CoreStat{ID: 3, Stat: stat(60)})
	v = Judge(Input{Load: load(3100, 96_000), System: four})
	if v.LimitedBy != Server || !strings.Contains(v.Reasons[0], "php-fpm8.2 at 199 % of 2 cores (5 processes)") {
		t.Errorf("verdict %s", v.Line())
	}
	// Without roles (a summary recorded before them) the first row that is
	// not the generator's is the server, alone: php-fpm is other processes.
	old := phpBlog(99, 39, 131, 25)
	for i := range old.Summary.Procs {
		old.Summary.Procs[i].Role = ""
	}
	v = Judge(Input{Load: load(3100, 96_000), System: old, GeneratorPID: 4242})
	if v.Valid || !strings.Contains(strings.Join(v.Reasons, " | "), "other processes 134 %") {
		t.Errorf("without roles: %s", v.Line())
	}
}

// The generator's CPU is its row's, found by its role as by its PID: with
// --watch it was missing and the verdict said "edgebench 0 %".
func TestGeneratorRowByRole(t *testing.T) {
	v := Judge(Input{Load: load(3100, 96_000), System: phpBlog(99, 39, 131, 25)})
	if !strings.Contains(v.Reasons[0], "edgebench 25 %") {
		t.Errorf("verdict %s", v.Line())
	}
	in := Input{Load: load(50000, 300), System: phpBlog(99, 5, 10, 185)}
	if gb, why := GeneratorBound(in); !gb || !strings.Contains(why, "185 %") {
		t.Errorf("generator at its threads by its role: %v %q", gb, why)
	}
}
