package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/target"
	"github.com/edgebench/edgebench/wire"
)

// These tests run the fleet as a user does: the collector binary and real
// `edgebench agent` processes, over the embedded broker on loopback.

// fleetBinaries builds edgebench-collector and edgebench once.
func fleetBinaries(t testing.TB) (collectorBin, agentBin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end with processes: not in -short")
	}
	return testenv.Binary(t, "."), testenv.Binary(t, "../edgebench")
}

// proc is a process a test started; it is killed when the test ends.
type proc struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startProc(t testing.TB, name string, env []string, bin string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(bin, args...), out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.out.String())
		}
	})
	return p
}

// kill ends the process with SIGKILL and waits for it.
func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// testFleet is a collector process with its accounts, keys and folders.
type testFleet struct {
	t         testing.TB
	dir       string
	listen    string // the embedded broker
	web       string
	db        string
	accounts  string
	signKey   string   // the collector's Ed25519 private key (PEM)
	verifyKey string   // its public key, for the agents (hex)
	serveArgs []string // more flags of serve
	collector *proc
}

const testCollectorPassword = "c0llect"

// newTestFleet writes the accounts (devices pi-1, pi-2 of fleet lab, with
// passwords one and two) and an Ed25519 key pair, and starts the
// collector process.
func newTestFleet(t *testing.T) *testFleet { return newTestFleetWith(t, "") }

// newTestFleetWith is newTestFleet with more device accounts (lines of
// the accounts file's devices) and more flags of serve.
func newTestFleetWith(t *testing.T, devices string, serveArgs ...string) *testFleet {
	t.Helper()
	return newTestFleetConf(t, testenv.FreeAddr(t), "", []string{"pi-1:one", "pi-2:two"}, devices, serveArgs)
}

// newTestFleetOn is newTestFleet with the embedded broker on listen, the
// store db (default a SQLite file of the test's) and the devices
// (id:password) of fleet lab.
func newTestFleetOn(t *testing.T, listen, db string, devices ...string) *testFleet {
	t.Helper()
	return newTestFleetConf(t, listen, db, devices, "", nil)
}

// newTestFleetConf starts a fleet's collector: its broker on listen, its
// store db (default a SQLite file of the test's), the devices
// (id:password) of fleet lab and more lines of the accounts file's
// devices, and more flags of serve.
func newTestFleetConf(t *testing.T, listen, db string, devices []string, more string, serveArgs []string) *testFleet {
	t.Helper()
	fleetBinaries(t)
	// The schedules of the tests fire every second or two.
	serveArgs = append([]string{"--schedule-min-every", "1s"}, serveArgs...)
	f := &testFleet{t: t, dir: t.TempDir(), listen: listen, web: testenv.FreeAddr(t), db: db, serveArgs: serveArgs}
	if f.db == "" {
		f.db = filepath.Join(f.dir, "edgebench.db")
	}
	f.accounts = filepath.Join(f.dir, "accounts.yaml")
	accounts := "collector: {username: collector, password: " + testCollectorPassword + "}\ndevices:\n"
	for _, d := range devices {
		id, pw, _ := strings.Cut(d, ":")
		accounts += fmt.Sprintf("  - {fleet: lab, id: %s, password: %s}\n", id, pw)
	}
	os.WriteFile(f.accounts, []byte(accounts+more), 0o600)
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	f.signKey = filepath.Join(f.dir, "collector.key")
	os.WriteFile(f.signKey, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	f.verifyKey = filepath.Join(f.dir, "collector.pub")
	os.WriteFile(f.verifyKey, []byte(hex.EncodeToString(pub)+"\n"), 0o644)
	f.startCollector()
	return f
}

func (f *testFleet) startCollector() {
	f.t.Helper()
	colBin, _ := fleetBinaries(f.t)
	f.collector = startProc(f.t, "collector", nil, colBin, append([]string{"serve", "--db", f.db, "--listen", f.listen, "--web", f.web,
		"--accounts", f.accounts, "--sign-ed25519-key-file", f.signKey, "--log-level", "debug"}, f.serveArgs...)...)
	testenv.Until(f.t, "the collector's web API", func() bool {
		resp, err := http.Get("http://" + f.web + "/api/devices")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
}

// startAgent starts `edgebench agent` as device id of fleet lab, with its
// own state folder (kept across restarts of the same device).
func (f *testFleet) startAgent(id, password string, env ...string) *proc {
	f.t.Helper()
	env, conf := f.agentEnv(id, password, env...)
	_, agentBin := fleetBinaries(f.t)
	return startProc(f.t, "agent "+id, env, agentBin, "agent", "--config", conf)
}

// agentEnv is the environment and configuration file of the agent of
// device id, with env's settings over the fleet's.
func (f *testFleet) agentEnv(id, password string, env ...string) ([]string, string) {
	f.t.Helper()
	state := filepath.Join(f.dir, "agent-"+id)
	os.MkdirAll(state, 0o755)
	env = append([]string{
		"EDGEBENCH_BROKER_URL=tcp://" + f.listen, "EDGEBENCH_FLEET=lab", "EDGEBENCH_DEVICE_ID=" + id,
		"EDGEBENCH_BROKER_USERNAME=" + id, "EDGEBENCH_BROKER_PASSWORD=" + password,
		"EDGEBENCH_STATE_DIR=" + state, "EDGEBENCH_SPOOL_DIR=" + filepath.Join(state, "spool"),
		"EDGEBENCH_SIGNING_ED25519_PUBLIC_KEY_FILE=" + f.verifyKey, "EDGEBENCH_HEARTBEAT_INTERVAL=1s",
		"EDGEBENCH_LOG_LEVEL=debug",
	}, env...)
	conf := filepath.Join(state, "agent.yaml")
	os.WriteFile(conf, nil, 0o644) // everything from the environment
	return env, conf
}

// devices lists the devices the collector knows.
func (f *testFleet) devices() []store.Device {
	f.t.Helper()
	resp, err := http.Get("http://" + f.web + "/api/devices")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var devs []store.Device
	json.NewDecoder(resp.Body).Decode(&devs)
	return devs
}

func (f *testFleet) waitOnline(id string) {
	f.t.Helper()
	testenv.Until(f.t, id+" online", func() bool {
		for _, d := range f.devices() {
			if d.ID == id && d.Online {
				return true
			}
		}
		return false
	})
}

// commandStatus is the collector's view of a command.
func (f *testFleet) commandStatus(id string) collector.CommandStatus {
	f.t.Helper()
	var st collector.CommandStatus
	resp, err := http.Get("http://" + f.web + "/api/commands/" + id)
	if err != nil {
		return st
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(&st)
	return st
}

// trigger runs `edgebench-collector trigger` with args and returns the
// process (its output is in p.out).
func (f *testFleet) trigger(args ...string) *proc {
	f.t.Helper()
	colBin, _ := fleetBinaries(f.t)
	return startProc(f.t, "trigger", nil, colBin, append([]string{"trigger", "--server", "http://" + f.web}, args...)...)
}

// httpTarget is the built-in target on loopback, for the agents to load.
func httpTarget(t testing.TB) string {
	t.Helper()
	srv, err := target.Start("127.0.0.1:0", "edgebench/fleet", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return "http://" + srv.Addr()
}

// commandID reads the command id from trigger's first line.
func commandID(t testing.TB, p *proc) string {
	t.Helper()
	var id string
	testenv.Until(t, "trigger's first line", func() bool {
		line, _, _ := strings.Cut(p.out.String(), "\n")
		if rest, ok := strings.CutPrefix(line, "command "); ok {
			id, _, _ = strings.Cut(rest, " ")
			return true
		}
		return false
	})
	return id
}

// TestTriggerWaitEndsWhenTheAgentIsKilled: kill -9 of the agent in the
// middle of a run, then a restart: the restarted agent's "failed:
// interrupted" event reaches the store (it was dropped as a duplicate of
// the run's first event), and `trigger --wait` ends with it instead of
// waiting for --max-wait. The command is signed by the collector and
// checked by the agent on the way.
func TestTriggerWaitEndsWhenTheAgentIsKilled(t *testing.T) {
	f := newTestFleet(t)
	url := httpTarget(t)
	agent := f.startAgent("pi-1", "one")
	f.waitOnline("pi-1")
	trig := f.trigger("--device", "pi-1", "--fleet", "lab", "-c", "2", "-d", "30s", "--wait", "--max-wait", "90s", url+"/bytes/64")
	id := commandID(t, trig)
	testenv.Until(t, "the run to start", func() bool {
		for _, e := range f.commandStatus(id).Events {
			if e.State == wire.StateRunning {
				return true
			}
		}
		return false
	})
	agent.kill()
	f.startAgent("pi-1", "one")
	select {
	case <-trig.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("trigger --wait still waiting a minute after the restart:\n%s", trig.out.String())
	}
	out := trig.out.String()
	if !strings.Contains(out, "lab/pi-1: failed (interrupted") {
		t.Errorf("trigger --wait did not report the interrupted run:\n%s", out)
	}
	evs := f.commandStatus(id).Events
	if last := evs[len(evs)-1]; last.State != wire.StateFailed || last.Seq != wire.SeqInterrupted {
		t.Errorf("last event %+v, want failed with seq %d", last, wire.SeqInterrupted)
	}
	t.Log("\n" + out)
}

// TestRunPublishWithTheAccountsFile: `edgebench run --publish` logs in
// with the device's account of the accounts file (it was refused: its
// client id was not the device's), and a wrong password is reported as
// the broker refusing the login, not as the network. The agent says the
// same in its log.
func TestRunPublishWithTheAccountsFile(t *testing.T) {
	f := newTestFleet(t)
	_, agentBin := fleetBinaries(t)
	url := httpTarget(t)
	conf := filepath.Join(f.dir, "empty.yaml")
	os.WriteFile(conf, nil, 0o644)
	publish := func(password string) (string, int) {
		cmd := exec.Command(agentBin, "run", "-n", "50", "-c", "2", "--publish", "--broker", "tcp://"+f.listen,
			"--fleet", "lab", "--device", "pi-1", "--username", "pi-1", "--password", password,
			"--spool", filepath.Join(f.dir, "spool"), "--agent-config", conf, "--publish-timeout", "5s", url+"/bytes/10")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stderr.String(), code
	}
	if out, code := publish("one"); code != 0 || !strings.Contains(out, "acknowledged by the collector") {
		t.Errorf("run --publish with the device's account: exit %d\n%s", code, out)
	}
	out, code := publish("wrong")
	if code == 0 || !strings.Contains(out, "the broker refused the login") || strings.Contains(out, "not reachable") {
		t.Errorf("run --publish with a wrong password: exit %d, want the refused login said\n%s", code, out)
	}
	agent := f.startAgent("pi-2", "wrong")
	testenv.Until(t, "the agent's warning", func() bool {
		return strings.Contains(agent.out.String(), "cannot connect to the broker; retrying")
	})
	if out := agent.out.String(); !strings.Contains(out, "the broker refused the login") || !strings.Contains(out, f.listen) {
		t.Errorf("the agent's log does not say the login was refused, and where:\n%s", out)
	}
}

// TestChangedDeviceIDLeavesNoPoison: a device renamed from pi-1 to pi-2
// keeps its spool, with a result of pi-1 in it, and an entry whose bytes
// do not decode. The agent moves both to rejected/ on its first replay,
// instead of sending them every minute forever, and its heartbeat counts
// them.
func TestChangedDeviceIDLeavesNoPoison(t *testing.T) {
	f := newTestFleet(t)
	spoolDir := filepath.Join(f.dir, "agent-pi-2", "spool")
	sp, err := spool.Open(spoolDir, spool.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	old := &wire.Result{V: wire.SchemaVersion, ID: wire.NewID(), Fleet: "lab", Device: "pi-1", CreatedAt: time.Now().UTC(),
		Outcome: wire.StateSucceeded, Runs: []wire.Run{{StartedAt: time.Now().UTC(), DocLength: -1}}}
	raw, _ := old.MarshalMsg(nil)
	garbage := wire.NewID()
	if err := sp.Put(old.ID, raw); err != nil {
		t.Fatal(err)
	}
	if err := sp.Put(garbage, []byte{0x81, 0xa2, 'i', 'd', 0xc1}); err != nil {
		t.Fatal(err)
	}
	agent := f.startAgent("pi-2", "two")
	testenv.Until(t, "pi-2's heartbeat to count 2 rejected results", func() bool {
		for _, d := range f.devices() {
			if d.ID == "pi-2" && d.Heartbeat != nil && d.Heartbeat.Rejected == 2 && d.Heartbeat.Spooled == 0 {
				return true
			}
		}
		return false
	})
	if m, _ := filepath.Glob(filepath.Join(spoolDir, "rejected", "*.msg")); len(m) != 2 {
		t.Errorf("rejected/ holds %v, want the 2 entries", m)
	}
	if out := agent.out.String(); !strings.Contains(out, "result of lab/pi-1, this device is lab/pi-2") {
		t.Errorf("the agent does not say why it set pi-1's result aside:\n%s", out)
	}
}

// fullDisk returns the command prefix that runs a program with dir on a
// tmpfs of its own that is full: a user and mount namespace (unshare -rm)
// mounts it and fills it before the program starts. Without unshare, or
// where namespaces are not allowed, the test is skipped (failed in CI).
func fullDisk(t *testing.T, dir string) []string {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err == nil {
		err = exec.Command(unshare, "-rm", "sh", "-c", "mount -t tmpfs -o size=16k tmpfs "+dir).Run()
	}
	if err != nil {
		testenv.Missing(t, fmt.Sprintf("unshare -rm with a tmpfs mount failed (%v)", err), "allow user namespaces; util-linux's unshare")
	}
	return []string{unshare, "-rm", "sh", "-c", `mount -t tmpfs -o size=16k tmpfs "$0" && (cat /dev/zero > "$0/fill") 2>/dev/null; exec "$@"`, dir}
}

// TestFullDiskStillDeliversTheResult: the agent's spool is on a full disk.
// Its result is published anyway and kept in memory until the collector
// acknowledges it (it was discarded: "failed: result not stored"), and the
// final event says the spool failed.
func TestFullDiskStillDeliversTheResult(t *testing.T) {
	f := newTestFleet(t)
	_, agentBin := fleetBinaries(t)
	url := httpTarget(t)
	state := filepath.Join(f.dir, "agent-pi-1")
	spool := filepath.Join(state, "spool")
	os.MkdirAll(spool, 0o755)
	conf := filepath.Join(state, "agent.yaml")
	os.WriteFile(conf, nil, 0o644)
	wrap := fullDisk(t, spool)
	env := []string{"EDGEBENCH_BROKER_URL=tcp://" + f.listen, "EDGEBENCH_FLEET=lab", "EDGEBENCH_DEVICE_ID=pi-1",
		"EDGEBENCH_BROKER_USERNAME=pi-1", "EDGEBENCH_BROKER_PASSWORD=one", "EDGEBENCH_STATE_DIR=" + state,
		"EDGEBENCH_SPOOL_DIR=" + spool, "EDGEBENCH_SIGNING_ED25519_PUBLIC_KEY_FILE=" + f.verifyKey}
	agent := startProc(t, "agent pi-1", env, wrap[0], append(wrap[1:], agentBin, "agent", "--config", conf)...)
	f.waitOnline("pi-1")
	trig := f.trigger("--device", "pi-1", "--fleet", "lab", "-c", "2", "-d", "1s", "--wait", "--max-wait", "60s", url+"/bytes/64")
	id := commandID(t, trig)
	select {
	case <-trig.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("trigger --wait did not end:\n%s", trig.out.String())
	}
	st := f.commandStatus(id)
	last := st.Events[len(st.Events)-1]
	if last.State != wire.StateSucceeded || !strings.Contains(last.Reason, "no space left on device") || len(st.Results) != 1 {
		t.Errorf("last event %s %q, %d results stored; want succeeded, the spool's failure said, the result stored\n%s",
			last.State, last.Reason, len(st.Results), trig.out.String())
	}
	if out := agent.out.String(); !strings.Contains(out, "kept in memory") {
		t.Errorf("the agent's log does not say the result was kept in memory:\n%s", out)
	}
	t.Log("\n" + trig.out.String())
}
