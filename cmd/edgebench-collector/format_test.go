package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/internal/cli"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// TestListingsAsJSON: devices and runs take --format json (as compare and
// export do) and print what a script decodes; another format is a usage
// mistake of one line.
func TestListingsAsJSON(t *testing.T) {
	ctx := context.Background()
	db := testenv.StoreDB(t, "sqlite")
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	info := &wire.DeviceInfo{Board: "pi4", OS: "debian"}
	if _, err := s.SetStatus(ctx, "lab", "pi-1", &wire.Status{V: 1, State: wire.StatusOnline, BootID: "b", Info: info}); err != nil {
		t.Fatal(err)
	}
	var batch []store.Incoming
	for i := range 2 {
		r := fakeWire("lab", "pi-1", "nginx", 1000+float64(i), 800, "")
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

	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := program().Run(ctx, &cli.Env{Stdout: &out, Stderr: &errb, Getenv: noEnv}, append(args, "--db", db))
		return code, out.String(), errb.String()
	}
	code, out, errs := run("devices", "--format", "json")
	var devs []store.Device
	if err := json.Unmarshal([]byte(out), &devs); code != 0 || err != nil || len(devs) != 1 || devs[0].ID != "pi-1" || devs[0].Info == nil || devs[0].Info.Board != "pi4" {
		t.Errorf("devices --format json: exit %d, %v, %+v\n%s%s", code, err, devs, out, errs)
	}
	code, out, errs = run("runs", "--format", "json")
	var rows []store.RunRow
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil || len(rows) != 2 || rows[0].Device != "pi-1" || rows[0].RPS == 0 {
		t.Errorf("runs --format json: exit %d, %v, %+v\n%s%s", code, err, rows, out, errs)
	}
	// The table stays the default.
	if code, out, _ := run("runs"); code != 0 || !strings.HasPrefix(out, "RUN") {
		t.Errorf("runs: exit %d\n%s", code, out)
	}
	for _, cmd := range []string{"devices", "runs"} {
		code, out, errs := run(cmd, "--format", "xml")
		if code != 2 || out != "" || errs != "edgebench-collector "+cmd+": --format \"xml\": want text or json\n" {
			t.Errorf("%s --format xml: exit %d, stdout %q, stderr %q", cmd, code, out, errs)
		}
	}
}
