package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector"
	"github.com/edgebench/edgebench/collector/broker"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/testenv"
)

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := program().Run(context.Background(), &cli.Env{Stdout: &out, Stderr: &errb, Getenv: noEnv}, args)
	return out.String(), errb.String(), code
}

// TestScheduleCommands: add, list, pause, resume, runs and rm against a
// running collector, and the mistakes refused with one line and exit 2.
func TestScheduleCommands(t *testing.T) {
	c, err := collector.Start(context.Background(), collector.Config{DB: filepath.Join(t.TempDir(), "e.db"), Listen: testenv.FreeAddr(t), Web: "127.0.0.1:0",
		Accounts: &broker.Accounts{Collector: broker.Account{Username: "collector", Password: "pw"}}, Schedules: scheduledb.ScheduleLimits{MinEvery: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	server := "http://" + c.WebAddr()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"schedule", "add", "n", "--fleet", "lab", "http://127.0.0.1/"}, "say when"},
		{[]string{"schedule", "add", "n", "--every", "1h", "--cron", "0 2 * * *", "--fleet", "lab", "http://127.0.0.1/"}, "exclude each other"},
		{[]string{"schedule", "add", "n", "--cron", "0 25 * * *", "--fleet", "lab", "http://127.0.0.1/"}, "hour"},
		{[]string{"schedule", "add", "n", "--every", "soon", "--fleet", "lab", "http://127.0.0.1/"}, "want a duration"},
		{[]string{"schedule", "add", "--every", "1h", "n", "--fleet", "lab", "http://127.0.0.1/"}, "name comes first"},
		{[]string{"schedule", "add", "n", "--every", "1h", "http://127.0.0.1/"}, "say which devices"},
		{[]string{"schedule", "add", "n", "--every", "1h", "--jitter", "2h", "--fleet", "lab", "http://127.0.0.1/"}, "--jitter"},
		{[]string{"schedule", "add", "n", "--every", "1h", "--fleet", "lab", "--wait", "http://127.0.0.1/"}, "--wait is for trigger"},
		{[]string{"schedule", "frobnicate"}, "unknown schedule command"},
		{[]string{"schedule", "rm"}, "want one schedule name"},
	} {
		_, errs, code := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, errs, tc.want)
		}
	}
	if out, _, code := runCLI(t, "schedule", "-h"); code != 0 || !strings.Contains(out, "--jitter") {
		t.Errorf("schedule -h: exit %d, stdout %q", code, out)
	}

	ok := func(args ...string) string {
		t.Helper()
		out, errs, code := runCLI(t, append(args, "--server", server)...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errs)
		}
		return out
	}
	ok("schedule", "add", "nightly", "--cron", "30 2 * * *", "--select", "model=pi5", "--fleet", "lab", "-c", "4", "-d", "5s", "--label", "server=nginx", "http://127.0.0.1:8080/")
	ok("schedule", "add", "often", "--every", "1s", "--jitter", "500ms", "--fleet", "lab", "http://127.0.0.1:8080/")
	if _, errs, code := runCLI(t, "schedule", "add", "often", "--every", "1s", "--fleet", "lab", "--server", server, "http://127.0.0.1/"); code != 1 || !strings.Contains(errs, "409") {
		t.Errorf("a second 'often': exit %d, %s", code, errs)
	}
	out := ok("schedule", "list")
	for _, want := range []string{"nightly  cron 30 2 * * *", "model=pi5 in lab", "often    every 1s jitter 500ms", "fleet lab"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	ok("schedule", "pause", "nightly")
	if out := ok("schedule", "list"); !strings.Contains(out, "paused") {
		t.Errorf("list after pause:\n%s", out)
	}
	// often fires, but no device of lab is online: with --jitter that is
	// recorded as the run's error.
	testenv.Until(t, "often's first run", func() bool {
		return strings.Contains(ok("schedule", "runs", "often"), "no online device matches")
	})
	ok("schedule", "resume", "nightly")
	ok("schedule", "rm", "often")
	out = ok("schedule", "list", "--json")
	if strings.Contains(out, `"often"`) || !strings.Contains(out, `"nightly"`) || strings.Contains(out, `"paused": true`) {
		t.Errorf("list --json after rm and resume:\n%s", out)
	}
	if _, errs, code := runCLI(t, "schedule", "rm", "often", "--server", server); code != 1 || !strings.Contains(errs, "404") {
		t.Errorf("rm of a removed schedule: exit %d, %s", code, errs)
	}
	resp, err := http.Get(server + "/schedules")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`data-name="nightly"`, "cron 30 2 * * *", `data-act="pause"`, `data-act="rm"`, "model=pi5"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the schedules page lacks %q:\n%s", want, page)
		}
	}
}

// TestChangesCommand: --since takes days, mistakes exit 2 with one line,
// and a store without changes says so.
func TestChangesCommand(t *testing.T) {
	for s, want := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "36h": 36 * time.Hour, "0": 0, "1.5d": 36 * time.Hour} {
		if got, err := parseSince(s); err != nil || got != want {
			t.Errorf("--since %s: %v %v, want %v", s, got, err, want)
		}
	}
	db := filepath.Join(t.TempDir(), "e.db")
	for _, args := range [][]string{{"changes", "--since", "soon", "--db", db}, {"changes", "--since", "-3d", "--db", db}, {"changes", "--min-pct", "0", "--db", db}, {"changes", "extra"}} {
		if _, errs, code := runCLI(t, args...); code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%q: exit %d, %q", args, code, errs)
		}
	}
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if out, errs, code := runCLI(t, "changes", "--db", db); code != 0 || out != "no change\n" {
		t.Errorf("changes on an empty store: exit %d, %q %q", code, out, errs)
	}
	if out, _, code := runCLI(t, "changes", "--db", db, "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("changes --json on an empty store: exit %d, %q", code, out)
	}
}
