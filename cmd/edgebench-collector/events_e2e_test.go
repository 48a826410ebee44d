package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/spool"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// TestForeignEventsJoinNoCommand is issue 31's second attack, with the
// collector and an agent as processes and the attacker a device client
// over the real broker: while fleet lab's pi-1 runs `trigger --wait`, a
// device of fleet demo publishes accepted, running and rejected events
// naming lab's command. None of them joins the command: trigger --wait
// lists pi-1 alone and exits 0 (on main at 588e3ea it listed "demo/evil:
// rejected (forged)" and exited 1), a cancel goes to pi-1 alone, and a
// schedule's firing does not list demo/evil among its missed devices.
func TestForeignEventsJoinNoCommand(t *testing.T) {
	f := newTestFleetWith(t, "  - {fleet: demo, id: evil, password: evil-pw}\n")
	target := httpTarget(t)
	f.startAgent("pi-1", "one")
	f.waitOnline("pi-1")
	sp, err := spool.Open(t.TempDir(), spool.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	evil, err := transport.Dial(transport.ClientConfig{Broker: "tcp://" + f.listen, Username: "evil", Password: "evil-pw", Fleet: "demo",
		Device: "evil"}, transport.Options{Spool: sp, Birth: &wire.Status{BootID: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	defer evil.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := evil.WaitConnected(ctx); err != nil {
		t.Fatal(err)
	}
	// forge publishes evil's events naming cmd, and gives the collector
	// time to take them (an old one stored them within milliseconds).
	forge := func(cmd string, states ...wire.EventState) {
		t.Helper()
		for i, st := range states {
			if err := evil.PublishEvent(ctx, &wire.Event{V: wire.SchemaVersion, CommandID: cmd, Seq: uint32(i + 1), State: st,
				Reason: "forged by demo/evil", At: time.Now().UTC()}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(2 * time.Second)
	}

	// trigger --wait: pi-1 alone, exit 0.
	trig := f.trigger("--fleet", "lab", "--wait", "-c", "1", "-d", "4s", target+"/bytes/64")
	id := commandID(t, trig)
	forge(id, wire.StateAccepted, wire.StateRunning, wire.StateRejected)
	select {
	case <-trig.done:
	case <-ctx.Done():
		t.Fatal("trigger --wait did not end")
	}
	if out := trig.out.String(); trig.cmd.ProcessState.ExitCode() != 0 || strings.Contains(out, "demo/evil") || !strings.Contains(out, "lab/pi-1: succeeded") {
		t.Errorf("trigger --wait: exit %d\n%s", trig.cmd.ProcessState.ExitCode(), out)
	}
	for _, e := range f.commandStatus(id).Events {
		if e.Fleet != "lab" {
			t.Errorf("the command's status lists %s/%s: %s", e.Fleet, e.Device, e.State)
		}
	}

	// A cancel goes to the devices running the command: pi-1, not evil.
	long := f.trigger("--device", "pi-1", "--fleet", "lab", "-c", "1", "-d", "60s", target+"/bytes/64")
	id2 := commandID(t, long)
	testenv.Until(t, "pi-1 running", func() bool {
		for _, e := range f.commandStatus(id2).Events {
			if e.Device == "pi-1" && e.State == wire.StateRunning {
				return true
			}
		}
		return false
	})
	forge(id2, wire.StateAccepted, wire.StateRunning)
	colBin, _ := fleetBinaries(t)
	out, err := exec.CommandContext(ctx, colBin, "cancel", id2, "--server", "http://"+f.web).CombinedOutput()
	if err != nil || strings.Contains(string(out), "demo") || !strings.Contains(string(out), "sent to lab/pi-1 (") {
		t.Errorf("cancel: %v\n%s", err, out)
	}

	// A schedule's firing: demo/evil's rejection is not a missed device.
	out, err = exec.CommandContext(ctx, colBin, "schedule", "add", "watch", "--every", "2s", "--fleet", "lab", "--server", "http://"+f.web,
		"-c", "1", "-d", "1s", target+"/bytes/64").CombinedOutput()
	if err != nil {
		t.Fatalf("schedule add: %v\n%s", err, out)
	}
	var runs []scheduledb.ScheduleRun
	testenv.Until(t, "a firing with its command", func() bool {
		out, err := exec.CommandContext(ctx, colBin, "schedule", "runs", "watch", "--json", "--server", "http://"+f.web).Output()
		runs = nil
		return err == nil && json.Unmarshal(out, &runs) == nil && len(runs) > 0 && len(runs[len(runs)-1].Commands) > 0
	})
	first := runs[len(runs)-1]
	exec.CommandContext(ctx, colBin, "schedule", "pause", "watch", "--server", "http://"+f.web).Run()
	forge(first.Commands[0], wire.StateRejected)
	out, err = exec.CommandContext(ctx, colBin, "schedule", "runs", "watch", "--json", "--server", "http://"+f.web).Output()
	runs = nil
	if err != nil || json.Unmarshal(out, &runs) != nil {
		t.Fatalf("schedule runs: %v\n%s", err, out)
	}
	for _, r := range runs {
		for _, m := range r.Missed {
			if strings.HasPrefix(m.Device, "demo/") {
				t.Errorf("the firing due at %s lists %s missed: %s", r.DueAt, m.Device, m.Reason)
			}
		}
	}
}
