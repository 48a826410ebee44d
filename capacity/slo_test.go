package capacity

import (
	"strings"
	"testing"
)

// A mistake in a long --slo quotes at most 80 bytes of the term, not
// all of it.
func TestParseSLOClipsLongTerms(t *testing.T) {
	for _, bad := range []string{
		"p99<" + strings.Repeat("9", 100_000) + "x",
		strings.Repeat("a", 100_000) + "<5ms",
		"p99<50ms," + strings.Repeat("z", 100_000),
	} {
		_, err := ParseSLO(bad)
		if err == nil || len(err.Error()) > 300 || !strings.Contains(err.Error(), `..."`) {
			t.Errorf("%d bytes: %d-byte error %.200v", len(bad), len(errLen(err)), err)
		}
	}
	if _, err := ParseSLO("p98<5ms"); err == nil || err.Error() != `"p98<5ms": unknown metric "p98": want p50, p90, p99, p99.9, max, errors or timeouts` {
		t.Errorf("%v", err)
	}
}

func errLen(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// One parser for the tolerance of edgebench capacity and of the
// collector's trigger: 5% and 0.05 are the same; NaN, 0 and 100 % are not
// tolerances.
func TestParseTolerance(t *testing.T) {
	for in, want := range map[string]float64{"5%": 0.05, "0.05": 0.05, " 2.5 % ": 0.025, "0.5": 0.5, "99%": 0.99} {
		if got, err := ParseTolerance(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "5", "100%", "0", "0%", "-5%", "NaN", "NaN%", "Inf", "five", "5%%", "1"} {
		if got, err := ParseTolerance(in); err == nil {
			t.Errorf("%q: %v, want an error", in, got)
		}
	}
}
