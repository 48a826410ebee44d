package probe

import (
	"net"
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/probe/machine"
)

// watchedPIDs returns the PIDs a watch holds, ascending.
func watchedPIDs(ws *watchState) []int {
	var out []int
	for pid := range ws.pids {
		out = append(out, pid)
	}
	slices.Sort(out)
	return out
}

// Two real nginx instances on loopback: the default watch of a run against
// one is its master and workers, found through the listening socket, and
// not the other's; after a reload it follows the new workers.
func TestDefaultWatchesLiveNginx(t *testing.T) {
	if testing.Short() {
		t.Skip("live process table: not in -short (the 32-bit pass runs under qemu-user)")
	}
	target := testenv.Nginx(t, 2)
	foreign := testenv.Nginx(t, 2)
	_, ps, _ := net.SplitHostPort(target.Addr)
	port, _ := strconv.Atoi(ps)

	ws := DefaultWatches("/", port)
	if want := []Watch{{PID: target.Master, Tree: true, Role: machine.RoleServer, Upstreams: true}, {PID: os.Getpid(), Role: machine.RoleGenerator}}; !slices.Equal(ws, want) {
		t.Fatalf("DefaultWatches = %+v, want %+v", ws, want)
	}
	p := New("/")
	defer p.Close()
	p.SetWatches(append(ws, Watch{Name: "nginx"}))
	s, _ := p.Sample()
	own := append([]int{target.Master}, testenv.Children(target.Master)...)
	slices.Sort(own)
	if got := watchedPIDs(p.watches[0]); !slices.Equal(got, own) {
		t.Errorf("watched %v, want the target's master and workers %v", got, own)
	}
	if srv := s.Procs[0]; srv.Name != "nginx" || srv.PID != target.Master || srv.Count != 3 {
		t.Errorf("server row %+v, want nginx [%d] with 3 processes", srv, target.Master)
	}
	if self := s.Procs[1]; self.PID != os.Getpid() || self.Count != 1 {
		t.Errorf("own row %+v", self)
	}
	// --watch nginx: every nginx on the machine, the foreign one included.
	byName := watchedPIDs(p.watches[2])
	for _, pid := range append(append([]int{foreign.Master}, testenv.Children(foreign.Master)...), own...) {
		if !slices.Contains(byName, pid) {
			t.Errorf("--watch nginx misses %d: %v", pid, byName)
		}
	}

	// A reload replaces the workers; the next rescan finds the new ones.
	if err := syscall.Kill(target.Master, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var now []int
	for {
		now = testenv.Children(target.Master)
		if len(now) == 2 && !slices.Contains(own, now[0]) && !slices.Contains(own, now[1]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("workers after reload: %v (before %v)", now, own)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.watches[0].lastScan = p.nsample - rescanEvery
	s, _ = p.Sample()
	want := append([]int{target.Master}, now...)
	slices.Sort(want)
	if got := watchedPIDs(p.watches[0]); !slices.Equal(got, want) || s.Procs[0].Count != 3 {
		t.Errorf("after reload: watched %v (count %d), want %v", got, s.Procs[0].Count, want)
	}
}
