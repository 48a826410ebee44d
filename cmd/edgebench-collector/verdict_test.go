package main

import (
	"os"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/collector/show"
	"github.com/edgebench/edgebench/wire"
)

func frozenResult(t *testing.T, name string) *wire.Result {
	t.Helper()
	b, err := os.ReadFile("../../wire/testdata/v1/" + name + ".msgpack")
	if err != nil {
		t.Fatal(err)
	}
	r, err := wire.DecodeResult(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// show prints each run's verdict after its throughput, and --repeat
// auto's outcome; a result recorded before verdicts shows as before.
func TestShowVerdict(t *testing.T) {
	var b strings.Builder
	if err := show.Write(&b, frozenResult(t, "result-loadtest-verdict"), "edgebench", -1); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"  verdict     limited by server: nginx at 99 % of one core",
		"  verdict     NOT VALID, limited by generator: edgebench itself used 99 %",
		"--repeat auto: not stable (15.7 %) after 2 runs",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	if i := strings.Index(out, "  throughput "); i < 0 || !strings.HasPrefix(out[strings.IndexByte(out[i:], '\n')+i+1:], "  verdict ") {
		t.Errorf("the verdict is not right after the throughput:\n%s", out)
	}
	b.Reset()
	if err := show.Write(&b, frozenResult(t, "result-loadtest"), "edgebench", -1); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "verdict") || !strings.Contains(b.String(), "  throughput ") {
		t.Errorf("an old result shows a verdict, or no report:\n%s", b.String())
	}
}
