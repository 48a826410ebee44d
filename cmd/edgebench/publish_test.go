package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

func TestPublishFlagsPrecedence(t *testing.T) {
	env := map[string]string{"EDGEBENCH_BROKER_URL": "tcp://env:1883", "EDGEBENCH_FLEET": "envfleet",
		"EDGEBENCH_BROKER_PASSWORD": "s3cret", "EDGEBENCH_SPOOL_DIR": t.TempDir()}
	fs := cli.NewFlagSet("run", "run", io.Discard)
	pf := addPublishFlags(fs, func(k string) string { return env[k] })
	if err := fs.ParseNoArgs([]string{"--publish", "--fleet", "lab", "--device", "pi4-07", "--agent-config", writeAgentConfig(t)}); err != nil {
		t.Fatal(err)
	}
	if err := pf.resolve(); err != nil {
		t.Fatal(err)
	}
	if !pf.publish || pf.broker != "tcp://env:1883" || pf.fleet != "lab" || pf.device != "pi4-07" ||
		pf.password != "s3cret" || pf.username != "from-config" || pf.timeout != 10*time.Second {
		t.Errorf("resolved %+v", pf)
	}
	var usage bytes.Buffer
	fs.PrintUsage(&usage)
	if strings.Contains(usage.String(), "s3cret") {
		t.Error("the usage shows the password")
	}

	fs = cli.NewFlagSet("run", "run", io.Discard)
	pf = addPublishFlags(fs, func(string) string { return "" })
	fs.ParseNoArgs([]string{"--device", "Not_Valid"})
	if err := pf.resolve(); err == nil || !strings.Contains(err.Error(), "--device") {
		t.Errorf("bad device id: %v", err)
	}

	// The names run --publish read before it took the agent's: refused,
	// with the new name, not silently ignored.
	fs = cli.NewFlagSet("run", "run", io.Discard)
	pf = addPublishFlags(fs, func(k string) string { return map[string]string{"EDGEBENCH_PASSWORD": "s3cret"}[k] })
	fs.ParseNoArgs([]string{"--publish", "--device", "pi4-07"})
	if err := pf.resolve(); err == nil || err.Error() != "EDGEBENCH_PASSWORD is now EDGEBENCH_BROKER_PASSWORD, the agent's name for it: rename the variable" {
		t.Errorf("old variable: %v", err)
	}
}

func writeAgentConfig(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "agent.yaml")
	os.WriteFile(p, []byte("broker:\n  url: tcp://config:1883\n  username: from-config\nfleet: configfleet\n"), 0o600)
	return p
}

func testPublishFlags(t *testing.T, broker, spool string, timeout time.Duration) *publishFlags {
	fs := cli.NewFlagSet("run", "run", io.Discard)
	pf := addPublishFlags(fs, func(string) string { return "" })
	if err := fs.ParseNoArgs([]string{"--publish", "--broker", broker, "--fleet", "lab", "--device", "pi4-07",
		"--spool", spool, "--publish-timeout", timeout.String(), "--agent-config", writeAgentConfig(t)}); err != nil {
		t.Fatal(err)
	}
	return pf
}

func testWireResult() *wire.Result {
	return &wire.Result{V: wire.SchemaVersion, ID: wire.NewID(), CreatedAt: time.Now().UTC(),
		Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded,
		Spec: wire.RunSpec{URL: "http://127.0.0.1/", Method: "GET", Connections: 1}}
}

// TestPublishResult: with the broker down the result stays spooled and the
// error says so; with broker and collector up, it and the spooled one are
// acknowledged.
func TestPublishResult(t *testing.T) {
	broker := testenv.NewBroker(t)
	addr := broker.Addr
	spool := t.TempDir()
	var stderr bytes.Buffer
	env := &cli.Env{Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}
	first := testWireResult()
	err := publishResult(context.Background(), env, testPublishFlags(t, "tcp://"+addr, spool, 300*time.Millisecond), first)
	if err == nil || !strings.Contains(err.Error(), "stays in the spool") || !strings.Contains(err.Error(), "not reachable") {
		t.Fatalf("broker down: %v", err)
	}
	if _, err := os.Stat(filepath.Join(spool, first.ID+".msg")); err != nil {
		t.Fatalf("result not spooled: %v", err)
	}

	broker.Start()
	col, err := transport.Dial(transport.ClientConfig{Broker: "tcp://" + addr, ClientID: "collector",
		RetryInterval: 100 * time.Millisecond}, transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer col.Close()
	got := make(chan string, 4)
	if _, err := transport.NewSubscriber(col, transport.SubscriberConfig{Handler: func(_ context.Context, _ wire.Addr, r *wire.Result, _ []byte) error {
		got <- r.ID
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := col.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	second := testWireResult()
	if err := publishResult(ctx, env, testPublishFlags(t, "tcp://"+addr, spool, 10*time.Second), second); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "acknowledged by the collector") {
		t.Errorf("stderr: %s", stderr.String())
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		select {
		case id := <-got:
			seen[id] = true
		case <-ctx.Done():
			t.Fatalf("collector got %v, want both results", seen)
		}
	}
	if !seen[first.ID] || !seen[second.ID] {
		t.Errorf("collector got %v", seen)
	}
}
