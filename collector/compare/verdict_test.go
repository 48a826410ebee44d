package compare

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/storetest"
)

// compare counts the runs that are not valid, says so, leaves them out on
// demand, and states no difference against runs the generator limited.
func TestCompareVerdicts(t *testing.T) {
	storetest.EachEngine(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		storetest.SeedVerdicts(t, s)
		c, err := Runs(ctx, s, Options{By: "server", Base: "nginx"})
		if err != nil || len(c.Tables) != 1 || len(c.Tables[0].Groups) != 2 {
			t.Fatal(c, err)
		}
		n, k := c.Tables[0].Groups[0], c.Tables[0].Groups[1]
		if n.Invalid != 0 || n.GeneratorBound != 0 || k.Invalid != k.N || k.GeneratorBound != k.N || k.N == 0 {
			t.Errorf("nginx %d/%d, kangle %d/%d of %d", n.Invalid, n.GeneratorBound, k.Invalid, k.GeneratorBound, k.N)
		}
		if d := k.Deltas["rps"]; d.Significant || !strings.Contains(d.Note, "load generator") {
			t.Errorf("a difference against generator-bound runs: %+v", d)
		}
		var out bytes.Buffer
		c.WriteText(&out)
		if !strings.Contains(out.String(), "runs not valid by their verdict") || !strings.Contains(out.String(), "--exclude-invalid") {
			t.Errorf("compare does not flag the invalid runs:\n%s", out.String())
		}
		c, err = Runs(ctx, s, Options{By: "server", Filter: store.Filter{ExcludeInvalid: true}})
		if err != nil || len(c.Tables) != 1 || len(c.Tables[0].Groups) != 1 || c.Tables[0].Groups[0].Key != "nginx" {
			t.Fatalf("--exclude-invalid: %+v %v", c, err)
		}
	})
}
