package main

import (
	"fmt"
	"sort"
	"strings"

	"github.com/edgebench/edgebench/loadgen/report"
)

// redirectWarning is the line that warns of a run whose every answer was
// a redirect (3xx): a load test of a URL that redirects measures the
// redirect, not the page, and its "ok" counts hide it. Empty otherwise.
func redirectWarning(r *report.LoadResult) string {
	var all, redirects int64
	var codes []int
	for code, n := range r.StatusCodes {
		all += n
		if code >= 300 && code < 400 && n > 0 {
			redirects += n
			codes = append(codes, code)
		}
	}
	if all == 0 || redirects != all {
		return ""
	}
	sort.Ints(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("status %d: %d", c, r.StatusCodes[c]))
	}
	return fmt.Sprintf("edgebench: warning: every answer was a redirect (%s): this measured the redirect, not the page; load-test the URL it points to (its Location)",
		strings.Join(parts, ", "))
}
