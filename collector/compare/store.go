package compare

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/store"
)

// This file asks the store for a comparison: the runs grouped in SQL, the
// label keys there are, and which one --by names.

// Store is what a comparison reads of the store (a *store.Store).
type Store interface {
	// GroupRuns returns the succeeded runs f selects, each with its
	// spec and its group under by.
	GroupRuns(ctx context.Context, by string, f store.Filter) ([]store.GroupedRun, error)
	// LabelKeys lists the label keys of the succeeded results f selects.
	LabelKeys(ctx context.Context, f store.Filter) ([]string, error)
}

// Runs groups the runs of st that o selects and compares them. A label key that no
// selected run has is a QueryError listing the keys there are. Where a
// run label and a system-info field or part of the spec share the key,
// the comparison's ByNote says which one it is by and how to ask for the
// other.
func Runs(ctx context.Context, st Store, o Options) (*Comparison, error) {
	if o.By == "" {
		o.By = "device"
	}
	if _, err := testedMetrics(o.Metrics); err != nil {
		return nil, err
	}
	if k, ok := strings.CutPrefix(o.By, "sys."); ok && !group.IsSpecField(k) {
		if !group.IsSystemField(k) {
			return nil, queryErrorf("no system field %q to group by: the system fields and parts of the spec are %s", escape.Printable(k),
				strings.Join(group.Keys(nil), ", "))
		}
	}
	f := o.Filter
	limit := o.maxRuns()
	if limit > 0 {
		f.Limit = limit + 1 // one more: are there more than the cap?
	}
	runs, err := st.GroupRuns(ctx, o.By, f) // with each run's verdict; --exclude-invalid's left out
	if err != nil {
		return nil, err
	}
	note := ""
	if len(runs) > 0 {
		labels, err := st.LabelKeys(ctx, f)
		if err != nil {
			return nil, err
		}
		key, kind := group.Resolve(o.By)
		switch {
		case kind == group.Label && !slices.Contains(labels, key):
			return nil, queryErrorf("no run has %q to group by: the keys are %s", escape.Printable(o.By), strings.Join(group.Keys(labels), ", "))
		case kind == group.LabelOrSystem && slices.Contains(labels, key):
			note = fmt.Sprintf("%s: the run label %s where a run has one, else the system field; --by sys.%s or label.%s for one of them",
				escape.Printable(key), escape.Printable(key), escape.Printable(key), escape.Printable(key))
		case kind == group.SpecPart && o.By == key && slices.Contains(labels, key):
			note = fmt.Sprintf("%s: the part of the spec, not the run label %s; --by label.%s for the label",
				escape.Printable(key), escape.Printable(key), escape.Printable(key))
		}
	}
	c, err := Build(runs, o)
	if c != nil {
		c.ByNote = note
		if limit > 0 && len(runs) > limit {
			c.Capped, c.MaxRuns = len(runs), limit
		}
	}
	return c, err
}

// DefaultMaxRuns is how many runs a comparison reads at most unless told
// otherwise (Options.MaxRuns): the newest received. Beyond it a
// comparison says it was capped and how to narrow it. 20,000 runs are 80
// of each of 250 devices (a test needs 4 a group) and cost about 0.7 s
// of CPU to read and compare, where 50,000 cost 1.7 s (bench/README.md):
// its cost is bounded whatever the history holds.
const DefaultMaxRuns = 20000

// MaxRunsLimit is the most runs a comparison asked over HTTP may read
// (max_runs).
const MaxRunsLimit = 50000

// maxRuns is the cap of o: DefaultMaxRuns unless set, 0 for none.
func (o Options) maxRuns() int {
	switch {
	case o.MaxRuns == 0:
		return DefaultMaxRuns
	case o.MaxRuns < 0:
		return 0
	}
	return o.MaxRuns
}

// testedMetrics checks the metrics to test: known, each once.
func testedMetrics(names []string) ([]string, error) {
	if len(names) == 0 {
		return []string{"rps", "p50", "p99"}, nil
	}
	if len(names) > len(metrics) {
		return nil, queryErrorf("%d metrics: there are %d (%s)", len(names), len(metrics), strings.Join(MetricNames(), ", "))
	}
	for i, name := range names {
		if _, ok := MetricByName(name); !ok {
			return nil, queryErrorf("unknown metric %q (want one of %s)", escape.Printable(name), strings.Join(MetricNames(), ", "))
		}
		if slices.Contains(names[:i], name) {
			return nil, queryErrorf("metric %q given twice", name)
		}
	}
	return names, nil
}
