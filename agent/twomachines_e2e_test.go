package agent

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// A run across two devices, as the collector will drive it, with real
// agents: the target's in a network namespace beside its nginx (a second
// machine with its own link and its own /proc/net), the loader's on this
// side, the broker on this side's end of the veth, which both reach. The
// test plays the collector: the watch, the load once the watch runs, the
// loader's window events relayed as marks, done at the load's end.
// Traffic goes to the namespace's address only.
func TestTwoMachinesWatchInANamespace(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: not in -short")
	}
	host, ns := testenv.FreeSubnet(t)
	n := testenv.NewNetns(t, testenv.NetnsConfig{HostAddr: host, Addr: ns})
	ng := testenv.NginxWith(t, testenv.NginxConfig{Netns: n, Files: map[string]int{"page": 64 << 10}})
	b := testenv.NewBroker(t)
	_, port, _ := net.SplitHostPort(b.Addr)
	b.Addr = net.JoinHostPort(n.HostAddr.String(), port)
	b.Start()
	fleet := newFleetSide(t, b.URL())

	// The target: its watches may last a minute, its built-in target
	// may listen on its own address.
	tstate := t.TempDir()
	target := startAgentAs(t, n.Command, "pi3", b.URL(), tstate, "EDGEBENCH_POLICY_MAX_WATCH_DURATION=1m",
		"EDGEBENCH_POLICY_SERVE_ALLOW=127.0.0.0/8,"+n.Addr.String())
	// The loader: the fleet's boards in its fleet file, its allowlist
	// loopback.
	boards := filepath.Join(t.TempDir(), "boards")
	if err := os.WriteFile(boards, []byte("# the lab\n"+n.Addr.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	startAgentAs(t, execCommand, "laptop", b.URL(), t.TempDir(), "EDGEBENCH_POLICY_FLEET_FILE="+boards)
	fleet.waitFor(30*time.Second, "both births", func() bool { return fleet.births["pi3"] != nil && fleet.births["laptop"] != nil })
	if info := fleet.births["pi3"].Info; info == nil || strings.Join(info.Addrs, ",") != n.Addr.String() {
		t.Errorf("the target's birth gives its addresses as %+v, want [%s]", info, n.Addr)
	}

	// Refused before anything runs: a target outside the loader's fleet
	// file (nothing is sent to it), a watch over the target's cap.
	outside := netipNext(n.Addr)
	for _, c := range []struct {
		device string
		cmd    *wire.Command
		reason string
	}{
		{"laptop", loadCmd("http://"+outside+":8080/", time.Second, 4),
			fmt.Sprintf("target %s not in allowlist [127.0.0.0/8 ::1/128] nor among the 1 boards of policy.fleet_file", outside)},
		{"pi3", command(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: 120_000, URL: "http://" + ng.Addr + "/"}}),
			"duration 2m0s over cap 1m0s (policy.max_watch_duration)"},
	} {
		fleet.send(c.device, c.cmd)
		fleet.waitFor(10*time.Second, "the refusal of "+c.reason, func() bool { return fleet.terminal(c.cmd.ID) != nil })
		if ev := fleet.terminal(c.cmd.ID); ev.State != wire.StateRejected || ev.Reason != c.reason {
			t.Errorf("%s: %s %q, want rejected %q", c.device, ev.State, ev.Reason, c.reason)
		}
	}

	// The watch, then the load once the watch runs.
	url := "http://" + ng.Addr + "/page"
	watch := command(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: 50_000, IntervalMS: 250, URL: url}})
	ticks0 := treeTicks(t, ng.Master)
	fleet.send("pi3", watch)
	var running string
	fleet.waitFor(20*time.Second, "the watch to run", func() bool {
		for _, ev := range fleet.events[watch.ID] {
			if ev.State == wire.StateRunning {
				running = ev.Reason
			}
		}
		return running != ""
	})
	if want := fmt.Sprintf("watching what listens on port 8080: process %d", ng.Master); running != want {
		t.Errorf("the watch's running event: %q, want %q", running, want)
	}
	load := loadCmd(url, 2*time.Second, 8)
	load.Spec.LoadTest.Repeat = 2
	fleet.send("laptop", load)
	relayed := 0
	fleet.waitFor(60*time.Second, "the load's end, its windows relayed", func() bool {
		var edges []*wire.WindowEdge
		for _, ev := range fleet.events[load.ID] {
			if ev.Window != nil {
				edges = append(edges, ev.Window)
			}
		}
		for _, w := range edges[relayed:] {
			m := command(wire.KindMark, wire.CommandSpec{Mark: &wire.MarkSpec{CommandID: watch.ID, Run: w.Run, Edge: w.Edge}})
			fleet.mu.Unlock() // send waits for the broker: not under the lock the handlers take
			fleet.send("pi3", m)
			fleet.mu.Lock()
		}
		relayed = len(edges)
		return fleet.terminal(load.ID) != nil
	})
	fleet.send("pi3", command(wire.KindMark, wire.CommandSpec{Mark: &wire.MarkSpec{CommandID: watch.ID, Edge: wire.MarkDone}}))
	fleet.waitFor(30*time.Second, "the watch's end", func() bool { return fleet.terminal(watch.ID) != nil })
	ticks := treeTicks(t, ng.Master) - ticks0
	lend, wend := fleet.terminal(load.ID), fleet.terminal(watch.ID)
	if lend.State != wire.StateSucceeded || wend.State != wire.StateSucceeded || relayed != 4 {
		t.Fatalf("load %s (%s), watch %s (%s), %d window edges relayed", lend.State, lend.Reason, wend.State, wend.Reason, relayed)
	}
	fleet.waitFor(10*time.Second, "both results", func() bool {
		return fleet.results[lend.ResultID] != nil && fleet.results[wend.ResultID] != nil
	})
	lr, wr := fleet.results[lend.ResultID], fleet.results[wend.ResultID]

	// The watch: a run per window, each the load's run's, nginx's CPU in
	// each, and together what /proc says nginx used.
	if wr.Device != "pi3" || wr.Kind != wire.KindProbe || wr.CommandID != watch.ID || len(wr.Runs) != 2 || len(lr.Runs) != 2 {
		t.Fatalf("watch result %s %s %s with %d runs, load result with %d", wr.Device, wr.Kind, wr.CommandID, len(wr.Runs), len(lr.Runs))
	}
	var cpuSeconds float64
	for i, r := range wr.Runs {
		l := lr.Runs[i]
		if r.Window == nil || r.Window.Run != i || r.Window.Open {
			t.Errorf("watch run %d: window %+v", i, r.Window)
		}
		if d := r.StartedAt.Sub(l.StartedAt); d < -100*time.Millisecond || d > time.Second {
			t.Errorf("run %d: the watch's window starts %v after the load's", i, d)
		}
		if d := time.Duration(r.DurationUS-l.DurationUS) * time.Microsecond; d < -500*time.Millisecond || d > 500*time.Millisecond {
			t.Errorf("run %d: the watch's window lasts %v, the load's %v", i, time.Duration(r.DurationUS)*time.Microsecond, time.Duration(l.DurationUS)*time.Microsecond)
		}
		s := r.System
		if s == nil || len(s.Summary.Procs) != 1 || s.Summary.Procs[0].CPUBP == nil {
			t.Fatalf("run %d: no nginx in %+v", i, s)
		}
		cpuSeconds += float64(s.Summary.Procs[0].CPUBP.Mean) / 10000 * float64(r.DurationUS) / 1e6
		// The namespace's own link and TCP: what nginx sent went out of
		// its end of the veth.
		var tx int64
		for _, nw := range s.Summary.Nets {
			if s.Nets[nw.I] == n.NsIf {
				tx = nw.TxKBs.Mean
			}
		}
		if tx < 1000 || s.Summary.TCP == nil || s.Summary.TCP.Out < 1000 {
			t.Errorf("run %d: %s sent %d KiB/s, tcp %+v", i, n.NsIf, tx, s.Summary.TCP)
		}
		// The loader's side: the round trip to the target.
		if p := l.System.Summary.Path; p == nil || p.Target != ng.Addr || p.Idle == nil || p.Loaded == nil {
			t.Errorf("load run %d: path %+v", i, p)
		}
	}
	procSeconds := float64(ticks) / 100
	t.Logf("nginx used %.2f CPU-s by /proc over the watch, %.2f in its windows by the watch", procSeconds, cpuSeconds)
	if cpuSeconds > procSeconds+0.05 || cpuSeconds < 0.75*procSeconds-0.05 {
		t.Errorf("nginx's CPU in the windows %.2f s, by /proc over the whole watch %.2f s", cpuSeconds, procSeconds)
	}

	// serve from a command, on the target's own address, and a watch of
	// it: the agent itself listens.
	serve := command(wire.KindServe, wire.CommandSpec{Serve: &wire.ServeSpec{Addr: n.Addr.String() + ":8081", DurationMS: 30_000}})
	fleet.send("pi3", serve)
	fleet.waitFor(10*time.Second, "the serve to run", func() bool {
		evs := fleet.events[serve.ID]
		return len(evs) > 0 && (evs[len(evs)-1].State == wire.StateRunning || evs[len(evs)-1].State.Terminal())
	})
	if evs := fleet.eventsOf(serve.ID); evs[len(evs)-1].Reason != "serving on http://"+n.Addr.String()+":8081/" {
		t.Fatalf("serve: %s", fleet.states(serve.ID))
	}
	resp, err := http.Get("http://" + n.Addr.String() + ":8081/bytes/10")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(body) != 10 {
		t.Errorf("the built-in target answered %d with %d bytes", resp.StatusCode, len(body))
	}
	w2 := command(wire.KindProbe, wire.CommandSpec{Probe: &wire.ProbeSpec{DurationMS: 500, URL: "http://" + n.Addr.String() + ":8081/"}})
	fleet.send("pi3", w2)
	fleet.waitFor(20*time.Second, "the second watch's end", func() bool { return fleet.terminal(w2.ID) != nil })
	reason := ""
	if evs := fleet.eventsOf(w2.ID); len(evs) > 1 {
		reason = evs[1].Reason
	}
	if want := fmt.Sprintf("watching what listens on port 8081: process %d", target.cmd.Process.Pid); !strings.Contains(fleet.states(w2.ID), "running") ||
		reason != want {
		t.Errorf("watch of the built-in target: %q, want %q", reason, want)
	}
}

// execCommand is exec.Command, for startAgentAs.
var execCommand = exec.Command

// treeTicks is the user and system ticks of pid and its children, from
// /proc/PID/stat.
func treeTicks(t *testing.T, pid int) int64 {
	t.Helper()
	var sum int64
	for _, p := range append([]int{pid}, testenv.Children(pid)...) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/stat")
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		u, _ := strconv.ParseInt(f[11], 10, 64)
		k, _ := strconv.ParseInt(f[12], 10, 64)
		sum += u + k
	}
	return sum
}

// netipNext is the address after a in its /24, which nobody holds: the
// tests' namespaces use .1 and .2.
func netipNext(a interface{ As4() [4]byte }) string {
	b := a.As4()
	return fmt.Sprintf("%d.%d.%d.%d", b[0], b[1], b[2], b[3]+1)
}
