package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/rebuild"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// TestRunPublishReachesTheCollector runs `edgebench run --publish` as a
// process against a real broker, with a collector-side subscriber that
// acks: the result arrives with its runs and system section, the report
// rebuilt from it matches, and the spool is left empty.
func TestRunPublishReachesTheCollector(t *testing.T) {
	base := startTarget(t)
	addr := testenv.StartBroker(t).Addr
	col, err := transport.Dial(transport.ClientConfig{Broker: "tcp://" + addr, ClientID: "collector", RetryInterval: 100 * time.Millisecond}, transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer col.Close()
	got := make(chan *wire.Result, 2)
	if _, err := transport.NewSubscriber(col, transport.SubscriberConfig{Handler: func(_ context.Context, _ wire.Addr, r *wire.Result, _ []byte) error {
		got <- r
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := col.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	spool := t.TempDir()
	r := runBinary(t, "run", "-n", "300", "-c", "3", "--label", "server=builtin", "--publish", "--broker", "tcp://"+addr,
		"--fleet", "lab", "--device", "bench-1", "--spool", spool, "--agent-config", writeAgentConfig(t),
		base+"/bytes/100")
	if r.code != 0 || !strings.Contains(r.stderr, "acknowledged") {
		t.Fatalf("exit %d\nstderr %s", r.code, r.stderr)
	}
	var res *wire.Result
	select {
	case res = <-got:
	case <-ctx.Done():
		t.Fatal("the collector got no result")
	}
	if res.Device != "bench-1" || res.Fleet != "lab" || res.Labels["server"] != "builtin" || len(res.Runs) != 1 ||
		res.Runs[0].Completed != 300 || res.Runs[0].System == nil || res.Fingerprint.Server != "edgebench/test" {
		t.Errorf("result %+v", res)
	}
	lg, err := rebuild.LoadResult(&res.Runs[0], res.Spec)
	if err != nil || lg.Completed != 300 || lg.Latency.Count() != 300 {
		t.Errorf("rebuilt result: %v %+v", err, lg)
	}
	var b strings.Builder
	report.WriteAB(&b, lg, report.ABOptions{})
	if !strings.Contains(b.String(), "Complete requests:      300") {
		t.Errorf("ab report from the wire:\n%s", b.String())
	}
	if m, _ := filepath.Glob(filepath.Join(spool, "*.msg")); len(m) != 0 {
		t.Errorf("%d results left in the spool: %v\n%s", len(m), m, r.stderr)
	}
}

// TestRunPublishWithoutASuccess: a run of which no request succeeded
// exits with the one text of it (measure.NoSuccess), and the result it
// publishes fails with the same text, not a shorter one: here every
// request timed out in the drain. The broker is not there: the result
// stays in the spool, where it is read.
func TestRunPublishWithoutASuccess(t *testing.T) {
	const want = "no successful response (errors in the measured window: none; drained at the end: 3 in flight, 0 completed, failed: timeout 3)"
	dir := t.TempDir()
	r := runBinary(t, "run", "-c", "3", "-d", "1s", "--timeout", "2s", "--no-probe", "--publish", "--broker", "tcp://127.0.0.1:1",
		"--spool", dir, "--publish-timeout", "300ms", "--agent-config", writeAgentConfig(t), startTarget(t)+"/delay/5000")
	if r.code == 0 || !strings.Contains(r.stderr, "stays in the spool") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	sp, err := spool.Open(dir, spool.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	ids := sp.List()
	if len(ids) != 1 {
		t.Fatalf("spool holds %q", ids)
	}
	b, err := sp.Get(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	res, err := wire.DecodeResult(b)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != wire.StateFailed || res.Reason != want {
		t.Errorf("published %s %q, want failed %q", res.Outcome, res.Reason, want)
	}
	// The same run without --publish exits with it.
	r = runBinary(t, "run", "-c", "3", "-d", "1s", "--timeout", "2s", "--no-probe", startTarget(t)+"/delay/5000")
	if r.code != 1 || r.stderr != "edgebench run: "+want+"\n" {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}
