package compare

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/collector/store/storetest"
)

// TestCompareCapped: a comparison reads the newest runs as far as its
// cap and one more, and says so when more matched: the runs compared are
// that many, and the text names them and the cap; at the cap exactly it
// is not capped. Over HTTP max_runs goes to MaxRunsLimit, no further.
func TestCompareCapped(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		storetest.SeedCompare(t, s) // 20 runs
		for _, tc := range []struct{ max, capped int }{{7, 8}, {19, 20}, {20, 0}, {-1, 0}} {
			c, err := Runs(ctx, s, Options{By: "server", MaxRuns: tc.max})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, tb := range c.Tables {
				for _, g := range tb.Groups {
					n += g.N
				}
			}
			want := 20
			if tc.capped > 0 {
				want = tc.capped
			}
			if c.Capped != tc.capped || n != want {
				t.Errorf("--max-runs %d: capped %d with %d runs compared, want %d and %d", tc.max, c.Capped, n, tc.capped, want)
			}
			var out bytes.Buffer
			if err := c.WriteText(&out); err != nil {
				t.Fatal(err)
			}
			if said := strings.Contains(out.String(), "capped: only the newest"); said != (tc.capped > 0) {
				t.Errorf("--max-runs %d: capped said %v:\n%s", tc.max, said, out.String())
			}
		}
	})
	if o := (Options{}); o.maxRuns() != DefaultMaxRuns {
		t.Errorf("the default cap is %d", o.maxRuns())
	}
	for v, ok := range map[string]bool{"50000": true, "50001": false, "0": false, "20001": true} {
		if _, err := ParseQuery(url.Values{"max_runs": {v}}); (err == nil) != ok {
			t.Errorf("max_runs=%s: %v", v, err)
		}
	}
}
