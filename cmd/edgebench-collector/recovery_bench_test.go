package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
)

// mosquittoOn runs Debian's mosquitto on addr (no persistence, anonymous
// clients, every log line on its output) until stopped or the benchmark
// ends; without mosquitto the benchmark is skipped (it fails in CI).
func mosquittoOn(tb testing.TB, addr string) *proc {
	tb.Helper()
	bin := testenv.Tool(tb, "mosquitto")
	host, port, _ := strings.Cut(addr, ":")
	conf := filepath.Join(tb.TempDir(), "mosquitto.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("listener %s %s\nallow_anonymous true\npersistence false\nlog_type all\nlog_dest stderr\n", port, host)), 0o600)
	p := startProc(tb, "mosquitto", nil, bin, "-c", conf)
	testenv.Until(tb, "mosquitto to listen", func() bool { return strings.Contains(p.out.String(), "Opening ipv4 listen socket") })
	return p
}

// BenchmarkRecoveryAfterBrokerRestart measures, with real processes, how
// long a result takes to reach the collector after a broker restart
// without persistence in which the agent resent it before the collector
// was back: mosquitto, the collector binary behind it (--broker) and an
// agent. The collector is held (SIGSTOP) while the broker restarts and the
// agent resends its result into the void; recovery-s is the time from the
// collector's SIGCONT to the result in its store. Before the collector's
// retained "online" status, only the agent's resend every minute brought
// it (about a minute); now the agent resends as the collector announces
// itself.
func BenchmarkRecoveryAfterBrokerRestart(b *testing.B) {
	colBin, agentBin := fleetBinaries(b)
	url := httpTarget(b)
	var total time.Duration
	for i := 0; i < b.N; i++ {
		dir := b.TempDir()
		mq := testenv.FreeAddr(b)
		broker := mosquittoOn(b, mq)
		web := testenv.FreeAddr(b)
		col := startProc(b, "collector", nil, colBin, "serve", "--db", filepath.Join(dir, "c.db"), "--broker", "tcp://"+mq,
			"--web", web, "--log-level", "debug")
		conf := filepath.Join(dir, "agent.yaml")
		os.WriteFile(conf, nil, 0o644)
		agent := startProc(b, "agent", []string{"EDGEBENCH_BROKER_URL=tcp://" + mq, "EDGEBENCH_FLEET=lab", "EDGEBENCH_DEVICE_ID=pi-1",
			"EDGEBENCH_STATE_DIR=" + dir, "EDGEBENCH_SPOOL_DIR=" + filepath.Join(dir, "spool"), "EDGEBENCH_LOG_LEVEL=debug"},
			agentBin, "agent", "--config", conf)
		f := &testFleet{t: b, web: web}
		f.waitOnline("pi-1")
		id := commandID(b, f.trigger("--device", "pi-1", "--fleet", "lab", "-c", "1", "-d", "3s", url+"/bytes/64"))
		testenv.Until(b, "the run to start", func() bool {
			for _, e := range f.commandStatus(id).Events {
				if e.State == "running" {
					return true
				}
			}
			return false
		})
		col.cmd.Process.Signal(syscall.SIGSTOP)
		broker.kill()
		testenv.Until(b, "the run's end, its result spooled", func() bool { return strings.Contains(agent.out.String(), "run ended") })
		broker = mosquittoOn(b, mq)
		testenv.Until(b, "the agent's resend on the restarted broker", func() bool {
			return strings.Contains(broker.out.String(), "Received PUBLISH from edgebench-lab-pi-1") &&
				strings.Contains(broker.out.String(), "/lab/pi-1/result")
		})
		start := time.Now()
		col.cmd.Process.Signal(syscall.SIGCONT)
		deadline := start.Add(3 * time.Minute)
		for len(f.commandStatus(id).Results) == 0 {
			if time.Now().After(deadline) {
				b.Fatalf("no result 3 minutes after the collector came back")
			}
			time.Sleep(50 * time.Millisecond)
		}
		total += time.Since(start)
		agent.kill()
		col.kill()
		broker.kill()
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "recovery-s")
}
