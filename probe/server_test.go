package probe

import (
	"slices"
	"testing"
	"time"

	"github.com/edgebench/edgebench/probe/machine"
)

// The servers fixture is a machine with several servers: nginx on :80
// (master 700, workers 701 and 702, and 690, a shell a worker started) and
// another nginx on :8081 (710, 711, whose exe links are not readable), an
// `edgebench serve` on :8080 (950) started from a shell (940) in ttyd
// (930, listening on :7681), the run itself (960) from the same shell, an
// agent (900), gunicorn on :9000 (800, 801) whose socket systemd (1) holds
// too, and a python3 server on :8000 whose workers (821, 822) hold the
// socket and whose master (820) does not.
func TestServerWatches(t *testing.T) {
	const root, self = "testdata/servers/t0", 960
	for _, tc := range []struct {
		port int
		want []Watch
	}{
		{80, []Watch{{PID: 700, Tree: true}}},
		{8081, []Watch{{PID: 710, Tree: true}}},
		{8080, []Watch{{PID: 950, Tree: true}}}, // not the shell above it, not the run beside it
		{9000, []Watch{{PID: 800, Tree: true}}}, // not systemd, which passed it the socket
		{8000, []Watch{{PID: 820, Tree: true}}}, // up to the master of the same program
		{7681, []Watch{{PID: 930}}},             // an ancestor of the run: its tree would hold the run
		{443, nil},
	} {
		if got := serverWatches(root, tc.port, self); !slices.Equal(got, tc.want) {
			t.Errorf("port %d: %+v, want %+v", tc.port, got, tc.want)
		}
	}
	// The run serving the port itself (the agent's built-in target) is not
	// a server apart from it.
	if got := serverWatches(root, 8080, 950); got != nil {
		t.Errorf("port 8080 served by the run: %+v", got)
	}
	if got := DefaultWatches(root, 80); !slices.Equal(got, []Watch{{PID: 700, Tree: true, Role: machine.RoleServer, Upstreams: true}}) {
		t.Errorf("DefaultWatches = %+v", got)
	}
	// A watch on a load's target (another machine's run): the server with
	// its upstreams, no generator.
	if got := ServerWatches(root, 80); !slices.Equal(got, []Watch{{PID: 700, Tree: true, Role: machine.RoleServer, Upstreams: true}}) {
		t.Errorf("ServerWatches = %+v", got)
	}
}

// A load test's watches: the listening server and this process always,
// what --watch names beside them as the server's, and no process in two
// rows that count (issue 28: with --watch php-fpm8.2 the generator's row
// and nginx were gone, and the verdict said "edgebench 0 %").
func TestRunWatches(t *testing.T) {
	const root, self = "testdata/servers/t0", 960
	server := Watch{PID: 700, Tree: true, Role: machine.RoleServer, Upstreams: true}
	gen := Watch{PID: self, Role: machine.RoleGenerator}
	for _, tc := range []struct {
		name string
		port int
		user []Watch
		want []Watch
	}{
		{"no --watch", 80, nil, []Watch{server, gen}},
		{"no port", 0, nil, []Watch{gen}},
		{"nothing listens", 443, []Watch{{Name: "php-fpm8.2"}}, []Watch{{Name: "php-fpm8.2", Role: machine.RoleServer}, gen}},
		{"--watch php-fpm8.2 beside nginx", 80, []Watch{{Name: "php-fpm8.2"}},
			[]Watch{server, {Name: "php-fpm8.2", Role: machine.RoleServer}, gen}},
		{"--watch nginx replaces the tree", 80, []Watch{{Name: "nginx"}},
			[]Watch{{Name: "nginx", Role: machine.RoleServer, Upstreams: true}, gen}},
		{"--watch of the master: the tree counts it", 80, []Watch{{PID: 700}}, []Watch{server, {PID: 700}, gen}},
		{"--watch of a worker: the tree counts it", 80, []Watch{{PID: 701}}, []Watch{server, {PID: 701}, gen}},
		{"--watch of another process", 80, []Watch{{PID: 800}}, []Watch{server, {PID: 800, Role: machine.RoleServer}, gen}},
		{"--watch of this process", 80, []Watch{{PID: self}}, []Watch{server, gen}},
		{"--watch edgebench: this program's name", 80, []Watch{{Name: "edgebench"}}, []Watch{server, {Name: "edgebench"}, gen}},
	} {
		if got := runWatches(root, tc.port, tc.user, self); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// The default watch counts that nginx instance and what it started, not the
// other nginx: --watch nginx still sums every process of the name.
func TestTreeWatchFixture(t *testing.T) {
	ws := DefaultWatches("testdata/servers/t0", 80)
	_, s := fixtureSamples(t, "servers", time.Second, append(ws, Watch{Name: "nginx"}, Watch{PID: 960})...)
	tree, byName, run := s.Procs[0], s.Procs[1], s.Procs[2]
	// 700, 701, 702 and 690 (listed before its parent 702): 2 + 60 + 40 + 8
	// ticks in 1 s.
	if tree.Name != "nginx" || tree.PID != 700 || tree.Count != 4 {
		t.Errorf("tree = %+v", tree)
	}
	checkF(t, "tree cpu", tree.CPU, 110)
	checkU(t, "tree rss", tree.RSS, (1200+1500+1400+100)*4096)
	// Both instances: 2 + 60 + 40 + 0 + 100.
	if byName.Name != "nginx" || byName.PID != 0 || byName.Count != 5 {
		t.Errorf("by name = %+v", byName)
	}
	checkF(t, "nginx by name cpu", byName.CPU, 202)
	if run.Name != "edgebench" || run.PID != 960 || run.Count != 1 {
		t.Errorf("run = %+v", run)
	}
	checkF(t, "run cpu", run.CPU, 90)
}
