package verdict

import (
	"fmt"
	"strings"

	"github.com/edgebench/edgebench/loadgen/report"
)

// TextLines are the lines the text report prints after its throughput:
// in open loop the offered and the achieved rate, then the verdict, its
// other reasons on a second line.
func TextLines(v *Verdict, l *report.LoadResult) []string {
	var out []string
	if l != nil && l.Rate > 0 {
		out = append(out, fmt.Sprintf("  rate        offered %s req/s, achieved %.2f req/s (%.0f %%)", trim(l.Rate), l.RPS(), 100*l.RPS()/l.Rate))
	}
	if v == nil || len(v.Reasons) == 0 {
		return out
	}
	if v.Valid {
		out = append(out, fmt.Sprintf("  verdict     limited by %s: %s; valid", v.LimitedBy, v.Reasons[0]))
		if len(v.Reasons) > 1 {
			out = append(out, "              also: "+strings.Join(v.Reasons[1:], "; "))
		}
		return out
	}
	out = append(out, fmt.Sprintf("  verdict     NOT VALID, limited by %s: %s", v.LimitedBy, v.Reasons[0]))
	if len(v.Reasons) > 1 {
		out = append(out, "              also: "+strings.Join(v.Reasons[1:], "; "))
	}
	return out
}

// InsertText returns the text report text with lines inserted after its
// throughput line (at the end when it has none).
func InsertText(text string, lines []string) string {
	if len(lines) == 0 {
		return text
	}
	add := strings.Join(lines, "\n") + "\n"
	i := strings.Index(text, "\n  throughput ")
	if i < 0 {
		return text + add
	}
	j := strings.IndexByte(text[i+1:], '\n')
	if j < 0 {
		return text + "\n" + add
	}
	k := i + 1 + j + 1
	return text[:k] + add + text[k:]
}
