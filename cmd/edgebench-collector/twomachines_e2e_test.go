package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/verdict"
	"github.com/edgebench/edgebench/wire"
)

// Runs across two devices through the collector, as a user runs them:
// the collector binary with its embedded broker on this side's end of a
// veth pair, the target's agent (device pi3) in a network namespace beside
// its nginx, the loader's agent (laptop) on this side, and
// `edgebench-collector trigger --device laptop --target-device pi3`.
// Traffic goes to the namespace's address only: the loader's fleet file
// lists it alone, and the collector refuses any other host.

// twoFleet is a collector, the target's agent in a namespace beside its
// nginx, and the loader's agent.
type twoFleet struct {
	*testFleet
	tt        *testing.T
	n         *testenv.Netns
	ng        testenv.NginxServer
	target    *proc
	targetEnv []string
	boards    string // the loader's policy.fleet_file
}

// newTwoFleet starts the collector on a store of engine, nginx as c says
// in a new namespace, the target's agent in it with targetEnv over its
// settings, and the loader's, whose fleet file lists no board yet.
func newTwoFleet(t *testing.T, engine string, c testenv.NginxConfig, targetEnv ...string) *twoFleet {
	t.Helper()
	fleetBinaries(t)
	host, ns := testenv.FreeSubnet(t)
	n := testenv.NewNetns(t, testenv.NetnsConfig{HostAddr: host, Addr: ns})
	c.Netns = n
	ng := testenv.NginxWith(t, c)
	_, port, _ := net.SplitHostPort(testenv.FreeAddr(t))
	f := newTestFleetOn(t, net.JoinHostPort(n.HostAddr.String(), port), testenv.StoreDB(t, engine), "laptop:l4ptop", "pi3:p1three")
	// The target's built-in target may listen on its own address.
	targetEnv = append([]string{"EDGEBENCH_POLICY_SERVE_ALLOW=127.0.0.0/8," + n.Addr.String()}, targetEnv...)
	tf := &twoFleet{testFleet: f, tt: t, n: n, ng: ng, targetEnv: targetEnv, boards: filepath.Join(f.dir, "boards")}
	if err := os.WriteFile(tf.boards, []byte("# the lab's boards: none yet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tf.startTarget()
	f.startAgent("laptop", "l4ptop", "EDGEBENCH_POLICY_FLEET_FILE="+tf.boards)
	f.waitOnline("pi3")
	f.waitOnline("laptop")
	return tf
}

// startTarget starts the target's agent in the namespace.
func (tf *twoFleet) startTarget() {
	tf.t.Helper()
	env, conf := tf.agentEnv("pi3", "p1three", tf.targetEnv...)
	_, agentBin := fleetBinaries(tf.t)
	tf.target = startProc(tf.t, "agent pi3", env, "ip", "netns", "exec", tf.n.Name, agentBin, "agent", "--config", conf)
}

// pairRun is a trigger --wait of a run across two devices, ended.
type pairRun struct {
	id  string // the run's (its load command's)
	out string
	err error
	st  collectorStatus
}

type collectorStatus struct {
	Events  []store.Event       `json:"events"`
	Results []compare.ExportRow `json:"results"`
	Pair    *store.Pair         `json:"pair"`
}

// pair runs `trigger --device laptop --target-device pi3 --wait` with args
// and waits for it; during, when set, is called once the loader's first
// window opened.
func (tf *twoFleet) pair(during func(id string), args ...string) pairRun {
	tf.t.Helper()
	trig := tf.trigger(append([]string{"--device", "laptop", "--target-device", "pi3", "--wait", "--max-wait", "2m"}, args...)...)
	var r pairRun
	testenv.Until(tf.t, "trigger's first line", func() bool {
		line, _, _ := strings.Cut(trig.out.String(), "\n")
		if rest, ok := strings.CutPrefix(line, "run across two devices "); ok {
			r.id, _, _ = strings.Cut(rest, ":")
			return true
		}
		select {
		case <-trig.done:
			tf.t.Fatalf("trigger ended at once: %v\n%s", trig.err, trig.out.String())
		default:
		}
		return false
	})
	if during != nil {
		testenv.Until(tf.t, "the loader's first window", func() bool {
			for _, e := range tf.status(r.id).Events {
				if e.Window != nil {
					return true
				}
			}
			return false
		})
		during(r.id)
	}
	select {
	case <-trig.done:
	case <-time.After(150 * time.Second):
		tf.t.Fatalf("trigger --wait did not end:\n%s", trig.out.String())
	}
	r.out, r.err, r.st = trig.out.String(), trig.err, tf.status(r.id)
	tf.t.Logf("trigger %s: %v\n%s", strings.Join(args, " "), r.err, r.out)
	return r
}

// status is the collector's view of a command, with its pair.
func (tf *twoFleet) status(id string) collectorStatus {
	tf.t.Helper()
	var st collectorStatus
	code, body := httpGet(tf.tt, "http://"+tf.web+"/api/commands/"+id)
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil {
		tf.t.Fatalf("/api/commands/%s: %d %s", id, code, body)
	}
	return st
}

// collectorCmd runs the collector binary on the fleet's store.
func (tf *twoFleet) collectorCmd(args ...string) string {
	tf.t.Helper()
	colBin, _ := fleetBinaries(tf.t)
	out, err := exec.Command(colBin, append(args, "--db", tf.db)...).CombinedOutput()
	if err != nil {
		tf.t.Fatalf("edgebench-collector %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// failedWith checks that a run failed with a reason that says want, in
// the pair and in trigger's output and exit status, and that nothing was
// stored.
func (tf *twoFleet) failedWith(r pairRun, want string) {
	tf.t.Helper()
	p := r.st.Pair
	if p == nil || p.State != store.PairFailed || !strings.Contains(p.Reason, want) {
		tf.t.Errorf("pair %+v, want failed: %s", p, want)
	}
	if r.err == nil || !strings.Contains(r.out, "the run across two devices failed: ") || !strings.Contains(r.out, want) {
		tf.t.Errorf("trigger --wait ended %v, want the failure %q said", r.err, want)
	}
	if len(r.st.Results) != 0 {
		tf.t.Errorf("%d results stored for a run that failed", len(r.st.Results))
	}
	if out := tf.collectorCmd("runs", "--cmd", r.id, "--format", "json"); strings.TrimSpace(out) != "[]" {
		tf.t.Errorf("runs of the failed run: %s", out)
	}
}

// lastState is the last event of command id on device.
func lastState(evs []store.Event, id, device string) *store.Event {
	var last *store.Event
	for i := range evs {
		if evs[i].CommandID == id && evs[i].Device == device {
			last = &evs[i]
		}
	}
	return last
}

// TestTwoMachinesThroughTheCollector: on each store engine, a run across
// two devices refused by the loader's fleet file, then allowed by the
// file the collector writes from the devices' births; a watch refused by
// the target's policy; a run joined and stored under the target, whose
// server CPU /proc and whose requests nginx's log confirm; the built-in
// target started by trigger serve and loaded from the loader; a target that
// goes offline in the middle of its run. Each failure says why, and
// stores nothing.
func TestTwoMachinesThroughTheCollector(t *testing.T) {
	for _, engine := range testenv.StoreEngines {
		t.Run(engine, func(t *testing.T) {
			tf := newTwoFleet(t, engine, testenv.NginxConfig{Workers: 2, LogFormat: "$request", Files: map[string]int{"page": 16 << 10}},
				"EDGEBENCH_POLICY_MAX_WATCH_DURATION=2m")
			url := "http://" + tf.ng.Addr + "/page"
			nsAddr := tf.n.Addr.String()

			// The loader's fleet file lists no board: it refuses the
			// target, and the collector ends the watch it started.
			r := tf.pair(nil, "-c", "4", "-d", "2s", url)
			tf.failedWith(r, fmt.Sprintf("the loader lab/laptop rejected the load: target %s not in allowlist [127.0.0.0/8 ::1/128] nor among the 0 boards of policy.fleet_file", nsAddr))
			testenv.Until(t, "the watch cancelled", func() bool {
				w := lastState(tf.status(r.id).Events, r.st.Pair.WatchID, "pi3")
				return w != nil && w.State == wire.StateCancelled
			})

			// The fleet file from the devices' births, as the collector
			// lists them: the target's namespace address (and the
			// loader's own addresses, on this side).
			boards := tf.collectorCmd("devices", "--addresses", "--fleet", "lab")
			if !strings.Contains(boards, nsAddr+"\t# lab/pi3\n") {
				t.Fatalf("devices --addresses does not list the target's %s:\n%s", nsAddr, boards)
			}
			if err := os.WriteFile(tf.boards, []byte(boards), 0o644); err != nil {
				t.Fatal(err)
			}

			// A host that is not the target's: refused by the collector
			// before anything is sent.
			trig := tf.trigger("--device", "laptop", "--target-device", "pi3", "http://"+tf.n.HostAddr.String()+":8080/")
			<-trig.done
			if trig.err == nil || !strings.Contains(trig.out.String(), fmt.Sprintf("is not an address of the target lab/pi3, which reports %s", nsAddr)) {
				t.Errorf("a URL of another host: %v\n%s", trig.err, trig.out.String())
			}

			// A watch longer than the target's policy allows: refused by
			// the target; the load is never sent.
			r = tf.pair(nil, "-c", "4", "-d", "3m", url)
			tf.failedWith(r, "the target lab/pi3 rejected the watch: duration 3m37s over cap 2m0s (policy.max_watch_duration)")
			if l := lastState(r.st.Events, r.id, "laptop"); l != nil {
				t.Errorf("the loader got the load of a watch refused: %+v", l)
			}

			// The run: two repetitions of 3 s, joined under the target.
			ticks0, lines0 := treeTicks(t, tf.ng.Master), logLines(t, tf.ng.AccessLog)
			r = tf.pair(nil, "-c", "8", "-d", "3s", "--repeat", "2", "--label", "server=nginx", url)
			ticks, lines := treeTicks(t, tf.ng.Master)-ticks0, logLines(t, tf.ng.AccessLog)-lines0
			if r.err != nil || r.st.Pair == nil || r.st.Pair.State != store.PairSucceeded || len(r.st.Results) != 1 {
				t.Fatalf("the run: %v, pair %+v, %d results", r.err, r.st.Pair, len(r.st.Results))
			}
			res := showResult(t, tf.testFleet, r.st.Pair.ResultID)
			if res.Device != "pi3" || res.CommandID != r.id || res.Loader == nil || res.Loader.Device != "laptop" || res.Labels["server"] != "nginx" ||
				len(res.Runs) != 2 || res.Spec.URL != url {
				t.Fatalf("the joined result: %s/%s of %s, loader %+v, labels %v, %d runs", res.Fleet, res.Device, res.CommandID, res.Loader, res.Labels, len(res.Runs))
			}
			var cpuSeconds, windowSeconds float64
			var served int64
			for i, run := range res.Runs {
				if run.Window == nil || run.Window.Run != i || run.System == nil || run.Loader == nil || run.Verdict == nil {
					t.Fatalf("run %d: window %+v, target %v, loader %v, verdict %v", i, run.Window, run.System != nil, run.Loader != nil, run.Verdict)
				}
				var nginxCPU float64
				for _, p := range run.System.Summary.Procs {
					if p.Role == wire.ProcServer && p.CPUBP != nil {
						nginxCPU += float64(p.CPUBP.Mean) / 100
					}
				}
				if run.System.Procs[run.System.Summary.Procs[0].I] != "nginx" || nginxCPU <= 0 {
					t.Errorf("run %d: the target's rows %v %+v", i, run.System.Procs, run.System.Summary.Procs)
				}
				secs := float64(run.DurationUS) / 1e6
				cpuSeconds += nginxCPU / 100 * secs
				windowSeconds += secs
				served += run.Completed + run.WarmupRequests
				if run.Drained != nil {
					served += run.Drained.Completed
				}
				if p := run.Loader.Summary.Path; p == nil || p.Target != tf.ng.Addr || p.Loaded == nil {
					t.Errorf("run %d: the loader's round trip %+v", i, p)
				}
				t.Logf("run %d: %d requests in %.2f s, nginx at %.1f %% of one core; verdict %s %q", i, run.Completed, secs, nginxCPU,
					run.Verdict.LimitedBy, run.Verdict.Reasons)
			}
			// nginx's CPU in the windows is what /proc counted over the
			// whole run (the windows, and the idle round trips and drains
			// around them), within a few points of the windows' length.
			procSeconds := float64(ticks) / 100
			points := 100 * (procSeconds - cpuSeconds) / windowSeconds
			t.Logf("nginx: %.2f CPU-s by /proc over the run, %.2f in its windows by the watch (%.1f points of %.1f s)", procSeconds, cpuSeconds, points, windowSeconds)
			if points < -2 || points > 6 {
				t.Errorf("nginx's CPU: %.2f s in the windows by the watch, %.2f s by /proc over the run: %.1f points apart", cpuSeconds, procSeconds, points)
			}
			if int64(lines) != served {
				t.Errorf("nginx logged %d requests, the joined result counts %d (the windows', their warm-ups' and drains')", lines, served)
			}
			// compare lists it under the target, by device; by loader,
			// under the loader.
			for by, want := range map[string]string{"device": "lab/pi3", "loader": "lab/laptop"} {
				out := tf.collectorCmd("compare", "--by", by, "--cmd", r.id)
				if !hasRow(out, want) || strings.Contains(out, map[string]string{"device": "lab/laptop", "loader": "lab/pi3"}[by]) ||
					!strings.Contains(out, "loaded from another device") {
					t.Errorf("compare --by %s does not list the run under %s alone:\n%s", by, want, out)
				}
			}
			if !strings.Contains(r.out, "result "+res.ID+" of lab/pi3, loaded from lab/laptop") || !hasRow(r.out, "lab/pi3") {
				t.Errorf("trigger --wait does not say where the result went:\n%s", r.out)
			}

			// The built-in target started on the target from the
			// collector, on its own address, then loaded from the
			// loader: the agent itself is what the watch watches.
			serveAddr := net.JoinHostPort(nsAddr, "8081")
			trig = tf.trigger("--device", "pi3", "serve", "--addr", serveAddr, "-d", "1m", "--wait", "--max-wait", "30s")
			<-trig.done
			if trig.err != nil || !strings.Contains(trig.out.String(), "serving on http://"+serveAddr+"/") {
				t.Fatalf("trigger serve: %v\n%s", trig.err, trig.out.String())
			}
			r = tf.pair(nil, "-c", "2", "-d", "1s", "http://"+serveAddr+"/bytes/10")
			if r.err != nil || r.st.Pair == nil || r.st.Pair.State != store.PairSucceeded {
				t.Fatalf("a run against the built-in target: %v, pair %+v\n%s", r.err, r.st.Pair, r.out)
			}
			if want := fmt.Sprintf("watching what listens on port 8081: process %d", tf.target.cmd.Process.Pid); !strings.Contains(r.out, want) {
				t.Errorf("the watch of the built-in target does not say %q:\n%s", want, r.out)
			}

			// The target goes offline in the middle of a run: the run
			// fails with that reason, the loader is told to stop, and
			// nothing is stored.
			r = tf.pair(func(string) { tf.target.kill() }, "-c", "4", "-d", "20s", url)
			tf.failedWith(r, "the target lab/pi3 went offline (lost) during the run")
			testenv.Until(t, "the load cancelled", func() bool {
				l := lastState(tf.status(r.id).Events, r.id, "laptop")
				return l != nil && l.State == wire.StateCancelled
			})
		})
	}
}

// hasRow reports whether text has a line whose first field is group.
func hasRow(text, group string) bool {
	for _, line := range strings.Split(text, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == group {
			return true
		}
	}
	return false
}

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

// logLines counts the lines of an access log.
func logLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

var _ = verdict.Network
