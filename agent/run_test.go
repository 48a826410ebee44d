package agent

import (
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// A load test without one successful response fails with the one text
// every result and `edgebench run` give it (measure.NoSuccess): how its
// requests failed, as the errors line names them, every class that
// counted and none that did not. The envelope is the device's and the
// command's, its labels the device's with the command's added.
func TestLoadTestWithoutASuccessSaysHowItFailed(t *testing.T) {
	a, _ := newTestAgent(t)
	a.cfg.Fleet, a.cfg.Labels = "lab", map[string]string{"rack": "a"}
	log := &resultLog{}
	a.SetLink(log, nil)
	now := time.Now().UTC()
	cmd := &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), IssuedAt: now, ExpiresAt: now.Add(time.Minute),
		Kind: wire.KindLoadTest, Spec: wire.CommandSpec{LoadTest: &wire.LoadTestSpec{
			URL: testenv.Target(t, "") + "/status/404", Connections: 2, Requests: 20, KeepAlive: true,
			Labels: []wire.Label{{K: "server", V: "builtin"}}}}}
	r := log.run(t, a, cmd)
	const want = "no successful response (errors: status 20)"
	if r.Outcome != wire.StateFailed || r.Reason != want {
		t.Errorf("outcome %s %q, want failed %q", r.Outcome, r.Reason, want)
	}
	if ev := log.last(cmd.ID); ev == nil || ev.State != wire.StateFailed || ev.Reason != want || ev.ResultID != r.ID {
		t.Errorf("final event %+v", ev)
	}
	if r.CommandID != cmd.ID || r.Fleet != "lab" || r.Device != "pi1" || r.Kind != wire.KindLoadTest || r.BootID != a.bootID ||
		r.Labels["rack"] != "a" || r.Labels["server"] != "builtin" || len(a.cfg.Labels) != 1 || len(r.Runs) != 1 || r.Runs[0].Errors.Status != 20 {
		t.Errorf("result %+v", r)
	}
}
