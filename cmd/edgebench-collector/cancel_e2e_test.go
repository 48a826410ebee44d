package main

import (
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// TestCancelATriggeredTest: Ctrl-C on trigger --wait says the test goes
// on and how to stop it; `cancel` stops it on the agent (its result is
// cancelled) and the agent takes the next trigger instead of answering
// busy; the fleet page's button does the same.
func TestCancelATriggeredTest(t *testing.T) {
	f := newTestFleet(t)
	target := httpTarget(t)
	f.startAgent("pi-1", "one")
	f.waitOnline("pi-1")
	running := func(id string) func() bool {
		return func() bool {
			for _, e := range f.commandStatus(id).Events {
				if e.State == wire.StateRunning {
					return true
				}
			}
			return false
		}
	}
	final := func(id string) wire.EventState {
		var st wire.EventState
		testenv.Until(t, "command "+id+" to end", func() bool {
			evs := f.commandStatus(id).Events
			if len(evs) > 0 && evs[len(evs)-1].State.Terminal() {
				st = evs[len(evs)-1].State
				return true
			}
			return false
		})
		return st
	}
	trig := f.trigger("--device", "pi-1", "--fleet", "lab", "-c", "1", "-d", "60s", "--wait", target+"/bytes/64")
	id := commandID(t, trig)
	testenv.Until(t, "the run to start", running(id))
	trig.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-trig.done:
	case <-time.After(20 * time.Second):
		t.Fatal("trigger --wait still running 20 s after Ctrl-C")
	}
	if out := trig.out.String(); trig.cmd.ProcessState.ExitCode() != 130 ||
		!strings.Contains(out, "interrupted: the test goes on on the devices; stop it with: edgebench-collector cancel "+id+" --server http://"+f.web) {
		t.Errorf("Ctrl-C: exit %d\n%s", trig.cmd.ProcessState.ExitCode(), out)
	}
	colBin, _ := fleetBinaries(t)
	out, err := exec.Command(colBin, "cancel", "--server", "http://"+f.web, id).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "cancel of "+id+" sent to lab/pi-1") {
		t.Fatalf("cancel: %v\n%s", err, out)
	}
	if st := final(id); st != wire.StateCancelled {
		t.Errorf("the cancelled command ended %s", st)
	}
	// Free again: a new trigger runs, and the page's button cancels it.
	trig = f.trigger("--device", "pi-1", "--fleet", "lab", "-c", "1", "-d", "60s", target+"/bytes/64")
	id2 := commandID(t, trig)
	testenv.Until(t, "the second run to start", running(id2))
	testenv.Until(t, "the fleet page's cancel button", func() bool {
		_, page := httpGet(t, "http://"+f.web+"/")
		return strings.Contains(page, `action="/commands/`+id2+`/cancel"`)
	})
	resp, err := http.PostForm("http://"+f.web+"/commands/"+id2+"/cancel", url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 { // after the redirect to the fleet page
		t.Errorf("the button's POST: %s", resp.Status)
	}
	if st := final(id2); st != wire.StateCancelled {
		t.Errorf("the command cancelled from the page ended %s", st)
	}
	// A finished command: nothing to cancel, said so.
	out, err = exec.Command(colBin, "cancel", "--server", "http://"+f.web, id).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "every device it went to has finished it") {
		t.Errorf("cancel of a finished command: %v\n%s", err, out)
	}
}

func httpGet(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
