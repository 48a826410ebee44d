package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

func TestMain(m *testing.M) {
	// No collector a test starts reads /etc's configuration, which a
	// machine with the package has (and TestDeb installs for a while).
	os.Setenv(configEnv, os.DevNull)
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		testenv.RemoveBinaries() // the binaries the tests ran as processes
		testenv.StopPostgres()
		os.Exit(code)
	}))
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"nope"},
		{"serve", "--bogus"},
		{"serve"}, // no accounts, no broker
		{"serve", "--share", "g", "--accounts", "x"},
		{"serve", "--accounts", "x", "--sign-hmac-key-file", "a", "--sign-ed25519-key-file", "b"},
		{"trigger", "http://127.0.0.1/"},
		{"trigger", "--device", "pi-1", "ftp://x/"},
		{"trigger", "--device", "pi-1", "--select", "a=b", "http://127.0.0.1/"},
		{"compare", "--metric", "nope"},
		{"export", "--format", "xml"},
		{"show"},
		{"show", "a", "--format", "yaml"},
	} {
		var out, errb bytes.Buffer
		code := program().Run(context.Background(), &cli.Env{Stdout: &out, Stderr: &errb, Getenv: noEnv}, args)
		if code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", args, code, errb.String())
		}
		if len(args) > 1 && strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
			t.Errorf("%q: want one line, got %q", args, errb.String())
		}
	}
}

// fakeWire builds a result as a device would send it.
func fakeWire(fleet, device, server string, rps float64, p50 int64, cmdID string) *wire.Result {
	h := report.NewLatencyHistogram()
	for i := range 1000 {
		h.Record(p50/2 + int64(i)*p50/1000)
	}
	n := int64(rps * 5)
	return &wire.Result{V: 1, ID: wire.NewID(), CommandID: cmdID, Fleet: fleet, Device: device, CreatedAt: time.Now(),
		Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded, Labels: map[string]string{"server": server},
		Spec: wire.RunSpec{URL: "http://127.0.0.1:8080/", Method: "GET", Connections: 10, DurationMS: 5000, KeepAlive: true},
		Runs: []wire.Run{{StartedAt: time.Now(), DurationUS: 5e6, Completed: n, OK: n, DocLength: 13, Server: server,
			Latency: h.AppendCompact(nil), Connect: report.NewLatencyHistogram().AppendCompact(nil),
			Timeline: []wire.Second{{T: 0, Completed: n / 2}, {T: 1, Completed: n / 2}}}}}
}

// TestServeAndCommands runs the collector binary and its reading commands
// as processes, with devices on real MQTT connections to it.
func TestServeAndCommands(t *testing.T) {
	dir := t.TempDir()
	bin := testenv.Binary(t, ".")
	listen, web := testenv.FreeAddr(t), testenv.FreeAddr(t)
	accounts := filepath.Join(dir, "accounts.yaml")
	os.WriteFile(accounts, []byte(`collector: {username: collector, password: c0llect}
devices:
  - {fleet: lab, id: pi-1, password: one}
  - {fleet: lab, id: pi-2, password: two}
`), 0o600)
	db := filepath.Join(dir, "edgebench.db")
	var serveOut bytes.Buffer
	// The API wants a token: trigger passes it from the same file.
	tokenFile := filepath.Join(dir, "api-token")
	if err := os.WriteFile(tokenFile, []byte("t0ken-for-the-test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	serve := exec.Command(bin, "serve", "--db", db, "--listen", listen, "--web", web, "--accounts", accounts, "--api-token-file", tokenFile)
	serve.Stdout, serve.Stderr = &serveOut, &serveOut
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		serve.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- serve.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exited: %v\n%s", err, serveOut.String())
			}
		case <-time.After(30 * time.Second):
			serve.Process.Kill()
			<-done
			t.Errorf("serve did not stop on SIGTERM\n%s", serveOut.String())
		}
	}
	defer stop()

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	devs := map[string]*transport.Client{}
	for _, id := range []string{"pi-1", "pi-2"} {
		sp, err := spool.Open(filepath.Join(dir, "spool-"+id), spool.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := transport.Dial(transport.ClientConfig{Broker: "tcp://" + listen, Username: id, Password: map[string]string{"pi-1": "one", "pi-2": "two"}[id],
			Fleet: "lab", Device: id, RetryInterval: 100 * time.Millisecond},
			transport.Options{Spool: sp, Birth: &wire.Status{BootID: "b", Info: &wire.DeviceInfo{Board: "Raspberry Pi 4", Labels: map[string]string{"model": map[string]string{"pi-1": "pi4", "pi-2": "pi5"}[id]}}}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		devs[id] = c
	}
	for _, c := range devs {
		if err := c.WaitConnected(ctx); err != nil {
			t.Fatalf("device: %v\n%s", err, serveOut.String())
		}
	}
	for i := range 5 {
		for _, r := range []*wire.Result{
			fakeWire("lab", "pi-1", "nginx", 1000+float64(i), 800, ""),
			fakeWire("lab", "pi-1", "kangle", 1300+float64(i), 600, ""),
		} {
			if err := devs["pi-1"].PublishResult(ctx, r); err != nil {
				t.Fatal(err)
			}
			if err := devs["pi-1"].WaitAck(ctx, r.ID); err != nil {
				t.Fatal(err)
			}
		}
	}

	// pi-2 plays the agent: it answers a command with events and a result.
	err := devs["pi-2"].SubscribeCommands(func(ctx context.Context, cmd *wire.Command) {
		ev := func(seq uint32, s wire.EventState, p *wire.Progress, rid string) {
			devs["pi-2"].PublishEvent(ctx, &wire.Event{V: 1, CommandID: cmd.ID, Seq: seq, State: s, Progress: p, ResultID: rid, At: time.Now()})
		}
		ev(1, wire.StateAccepted, nil, "")
		ev(2, wire.StateRunning, &wire.Progress{ElapsedMS: 1000, Completed: 950, RPS: 950}, "")
		r := fakeWire("lab", "pi-2", "nginx", 950, 900, cmd.ID)
		if err := devs["pi-2"].PublishResult(ctx, r); err != nil {
			return
		}
		if devs["pi-2"].WaitAck(ctx, r.ID) == nil {
			ev(3, wire.StateSucceeded, nil, r.ID)
		}
	})
	if err != nil {
		t.Fatal(err)
	}

	run := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s\n%s", args, err, errb.String(), out.String())
		}
		return out.String()
	}
	testenv.Until(t, "both devices online", func() bool {
		out := run("devices", "--db", db)
		return strings.Count(out, "online") == 2
	})
	var denied bytes.Buffer
	noToken := exec.CommandContext(ctx, bin, "trigger", "--server", "http://"+web, "--device", "pi-2", "--fleet", "lab", "http://127.0.0.1:8080/")
	noToken.Stderr = &denied
	if err := noToken.Run(); err == nil || !strings.Contains(denied.String(), "401") {
		t.Errorf("trigger without the token: %v, stderr %q", err, denied.String())
	}
	out := run("trigger", "--server", "http://"+web, "--api-token-file", tokenFile, "--select", "model=pi5", "--fleet", "lab", "-c", "4", "-d", "1s", "--wait", "http://127.0.0.1:8080/")
	for _, want := range []string{"expecting 1 devices: lab/pi-2", "lab/pi-2: accepted", "lab/pi-2: running 1.0s 950 requests", "lab/pi-2: succeeded", "lab/pi-2  1"} {
		if !strings.Contains(out, want) {
			t.Errorf("trigger --wait output lacks %q:\n%s", want, out)
		}
	}
	t.Log("\n" + out)

	out = run("runs", "--db", db, "--limit", "0")
	if n := strings.Count(out, "lab/pi-"); n != 11 {
		t.Errorf("runs lists %d results, want 11:\n%s", n, out)
	}
	out = run("show", "last", "--db", db, "--format", "ab")
	if !strings.Contains(out, "Requests per second") || !strings.Contains(out, "lab/pi-") {
		t.Errorf("show --format ab:\n%s", out)
	}
	out = run("compare", "--db", db, "--by", "server", "--device", "pi-1")
	if !strings.Contains(out, "vs nginx") || !strings.Contains(out, "kangle") || !strings.Contains(out, "+") {
		t.Errorf("compare:\n%s", out)
	}
	t.Log("\n" + out)
	out = run("export", "--db", db, "--format", "benchfmt")
	if strings.Count(out, "\nBenchmarkHTTP/") != 11 || !strings.Contains(out, "server: kangle") {
		t.Errorf("benchfmt:\n%s", out)
	}
	for _, c := range devs {
		c.Close()
	}
	stop()
}

// noEnv is an empty environment but for the configuration file: none
// (os.DevNull), not /etc's.
func noEnv(k string) string {
	if k == configEnv {
		return os.DevNull
	}
	return ""
}
