package agent

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/wire"
)

func serveCmd(dir string, d time.Duration) *wire.Command {
	now := time.Now().UTC()
	return &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), IssuedAt: now, ExpiresAt: now.Add(time.Minute),
		Kind: wire.KindServe, Spec: wire.CommandSpec{Serve: &wire.ServeSpec{Addr: "127.0.0.1:0", Dir: dir, DurationMS: d.Milliseconds()}}}
}

// serving sends a serve command and returns the base URL the agent serves
// on, or "" and the rejection's reason.
func (f *fleetSide) serving(cmd *wire.Command) (base, rejected string) {
	f.t.Helper()
	f.send("pi1", cmd)
	f.waitFor(10*time.Second, "the serve command's answer", func() bool {
		for _, e := range f.events[cmd.ID] {
			if e.State == wire.StateRunning || e.State == wire.StateRejected {
				return true
			}
		}
		return false
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.events[cmd.ID] {
		switch e.State {
		case wire.StateRejected:
			return "", e.Reason
		case wire.StateRunning:
			return strings.TrimSuffix(strings.TrimPrefix(e.Reason, "serving on "), "/"), ""
		}
	}
	return "", ""
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAgentServeStaysUnderItsRoot: a device serves files only from below
// policy.serve_root; "/" (which served /etc/passwd), "..", and symlinks
// out of the root are refused, and a device without a root serves the
// synthetic endpoints only.
func TestAgentServeStaysUnderItsRoot(t *testing.T) {
	broker, _, fleet, state := e2e(t, "/")
	root := t.TempDir()
	site := filepath.Join(root, "site")
	os.MkdirAll(site, 0o755)
	os.WriteFile(filepath.Join(site, "index.html"), []byte("hello from the site\n"), 0o644)
	os.WriteFile(filepath.Join(root, "secret"), []byte("outside the site\n"), 0o600)
	os.Symlink("/etc", filepath.Join(site, "etc"))         // inside the served dir, pointing out
	os.Symlink("/etc", filepath.Join(root, "escape"))      // a served dir that is a symlink out
	os.Symlink("../secret", filepath.Join(site, "up.txt")) // out of the served dir, still in the root
	startAgent(t, broker, state, "EDGEBENCH_POLICY_SERVE_ROOT="+root)
	fleet.waitFor(20*time.Second, "the birth", func() bool { return fleet.status != nil && fleet.status.State == wire.StatusOnline })

	for _, dir := range []string{"/", "/etc", "..", "site/../..", root + "/..", "escape", "escape/ssh"} {
		base, reason := fleet.serving(serveCmd(dir, 5*time.Second))
		if base != "" {
			code, body := httpGet(t, base+"/passwd")
			code2, _ := httpGet(t, base+"/etc/passwd")
			t.Errorf("serve dir %q accepted: /passwd %d, /etc/passwd %d (%d bytes)", dir, code, code2, len(body))
			continue
		}
		if !strings.Contains(reason, "serve_root") {
			t.Errorf("serve dir %q: rejected for %q, want the reason to name serve_root", dir, reason)
		}
	}

	for _, dir := range []string{"site", filepath.Join(root, "site")} {
		cmd := serveCmd(dir, 2*time.Second)
		base, reason := fleet.serving(cmd)
		if base == "" {
			t.Fatalf("serve dir %q rejected: %s", dir, reason)
		}
		if code, body := httpGet(t, base+"/index.html"); code != 200 || body != "hello from the site\n" {
			t.Errorf("%s/index.html: %d %q", dir, code, body)
		}
		for _, p := range []string{"/etc/passwd", "/etc/hostname", "/up.txt", "/../secret", "/%2e%2e/secret"} {
			if code, body := httpGet(t, base+p); code == 200 {
				t.Errorf("serve dir %q: %s answered 200 (%d bytes)", dir, p, len(body))
			}
		}
		// 11.10: the target stops when its time is up, and the next serve
		// command is accepted.
		fleet.waitFor(10*time.Second, "the serve command's end", func() bool { return fleet.terminal(cmd.ID) != nil })
		if ev := fleet.terminal(cmd.ID); ev.State != wire.StateSucceeded {
			t.Errorf("serve ended %s %q", ev.State, ev.Reason)
		}
	}
}

// TestAgentServeWithoutRoot: with no serve_root the agent refuses any dir
// and serves the synthetic endpoints, again and again.
func TestAgentServeWithoutRoot(t *testing.T) {
	broker, _, fleet, state := e2e(t, "/")
	startAgent(t, broker, state)
	fleet.waitFor(20*time.Second, "the birth", func() bool { return fleet.status != nil && fleet.status.State == wire.StatusOnline })
	if base, reason := fleet.serving(serveCmd(t.TempDir(), 5*time.Second)); base != "" || !strings.Contains(reason, "serve_root") {
		t.Errorf("a dir without serve_root: base %q reason %q", base, reason)
	}
	for i := range 3 {
		cmd := serveCmd("", 300*time.Millisecond)
		base, reason := fleet.serving(cmd)
		if base == "" {
			t.Fatalf("serve #%d rejected: %s", i+1, reason)
		}
		if code, _ := httpGet(t, base+"/bytes/10"); code != 200 {
			t.Errorf("serve #%d: /bytes/10 %d", i+1, code)
		}
		fleet.waitFor(10*time.Second, "the serve command's end", func() bool { return fleet.terminal(cmd.ID) != nil })
	}
}
