package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/internal/golden"
	"github.com/edgebench/edgebench/probe"
)

// csvTimes are the sample times that start the lines of the CSV format.
var csvTimes = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT[^,]*,`)

// TestProbeRootGolden pins what `edgebench probe --root` prints of each
// fixture tree, as a table and as CSV: the trees do not change between two
// samples, so every rate is 0 and every instantaneous figure is the
// tree's. go test -run ProbeRootGolden -update rewrites the files after a
// wanted change.
func TestProbeRootGolden(t *testing.T) {
	for _, tree := range []string{"pi4/t0", "pi4/t1", "pi3/t0", "pi3/t1", "amd64/t0", "amd64/t1", "servers/t0"} {
		for _, format := range []string{"table", "csv"} {
			name := "probe-" + strings.ReplaceAll(tree, "/", "-") + "." + format + ".golden"
			t.Run(name, func(t *testing.T) {
				var out bytes.Buffer
				pf := probeFlags{interval: 10 * time.Millisecond, count: 2, format: format,
					root: filepath.Join("..", "..", "probe", "testdata", tree), watches: []probe.Watch{probe.ParseWatch("nginx")}}
				if err := runProbe(context.Background(), &out, pf); err != nil {
					t.Fatal(err)
				}
				got := out.Bytes()
				if format == "csv" {
					got = csvTimes.ReplaceAll(got, []byte("TIME,"))
				}
				golden.Check(t, name, got)
			})
		}
	}
}
