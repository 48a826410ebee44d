package compare

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/wire"
)

// This file reads a comparison asked over HTTP (the API and the web page).

// compareParams are the parameters of a comparison asked over HTTP, and
// maxParam the longest value one may have: a query is checked before
// any work (5,000 metrics would cost seconds of CPU).
var compareParams = []string{"by", "metric", "base", "fleet", "device", "cmd", "exclude_throttled", "exclude_invalid",
	"columns", "same_path", "max_runs"}

const maxParam = 256

// ParseQuery reads a comparison from URL parameters: by, metric
// (comma-separated), base, fleet, device, cmd, exclude_throttled,
// exclude_invalid, columns (as --columns), same_path and max_runs (at
// most MaxRunsLimit: a request over HTTP reads no more), each at most
// once and at most 256 bytes long. Anything else is a QueryError.
func ParseQuery(q url.Values) (Options, error) {
	o := Options{By: q.Get("by"), Base: q.Get("base"), Filter: store.Filter{Fleet: q.Get("fleet"), Device: q.Get("device"),
		Command: q.Get("cmd"), ExcludeThrottled: q.Get("exclude_throttled") != "",
		ExcludeInvalid: q.Get("exclude_invalid") != ""}, SamePath: q.Get("same_path") != ""}
	if len(q) > len(compareParams) {
		return o, queryErrorf("%d parameters: a comparison takes %s", len(q), strings.Join(compareParams, ", "))
	}
	for k, vs := range q {
		switch {
		case !slices.Contains(compareParams, k):
			return o, queryErrorf("unknown parameter %q: a comparison takes %s", escape.Printable(wire.Clip(k)), strings.Join(compareParams, ", "))
		case len(vs) > 1:
			return o, queryErrorf("%s given %d times: give it once", k, len(vs))
		case len(vs[0]) > maxParam:
			return o, queryErrorf("%s is %d bytes long: at most %d", k, len(vs[0]), maxParam)
		}
	}
	if m := q.Get("metric"); m != "" {
		o.Metrics = strings.Split(m, ",")
	}
	if v := q.Get("max_runs"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxRunsLimit {
			return o, queryErrorf("max_runs %q: want a number from 1 to %d", escape.Printable(wire.Clip(v)), MaxRunsLimit)
		}
		o.MaxRuns = n
	}
	var err error
	if o.Columns, err = ParseColumns(q.Get("columns")); err != nil {
		return o, err
	}
	_, err = testedMetrics(o.Metrics)
	return o, err
}

// FromQuery is Runs of the comparison ParseQuery reads from q.
func FromQuery(ctx context.Context, st Store, q url.Values) (*Comparison, error) {
	o, err := ParseQuery(q)
	if err != nil {
		return nil, err
	}
	return Runs(ctx, st, o)
}
