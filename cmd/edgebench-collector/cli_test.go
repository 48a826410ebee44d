package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// hostile is what a device may put in any string it sends: a terminal
// title change and bell, a screen clear, a carriage return, a
// right-to-left override, a line break and tab that would forge a row,
// and a byte that is not UTF-8.
const hostile = "x\x1b]0;pwned\x07\x1b[2J\r\u202e\nFORGED\trow\xff"

// TestDeviceTextIsEscaped: what a device supplied reaches the terminal as
// escapes, in every text the reading commands print.
func TestDeviceTextIsEscaped(t *testing.T) {
	for _, engine := range testenv.StoreEngines {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			db := testenv.StoreDB(t, engine)
			s, err := store.Open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			info := &wire.DeviceInfo{Board: hostile, OS: hostile, Kernel: hostile, Labels: map[string]string{"server": hostile, hostile: "v"}}
			if _, err := s.SetStatus(ctx, "lab", "pi-1", &wire.Status{V: 1, State: wire.StatusOnline, BootID: "b", Info: info}); err != nil {
				t.Fatal(err)
			}
			var batch []store.Incoming
			for i, outcome := range []wire.EventState{wire.StateSucceeded, wire.StateSucceeded, wire.StateFailed} {
				r := fakeWire("lab", "pi-1", hostile, 1000+float64(i), 800, "")
				r.Labels[hostile] = hostile
				r.Outcome, r.Reason = outcome, hostile
				r.Spec.URL = "http://127.0.0.1:8080/" + hostile
				r.Spec.Headers = []wire.Header{{Name: "X-A", Value: hostile}}
				r.Fingerprint = wire.Fingerprint{Board: hostile, OS: hostile, Kernel: hostile, Arch: hostile}
				r.Runs[0].Server = hostile
				r.CreatedAt = time.Date(2025, 3, 1, 12, i, 0, 0, time.UTC)
				raw, err := r.MarshalMsg(nil)
				if err != nil {
					t.Fatal(err)
				}
				batch = append(batch, store.Incoming{Result: r, Raw: raw})
			}
			if _, err := s.Ingest(ctx, batch); err != nil {
				t.Fatal(err)
			}
			s.Close()

			for _, args := range [][]string{
				{"devices"},
				{"runs"},
				{"show", "last"},
				{"show", batch[0].Result.ID, "--format", "ab"},
				{"show", batch[1].Result.ID, "--format", "wrk"},
				{"compare", "--by", "server"},
				{"compare", "--by", "board"},
			} {
				var out, errb bytes.Buffer
				code := program().Run(ctx, &cli.Env{Stdout: &out, Stderr: &errb, Getenv: noEnv}, append(args, "--db", db))
				if code != 0 {
					t.Errorf("%v: exit %d: %s", args, code, errb.String())
					continue
				}
				text := out.String()
				if i := strings.IndexFunc(text, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f || r == '\u202e' }); i >= 0 {
					t.Errorf("%v prints a raw control character at %d: %q", args, i, text[max(0, i-20):min(len(text), i+20)])
				}
				if regexp.MustCompile(`(?m)^FORGED`).MatchString(text) || strings.Contains(text, "\xff") {
					t.Errorf("%v lets a device forge a line:\n%s", args, text)
				}
				// The byte that is not UTF-8 is \xff, or U+FFFD where the store
				// keeps the text as JSON.
				if !strings.Contains(text, `x\x1b]0;pwned\a\x1b[2J\r\u202e\nFORGED\trow\xff`) && !strings.Contains(text, `x\x1b]0;pwned\a\x1b[2J\r\u202e\nFORGED\trow`+"\uFFFD") {
					t.Errorf("%v does not show the device's text escaped:\n%s", args, text)
				}
			}
		})
	}
}

// TestCompareUsageMistakes: a --by key no run has (a typo) and a base
// group with no runs are usage mistakes: one line naming what there is,
// exit status 2, nothing on stdout.
func TestCompareUsageMistakes(t *testing.T) {
	for _, engine := range testenv.StoreEngines {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			db := testenv.StoreDB(t, engine)
			s, err := store.Open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			var batch []store.Incoming
			for _, server := range []string{"nginx", "kangle"} {
				r := fakeWire("lab", "pi-1", server, 1000, 800, "")
				raw, err := r.MarshalMsg(nil)
				if err != nil {
					t.Fatal(err)
				}
				batch = append(batch, store.Incoming{Result: r, Raw: raw})
			}
			if _, err := s.Ingest(ctx, batch); err != nil {
				t.Fatal(err)
			}
			s.Close()
			for args, want := range map[string][]string{
				"compare --by sevrer":              {`no run has "sevrer" to group by`, "device", "board", "url", "server"},
				"compare --by server --base caddy": {`base group "caddy" has no runs`, "nginx, kangle"},
				"compare --metric rps,rps":         {`metric "rps" given twice`},
			} {
				var out, errb bytes.Buffer
				code := program().Run(ctx, &cli.Env{Stdout: &out, Stderr: &errb, Getenv: noEnv}, append(strings.Fields(args), "--db", db))
				if code != 2 || out.Len() > 0 || strings.Count(strings.TrimSpace(errb.String()), "\n") != 0 {
					t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2, nothing, one line", args, code, out.String(), errb.String())
				}
				for _, w := range want {
					if !strings.Contains(errb.String(), w) {
						t.Errorf("%s: %q lacks %q", args, errb.String(), w)
					}
				}
			}
		})
	}
}

// TestDBFromEnvironment: without --db, every command that reads the store
// takes EDGEBENCH_DB, a file or a postgres:// URL.
func TestDBFromEnvironment(t *testing.T) {
	for _, engine := range testenv.StoreEngines {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			db := testenv.StoreDB(t, engine)
			s, err := store.Open(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			r := fakeWire("lab", "pi-1", "nginx", 1000, 800, "")
			raw, _ := r.MarshalMsg(nil)
			if _, err := s.Ingest(ctx, []store.Incoming{{Result: r, Raw: raw}}); err != nil {
				t.Fatal(err)
			}
			s.Close()
			getenv := func(k string) string {
				if k == "EDGEBENCH_DB" {
					return db
				}
				return noEnv(k)
			}
			for _, args := range [][]string{{"devices"}, {"runs"}, {"show", "last"}, {"compare", "--by", "device"}, {"export", "--format", "json"}} {
				var out, errb bytes.Buffer
				if code := program().Run(ctx, &cli.Env{Stdout: &out, Stderr: &errb, Getenv: getenv}, args); code != 0 {
					t.Errorf("%v: exit %d: %s", args, code, errb.String())
				} else if !strings.Contains(out.String(), "pi-1") && !strings.Contains(out.String(), r.ID) {
					t.Errorf("%v does not show the stored result:\n%s", args, out.String())
				}
			}
		})
	}
}

// TestRunsNamesItsStatistic: runs shows a result's mean over its
// repetitions and the total of its errors, and says so.
func TestRunsNamesItsStatistic(t *testing.T) {
	ctx := context.Background()
	db := testenv.StoreDB(t, "sqlite")
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	r := fakeWire("lab", "pi-1", "nginx", 1000, 800, "")
	raw, _ := r.MarshalMsg(nil)
	if _, err := s.Ingest(ctx, []store.Incoming{{Result: r, Raw: raw}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	var out, errb bytes.Buffer
	if code := program().Run(ctx, &cli.Env{Stdout: &out, Stderr: &errb, Getenv: noEnv}, []string{"runs", "--db", db}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"MEAN REQ/S", "MEAN P50", "MEAN P99", "TOTAL ERRORS", "MEAN CPU %"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("runs does not say %q:\n%s", want, out.String())
		}
	}
}
