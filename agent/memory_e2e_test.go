package agent

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/wire"
)

// procKB reads a "VmHWM:"-like line of /proc/<pid>/status, in KiB.
func procKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// TestAgentBigCommandCostsNoMemory: a 100 MiB message on the agent's
// command topic (the broker here has no size cap) is skipped as it
// arrives: the agent's peak RSS stays within a few MB (it took 257 MB),
// and the agent still answers the next command.
func TestAgentBigCommandCostsNoMemory(t *testing.T) {
	broker, _, fleet, state := e2e(t, "/")
	agent := startAgent(t, broker, state)
	fleet.waitFor(20*time.Second, "the birth", func() bool { return fleet.status != nil && fleet.status.State == wire.StatusOnline })
	pid := agent.cmd.Process.Pid
	idle := procKB(t, pid, "VmHWM")
	start := time.Now()
	// The broker takes a while to take and pass 100 MiB on when the
	// machine is busy (and this process runs under -race): 2 minutes to
	// acknowledge it, then for the agent to have skipped it.
	fleet.sendRawWithin("pi1", make([]byte, 100<<20), 2*time.Minute)
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(agent.output(), "message over the size cap skipped") {
		if time.Now().After(deadline) {
			t.Fatalf("the agent did not skip the message in 2 minutes:\n%s", agent.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("100 MiB sent and skipped in %v", time.Since(start).Round(time.Millisecond))
	info := &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), IssuedAt: time.Now().UTC(),
		ExpiresAt: time.Now().Add(time.Minute).UTC(), Kind: wire.KindInfo}
	fleet.send("pi1", info)
	fleet.waitFor(30*time.Second, "the info command's answer", func() bool { return fleet.terminal(info.ID) != nil })
	peak := procKB(t, pid, "VmHWM")
	t.Logf("agent peak RSS: %d KiB before the 100 MiB message, %d KiB after (+%d KiB)", idle, peak, peak-idle)
	if peak-idle > 16<<10 {
		t.Errorf("the agent's peak RSS grew by %d KiB for one oversize message", peak-idle)
	}
}
