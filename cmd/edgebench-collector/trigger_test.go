package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
)

// TestTriggerWaitExitStatus runs the collector and two real agents as
// processes on loopback (one whose policy caps connections at 2) and
// checks that `trigger --wait` exits 1 after a line per device that did
// not succeed, saying why: a command rejected by the policy, a run that
// failed (nothing listens on the target), a command that expired in the
// device's queue, a device that never answered; and exits 0 when all
// succeeded.
func TestTriggerWaitExitStatus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the collector and two agents")
	}
	dir := t.TempDir()
	bin, agentBin := testenv.Binary(t, "."), testenv.Binary(t, "../edgebench")
	listen, web := testenv.FreeAddr(t), testenv.FreeAddr(t)
	accounts := filepath.Join(dir, "accounts.yaml")
	os.WriteFile(accounts, []byte(`collector: {username: collector, password: c0llect}
devices:
  - {fleet: lab, id: pi-ok, password: ok-pw}
  - {fleet: lab, id: pi-strict, password: strict-pw}
`), 0o600)
	db := filepath.Join(dir, "edgebench.db")
	start := func(name string, cmd *exec.Cmd) {
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-done
			}
			if t.Failed() {
				t.Logf("%s:\n%s", name, out.String())
			}
		})
	}
	start("collector", exec.Command(bin, "serve", "--db", db, "--listen", listen, "--web", web, "--accounts", accounts, "--log-level", "warn"))
	for id, env := range map[string][]string{
		"pi-ok":     {"EDGEBENCH_BROKER_PASSWORD=ok-pw"},
		"pi-strict": {"EDGEBENCH_BROKER_PASSWORD=strict-pw", "EDGEBENCH_POLICY_MAX_CONNECTIONS=2"},
	} {
		state := filepath.Join(dir, id)
		os.MkdirAll(state, 0o755)
		cfg := filepath.Join(state, "agent.yaml")
		os.WriteFile(cfg, []byte("log_level: warn\n"), 0o644)
		cmd := exec.Command(agentBin, "agent", "--config", cfg)
		cmd.Env = append(os.Environ(), "EDGEBENCH_BROKER_URL=tcp://"+listen, "EDGEBENCH_BROKER_USERNAME="+id, "EDGEBENCH_DEVICE_ID="+id,
			"EDGEBENCH_FLEET=lab", "EDGEBENCH_STATE_DIR="+state, "EDGEBENCH_SPOOL_DIR="+filepath.Join(state, "spool"))
		cmd.Env = append(cmd.Env, env...)
		start(id, cmd)
	}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hello\n")) }))
	defer target.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// trigger runs the command and returns its stdout, stderr and exit status.
	trigger := func(args ...string) (string, string, int) {
		t.Helper()
		var out, errb bytes.Buffer
		cmd := exec.CommandContext(ctx, bin, append([]string{"trigger", "--server", "http://" + web, "--fleet", "lab"}, args...)...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			return out.String(), errb.String(), 0
		case errors.As(err, &ee):
			return out.String(), errb.String(), ee.ExitCode()
		}
		t.Fatalf("trigger %v: %v", args, err)
		return "", "", 0
	}
	testenv.Until(t, "the collector up", func() bool {
		resp, err := http.Get("http://" + web + "/")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	testenv.Until(t, "both agents online", func() bool {
		out, err := exec.CommandContext(ctx, bin, "devices", "--db", db).Output()
		return err == nil && strings.Count(string(out), "online") == 2
	})

	for _, tc := range []struct {
		name  string
		args  []string
		code  int
		lines []string // in stdout, after the events
		err   string   // in stderr, when not "did not succeed"
		quick bool     // fails at once, without waiting for --max-wait
	}{
		{"one rejects", []string{"--wait", "-c", "4", "-d", "1s", target.URL + "/"}, 1,
			[]string{"lab/pi-ok: succeeded", "\nlab/pi-strict: rejected: "}, "", false},
		{"run fails", []string{"--device", "pi-ok", "--wait", "-c", "1", "-d", "1s", "http://127.0.0.1:1/"}, 1,
			[]string{"\nlab/pi-ok: failed: connection refused: 127.0.0.1:1\n"}, "", false},
		// A device or fleet no device of is known fails at once, as a
		// --select that matches none: nothing would ever answer.
		{"no such device", []string{"--device", "pi-gone", "--wait", "--max-wait", "1h", "-d", "1s", target.URL + "/"}, 1,
			nil, "no device lab/pi-gone is known (the devices are lab/pi-ok, lab/pi-strict)", true},
		{"no such fleet", []string{"--fleet", "nosuchfleet", "--wait", "--max-wait", "1h", "-d", "1s", target.URL + "/"}, 1,
			nil, "no device of fleet nosuchfleet is known (the fleets are lab)", true},
		{"no selected device", []string{"--select", "board=pi9", "--wait", "--max-wait", "1h", "-d", "1s", target.URL + "/"}, 1,
			nil, "no device matches", true},
		{"all succeed", []string{"--device", "pi-ok", "--wait", "-c", "2", "-d", "1s", target.URL + "/"}, 0,
			[]string{"lab/pi-ok: succeeded", "lab/pi-ok  1"}, "", false},
	} {
		began := time.Now()
		out, stderr, code := trigger(tc.args...)
		if tc.quick && time.Since(began) > 10*time.Second {
			t.Errorf("%s: %v before failing", tc.name, time.Since(began))
		}
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", tc.name, code, tc.code, out, stderr)
		}
		for _, l := range tc.lines {
			if !strings.Contains(out, l) {
				t.Errorf("%s: no %q in\n%s", tc.name, l, out)
			}
		}
		if tc.err != "" && !strings.Contains(stderr, tc.err) {
			t.Errorf("%s: stderr %q, want %q", tc.name, stderr, tc.err)
		} else if tc.err == "" && tc.code == 1 && !strings.Contains(stderr, "did not succeed") && !strings.Contains(stderr, "no device answered") {
			t.Errorf("%s: stderr %q", tc.name, stderr)
		}
		t.Logf("%s:\n%s%s", tc.name, out, stderr)
	}

	// A command queued behind a running one expires in the device's queue.
	if _, stderr, code := trigger("--device", "pi-ok", "-c", "1", "-d", "3s", target.URL+"/"); code != 0 {
		t.Fatalf("trigger: %d %s", code, stderr)
	}
	out, stderr, code := trigger("--device", "pi-ok", "--queue", "--ttl", "1s", "--wait", "-c", "1", "-d", "1s", target.URL+"/")
	if code != 1 || !strings.Contains(out, "\nlab/pi-ok: timed_out: expired in the queue") {
		t.Errorf("expired in the queue: exit %d\n%s%s", code, out, stderr)
	}
}
