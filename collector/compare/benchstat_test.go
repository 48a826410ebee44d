package compare

import (
	"bytes"
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
	"github.com/edgebench/edgebench/internal/testenv"
)

// TestExportReadByBenchstat feeds the benchfmt export to benchstat itself
// (a tool of this module: go tool benchstat) and checks that it compares
// the servers: kangle's runs are all faster than nginx's in the fixture,
// so req/s must differ with p=0.008 for 5 runs against 5 on each device.
func TestExportReadByBenchstat(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		goBin, err := exec.LookPath("go")
		if err != nil {
			testenv.Missing(t, "go is not on PATH, so benchstat cannot run", "put the Go toolchain on PATH")
		}
		s := e.Open(t)
		storetest.SeedCompare(t, s)
		var b bytes.Buffer
		if err := Export(context.Background(), &b, s, "benchfmt", store.Filter{}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "runs.txt")
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(goBin, "tool", "benchstat", "-col", "server", path).CombinedOutput()
		if err != nil {
			t.Fatalf("benchstat: %v\n%s", err, out)
		}
		text := string(out)
		t.Logf("benchstat -col server:\n%s", text)
		for _, want := range []string{"device: pi-1", "device: pi-2", "nginx", "kangle", "req/s", "sec/op", "p99-sec"} {
			if !strings.Contains(text, want) {
				t.Errorf("benchstat output lacks %q", want)
			}
		}
		if strings.Contains(text, "parsing") || strings.Contains(text, "syntax") {
			t.Errorf("benchstat could not read every line")
		}
		// One req/s delta per device table, significant.
		if n := len(regexp.MustCompile(`\+\d+\.\d+% \(p=0\.008 n=5\)`).FindAllString(text, -1)); n < 2 {
			t.Errorf("%d significant increases (p=0.008 n=5) in benchstat's output, want one per device at least", n)
		}
		// compare's change in % is a ratio, as benchstat's (the ratio of
		// the medians): on these runs the two agree within a point.
		for _, part := range regexp.MustCompile(`(?m)^device: `).Split(text, -1)[1:] {
			dev, _, _ := strings.Cut(part, "\n")
			c, err := Runs(context.Background(), s, Options{By: "server", Metrics: []string{"rps", "p99"}, Base: "nginx", Filter: store.Filter{Device: dev}})
			if err != nil || len(c.Tables) != 1 || len(c.Tables[0].Groups) != 2 {
				t.Fatalf("compare of %s: %v", dev, err)
			}
			for name, unit := range map[string]string{"rps": "req/s", "p99": "p99-sec"} {
				m := regexp.MustCompile(`│\s+` + regexp.QuoteMeta(unit) + `\s+vs base\s+│\n.*?([+-]\d+\.\d+)% \(p=`).FindStringSubmatch(part)
				if m == nil {
					t.Errorf("%s: no %s delta in benchstat's output", dev, unit)
					continue
				}
				theirs, _ := strconv.ParseFloat(m[1], 64)
				d := c.Tables[0].Groups[1].Deltas[name]
				if math.Abs(d.Pct-theirs) > 1 || !d.Significant {
					t.Errorf("%s %s: compare %+.2f%% (significant %v), benchstat %+.2f%%", dev, name, d.Pct, d.Significant, theirs)
				}
			}
		}
	})
}
