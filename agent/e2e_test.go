package agent

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/sign"
	"github.com/edgebench/edgebench/target"
	"github.com/edgebench/edgebench/wire"
)

// These tests run the real `edgebench agent` process against a real broker
// (mochi, in process, over TCP on loopback) and play the collector with a
// plain MQTT client: commands in, events, results and acks out.

// fleetSide is the test's collector: it sees every event and result.
type fleetSide struct {
	t       *testing.T
	c       paho.Client
	mu      sync.Mutex
	events  map[string][]*wire.Event
	results map[string]*wire.Result
	status  *wire.Status
	births  map[string]*wire.Status // the last status of each device
	changed chan struct{}
	ack     bool
}

func newFleetSide(t *testing.T, broker string) *fleetSide {
	f := &fleetSide{t: t, events: map[string][]*wire.Event{}, results: map[string]*wire.Result{},
		births: map[string]*wire.Status{}, changed: make(chan struct{}, 1), ack: true}
	subs := map[string]func(paho.Message){
		"edgebench/v1/+/+/event": func(m paho.Message) {
			ev, err := wire.DecodeEvent(m.Payload())
			if err != nil {
				t.Errorf("bad event: %v", err)
				return
			}
			// paho runs each handler in a goroutine of its own
			// (SetOrderMatters(false)): keep a command's events in
			// their Seq order, not in the order their handlers ran.
			f.mu.Lock()
			evs := f.events[ev.CommandID]
			i := slices.IndexFunc(evs, func(e *wire.Event) bool { return e.Seq > ev.Seq })
			if i < 0 {
				i = len(evs)
			}
			f.events[ev.CommandID] = slices.Insert(evs, i, ev)
			f.mu.Unlock()
			f.poke()
		},
		"edgebench/v1/+/+/result": func(m paho.Message) {
			r, err := wire.DecodeResult(m.Payload())
			if err != nil {
				t.Errorf("bad result: %v", err)
				return
			}
			f.mu.Lock()
			f.results[r.ID] = r
			ack := f.ack
			f.mu.Unlock()
			if ack {
				b, _ := (&wire.Ack{V: wire.SchemaVersion, ResultID: r.ID}).MarshalMsg(nil)
				f.c.Publish("edgebench/v1/"+r.Fleet+"/"+r.Device+"/ack", 1, false, b)
			}
			f.poke()
		},
		"edgebench/v1/+/+/status": func(m paho.Message) {
			st, err := wire.DecodeStatus(m.Payload())
			if err != nil {
				return
			}
			f.mu.Lock()
			f.status = st
			if parts := strings.Split(m.Topic(), "/"); len(parts) == 5 {
				f.births[parts[3]] = st
			}
			f.mu.Unlock()
			f.poke()
		},
	}
	// What the collector's side saw of its connection goes to the test's
	// log while the test runs (a lost connection explains a lost event).
	var over atomic.Bool
	logf := func(format string, args ...any) {
		if !over.Load() {
			t.Logf(format, args...)
		}
	}
	subscribed := make(chan error, 1)
	opts := paho.NewClientOptions().AddBroker(broker).SetClientID("test-collector").SetCleanSession(true).
		SetOrderMatters(false).
		SetConnectionLostHandler(func(_ paho.Client, err error) { logf("collector side: connection lost: %v", err) }).
		// The session is clean: subscribe on every connection, so that
		// a reconnected collector side still hears the devices.
		SetOnConnectHandler(func(c paho.Client) {
			var err error
			for topic, fn := range subs {
				tok := c.Subscribe(topic, 1, func(_ paho.Client, m paho.Message) { fn(m) })
				if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
					err = fmt.Errorf("subscribe %s: %v", topic, tok.Error())
					logf("collector side: %v", err)
					break
				}
			}
			select {
			case subscribed <- err:
			default:
			}
		})
	f.c = paho.NewClient(opts)
	if tok := f.c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("collector connect: %v", tok.Error())
	}
	t.Cleanup(func() { over.Store(true); f.c.Disconnect(100) })
	select {
	case err := <-subscribed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("collector side: not subscribed in 20 s")
	}
	return f
}

func (f *fleetSide) poke() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// waitFor waits up to d for cond, checked after every message.
func (f *fleetSide) waitFor(d time.Duration, what string, cond func() bool) {
	f.t.Helper()
	deadline := time.After(d)
	for {
		f.mu.Lock()
		ok := cond()
		f.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-f.changed:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			f.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (f *fleetSide) send(device string, cmd *wire.Command) {
	f.t.Helper()
	b, err := cmd.MarshalMsg(nil)
	if err != nil {
		f.t.Fatal(err)
	}
	f.sendRaw(device, b)
}

func (f *fleetSide) sendRaw(device string, b []byte) { f.sendRawWithin(device, b, 10*time.Second) }

// sendRawWithin publishes b as a command to device, waiting at most d for
// the broker's acknowledgement.
func (f *fleetSide) sendRawWithin(device string, b []byte, d time.Duration) {
	f.t.Helper()
	if tok := f.c.Publish("edgebench/v1/lab/"+device+"/cmd", 1, false, b); !tok.WaitTimeout(d) || tok.Error() != nil {
		f.t.Fatalf("publish command: not acknowledged within %v (%v)", d, tok.Error())
	}
}

// terminal is the last event of a command once it is terminal.
// eventsOf is a copy of command id's events so far, for reading outside
// waitFor's condition while the handlers add more.
func (f *fleetSide) eventsOf(id string) []*wire.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.events[id])
}

func (f *fleetSide) terminal(id string) *wire.Event {
	evs := f.events[id]
	if len(evs) > 0 && evs[len(evs)-1].State.Terminal() {
		return evs[len(evs)-1]
	}
	return nil
}

func (f *fleetSide) states(id string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var s []string
	for _, e := range f.events[id] {
		s = append(s, string(e.State))
	}
	return strings.Join(s, ",")
}

func loadCmd(url string, d time.Duration, conns int) *wire.Command {
	now := time.Now().UTC()
	return &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), IssuedAt: now, ExpiresAt: now.Add(time.Minute),
		Kind: wire.KindLoadTest, Spec: wire.CommandSpec{LoadTest: &wire.LoadTestSpec{
			URL: url, Connections: conns, DurationMS: d.Milliseconds(), KeepAlive: true,
			Labels: []wire.Label{{K: "case", V: "e2e"}}}}}
}

// agentProc is a running `edgebench agent`.
type agentProc struct {
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	lw     *lockedWriter
	done   chan error
}

// output is what the agent has written to stderr so far.
func (p *agentProc) output() string {
	p.lw.mu.Lock()
	defer p.lw.mu.Unlock()
	return p.stderr.String()
}

func startAgent(t *testing.T, broker, stateDir string, extraEnv ...string) *agentProc {
	t.Helper()
	return startAgentAs(t, exec.Command, "pi1", broker, stateDir, extraEnv...)
}

// startAgentAs starts `edgebench agent` as device, through command
// (exec.Command, or a network namespace's Command).
func startAgentAs(t *testing.T, command func(string, ...string) *exec.Cmd, device, broker, stateDir string, extraEnv ...string) *agentProc {
	t.Helper()
	cmd := command(testenv.Binary(t, "../cmd/edgebench"), "agent", "--config", filepath.Join(stateDir, "none.yaml"))
	os.WriteFile(filepath.Join(stateDir, "none.yaml"), []byte("log_level: debug\n"), 0o644)
	cmd.Env = append(os.Environ(),
		"EDGEBENCH_BROKER_URL="+broker, "EDGEBENCH_DEVICE_ID="+device, "EDGEBENCH_FLEET=lab",
		"EDGEBENCH_STATE_DIR="+stateDir, "EDGEBENCH_SPOOL_DIR="+filepath.Join(stateDir, "spool"),
		"EDGEBENCH_LABELS=server=builtin", "EDGEBENCH_HEARTBEAT_INTERVAL=1s", "EDGEBENCH_POLICY_MAX_CONNECTIONS=64")
	cmd.Env = append(cmd.Env, extraEnv...)
	p := &agentProc{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	p.lw = &lockedWriter{w: p.stderr}
	cmd.Stderr = p.lw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("agent stderr:\n%s", p.stderr)
		}
	})
	return p
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

func spooled(t *testing.T, stateDir string) int {
	m, _ := filepath.Glob(filepath.Join(stateDir, "spool", "*.msg"))
	return len(m)
}

// e2e starts what every end-to-end test needs: a broker, the built-in
// target (returning the URL of path on it), the collector's side, and a
// state folder for the agent.
func e2e(t *testing.T, path string) (broker, url string, fleet *fleetSide, state string) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: not in -short")
	}
	broker = testenv.StartBroker(t).URL()
	tgt, err := target.Start("127.0.0.1:0", "edgebench/e2e", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tgt.Close() })
	return broker, "http://" + tgt.Addr() + path, newFleetSide(t, broker), t.TempDir()
}

func TestAgentEndToEnd(t *testing.T) {
	broker, url, fleet, state := e2e(t, "/bytes/512")

	// systemd's notify protocol: READY=1 once connected.
	sockPath := filepath.Join(state, "notify.sock")
	notify, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sockPath, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer notify.Close()
	notes := make(chan string, 64)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := notify.Read(buf)
			if err != nil {
				close(notes)
				return
			}
			notes <- string(buf[:n])
		}
	}()
	agent := startAgent(t, broker, state, "NOTIFY_SOCKET="+sockPath)
	fleet.waitFor(20*time.Second, "the birth status", func() bool {
		return fleet.status != nil && fleet.status.State == wire.StatusOnline
	})
	if info := fleet.status.Info; info == nil || info.AgentVersion == "" || info.Labels["server"] != "builtin" || info.Cores == 0 {
		t.Errorf("birth info: %+v", fleet.status.Info)
	}
	waitNote(t, notes, "READY=1")

	// A load test, end to end: events in order, the result, the ack.
	cmd := loadCmd(url, time.Second, 4)
	fleet.send("pi1", cmd)
	fleet.waitFor(30*time.Second, "the load test's end", func() bool { return fleet.terminal(cmd.ID) != nil })
	last := fleet.terminal(cmd.ID)
	if last.State != wire.StateSucceeded || last.ResultID == "" {
		t.Fatalf("load test ended %s (%s): %s", last.State, last.Reason, fleet.states(cmd.ID))
	}
	states := fleet.states(cmd.ID)
	if !strings.HasPrefix(states, "accepted,running") || !strings.HasSuffix(states, "succeeded") {
		t.Errorf("events %s", states)
	}
	fleet.mu.Lock()
	for i, e := range fleet.events[cmd.ID] {
		if int(e.Seq) != i+1 {
			t.Errorf("event %d has seq %d", i, e.Seq)
		}
	}
	fleet.mu.Unlock()
	fleet.waitFor(10*time.Second, "the result", func() bool { return fleet.results[last.ResultID] != nil })
	res := fleet.results[last.ResultID]
	if len(res.Runs) != 1 || res.Runs[0].OK == 0 || res.Labels["case"] != "e2e" || res.Labels["server"] != "builtin" ||
		res.Fingerprint.Server != "edgebench/e2e" || res.Runs[0].System == nil {
		t.Errorf("result %+v", res)
	}
	waitSpoolEmpty(t, state)

	// Commands that must be refused, each with its reason, nothing run.
	expired := loadCmd(url, time.Second, 4)
	expired.IssuedAt, expired.ExpiresAt = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	unknown := loadCmd(url, time.Second, 4)
	unknown.Kind = "format-disk"
	for _, c := range []struct {
		cmd    *wire.Command
		reason string
	}{
		{loadCmd("http://10.0.0.1/", time.Second, 4), "allowlist"},
		{loadCmd(url, time.Second, 5000), "connections"},
		{expired, "expire"},
		{unknown, `kind "format-disk"`},
	} {
		fleet.send("pi1", c.cmd)
		fleet.waitFor(10*time.Second, "rejection of "+c.reason, func() bool { return fleet.terminal(c.cmd.ID) != nil })
		ev := fleet.terminal(c.cmd.ID)
		if ev.State != wire.StateRejected || !strings.Contains(ev.Reason, c.reason) {
			t.Errorf("%s: %s %q", c.reason, ev.State, ev.Reason)
		}
	}
	fleet.sendRaw("pi1", []byte{0x81, 0xa1, 'v', 0xcd}) // a truncated payload
	// A replay of the first command: ignored, no new event.
	before := len(fleet.states(cmd.ID))
	fleet.send("pi1", cmd)

	// The agent still works after all that.
	next := loadCmd(url, 500*time.Millisecond, 2)
	fleet.send("pi1", next)
	fleet.waitFor(30*time.Second, "the next run", func() bool { return fleet.terminal(next.ID) != nil })
	if ev := fleet.terminal(next.ID); ev.State != wire.StateSucceeded {
		t.Errorf("after the refusals: %s %q", ev.State, ev.Reason)
	}
	if after := len(fleet.states(cmd.ID)); after != before {
		t.Errorf("the replay got events: %s", fleet.states(cmd.ID))
	}

	// SIGTERM in the middle of a run: cancelled, its result published,
	// STOPPING=1, and the process ends within seconds.
	long := loadCmd(url, 30*time.Second, 2)
	fleet.send("pi1", long)
	fleet.waitFor(10*time.Second, "the long run to start", func() bool {
		evs := fleet.events[long.ID]
		return len(evs) > 0 && evs[len(evs)-1].State == wire.StateRunning
	})
	agent.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-agent.done:
	case <-time.After(15 * time.Second):
		t.Fatal("the agent did not stop within 15 s of SIGTERM")
	}
	agent.done <- nil // for the cleanup
	waitNote(t, notes, "STOPPING=1")
	fleet.waitFor(10*time.Second, "the cancelled run's end", func() bool { return fleet.terminal(long.ID) != nil })
	if ev := fleet.terminal(long.ID); ev.State != wire.StateCancelled || ev.ResultID == "" {
		t.Errorf("after SIGTERM: %s %q result %q", ev.State, ev.Reason, ev.ResultID)
	}
}

func waitNote(t *testing.T, notes <-chan string, want string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case n, ok := <-notes:
			if !ok {
				t.Fatalf("notify socket closed before %s", want)
			}
			if strings.Contains(n, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no %s on NOTIFY_SOCKET", want)
		}
	}
}

func waitSpoolEmpty(t *testing.T, state string) {
	t.Helper()
	for range 100 {
		if spooled(t, state) == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("%d results still in the spool after their ack", spooled(t, state))
}

// TestAgentKilledMidRun kills the agent with SIGKILL during a run: after a
// restart the run is reported failed, and the next command runs.
func TestAgentKilledMidRun(t *testing.T) {
	broker, url, fleet, state := e2e(t, "/bytes/64")
	first := startAgent(t, broker, state)
	fleet.waitFor(20*time.Second, "the birth", func() bool { return fleet.status != nil && fleet.status.State == wire.StatusOnline })
	long := loadCmd(url, 30*time.Second, 2)
	fleet.send("pi1", long)
	fleet.waitFor(10*time.Second, "the run to start", func() bool {
		evs := fleet.events[long.ID]
		return len(evs) > 0 && evs[len(evs)-1].State == wire.StateRunning
	})
	first.cmd.Process.Kill()
	<-first.done
	first.done <- nil
	fleet.mu.Lock()
	fleet.status = nil
	fleet.mu.Unlock()

	startAgent(t, broker, state)
	fleet.waitFor(20*time.Second, "the killed run reported failed", func() bool { return fleet.terminal(long.ID) != nil })
	if ev := fleet.terminal(long.ID); ev.State != wire.StateFailed || ev.Reason != InterruptedReason || ev.Seq != wire.SeqInterrupted {
		t.Errorf("after the restart: %s %q seq %d", ev.State, ev.Reason, ev.Seq)
	}
	next := loadCmd(url, 500*time.Millisecond, 2)
	fleet.send("pi1", next)
	fleet.waitFor(30*time.Second, "the next run", func() bool { return fleet.terminal(next.ID) != nil })
	if ev := fleet.terminal(next.ID); ev.State != wire.StateSucceeded {
		t.Errorf("the next run: %s %q", ev.State, ev.Reason)
	}
	if entries, _ := os.ReadDir(filepath.Join(state, "spool", "torn")); len(entries) > 0 {
		t.Errorf("torn spool entries after a kill: %d", len(entries))
	}
}

// TestAgentSignedCommands: a device with an HMAC key rejects unsigned and
// badly signed commands, each with its reason, and runs a signed one.
func TestAgentSignedCommands(t *testing.T) {
	broker, url, fleet, state := e2e(t, "/bytes/64")
	key := bytes.Repeat([]byte{0x5a}, 32)
	keyFile := filepath.Join(state, "hmac.key")
	os.WriteFile(keyFile, []byte(fmt.Sprintf("%x\n", key)), 0o600)
	startAgent(t, broker, state, "EDGEBENCH_SIGNING_HMAC_KEY_FILE="+keyFile)
	fleet.waitFor(20*time.Second, "the birth", func() bool { return fleet.status != nil && fleet.status.State == wire.StatusOnline })

	signer, err := sign.NewHMACSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	wrong, _ := sign.NewHMACSigner(bytes.Repeat([]byte{0x11}, 32))
	sign := func(s sign.Signer, c *wire.Command) *wire.Command {
		msg, err := c.SigningBytes("lab", "pi1")
		if err != nil {
			t.Fatal(err)
		}
		c.Sig = s.Sign(msg)
		return c
	}
	unsigned := loadCmd(url, 300*time.Millisecond, 2)
	badly := sign(wrong, loadCmd(url, 300*time.Millisecond, 2))
	tampered := sign(signer, loadCmd(url, 300*time.Millisecond, 2))
	tampered.Spec.LoadTest.Connections = 60 // changed after signing
	for _, c := range []struct {
		cmd  *wire.Command
		want string
	}{{unsigned, "signature"}, {badly, "bad signature"}, {tampered, "bad signature"}} {
		fleet.send("pi1", c.cmd)
		fleet.waitFor(10*time.Second, "rejection: "+c.want, func() bool { return fleet.terminal(c.cmd.ID) != nil })
		if ev := fleet.terminal(c.cmd.ID); ev.State != wire.StateRejected || !strings.Contains(ev.Reason, c.want) {
			t.Errorf("%s: %s %q", c.want, ev.State, ev.Reason)
		}
	}
	good := sign(signer, loadCmd(url, 300*time.Millisecond, 2))
	fleet.send("pi1", good)
	fleet.waitFor(20*time.Second, "the signed run", func() bool { return fleet.terminal(good.ID) != nil })
	if ev := fleet.terminal(good.ID); ev.State != wire.StateSucceeded {
		t.Errorf("signed command: %s %q", ev.State, ev.Reason)
	}
}

// TestAgentSignatureBoundToItsTarget: a command signed for another device,
// another fleet, or for one device and sent to the fleet's _all topic is
// refused; signed for where it is sent, the device's topic or _all with a
// selector, it runs.
func TestAgentSignatureBoundToItsTarget(t *testing.T) {
	broker, url, fleet, state := e2e(t, "/bytes/64")
	key := bytes.Repeat([]byte{0x5a}, 32)
	keyFile := filepath.Join(state, "hmac.key")
	os.WriteFile(keyFile, []byte(fmt.Sprintf("%x\n", key)), 0o600)
	startAgent(t, broker, state, "EDGEBENCH_SIGNING_HMAC_KEY_FILE="+keyFile)
	fleet.waitFor(20*time.Second, "the birth", func() bool { return fleet.status != nil && fleet.status.State == wire.StatusOnline })
	signer, err := sign.NewHMACSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	signFor := func(fl, dev string, c *wire.Command) *wire.Command {
		msg, err := c.SigningBytes(fl, dev)
		if err != nil {
			t.Fatal(err)
		}
		c.Sig = signer.Sign(msg)
		return c
	}
	for _, c := range []struct {
		what    string
		cmd     *wire.Command
		sendTo  string
		succeed bool
	}{
		{"signed for lab/pi-s, sent to lab/pi1", signFor("lab", "pi-s", loadCmd(url, 300*time.Millisecond, 2)), "pi1", false},
		{"signed for lab2/pi1, sent to lab/pi1", signFor("lab2", "pi1", loadCmd(url, 300*time.Millisecond, 2)), "pi1", false},
		{"signed for lab/_all, sent to lab/pi1", signFor("lab", wire.AllDevices, loadCmd(url, 300*time.Millisecond, 2)), "pi1", false},
		{"signed for lab/pi1, sent to lab/_all", signFor("lab", "pi1", loadCmd(url, 300*time.Millisecond, 2)), wire.AllDevices, false},
		{"signed for lab/pi1, sent to lab/pi1", signFor("lab", "pi1", loadCmd(url, 300*time.Millisecond, 2)), "pi1", true},
		{"signed for lab/_all, sent to lab/_all", signFor("lab", wire.AllDevices, loadCmd(url, 300*time.Millisecond, 2)), wire.AllDevices, true},
	} {
		fleet.send(c.sendTo, c.cmd)
		fleet.waitFor(20*time.Second, c.what, func() bool { return fleet.terminal(c.cmd.ID) != nil })
		ev := fleet.terminal(c.cmd.ID)
		switch {
		case c.succeed && ev.State != wire.StateSucceeded:
			t.Errorf("%s: %s %q, want succeeded", c.what, ev.State, ev.Reason)
		case !c.succeed && (ev.State != wire.StateRejected || ev.Reason != sign.ErrBadSignature.Error()):
			t.Errorf("%s: %s %q, want rejected for a bad signature", c.what, ev.State, ev.Reason)
		}
	}
	// The selector is signed too: changed on the way, it no longer verifies.
	sel := loadCmd(url, 300*time.Millisecond, 2)
	sel.Select = []wire.Label{{K: "server", V: "nginx"}}
	signFor("lab", wire.AllDevices, sel)
	sel.Select = []wire.Label{{K: "server", V: "builtin"}}
	fleet.send(wire.AllDevices, sel)
	fleet.waitFor(20*time.Second, "the re-selected command", func() bool { return fleet.terminal(sel.ID) != nil })
	if ev := fleet.terminal(sel.ID); ev.State != wire.StateRejected {
		t.Errorf("a selector changed after signing: %s %q", ev.State, ev.Reason)
	}
}
