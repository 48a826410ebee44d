package collector

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// This file asks the store for a comparison: the runs grouped in SQL, the
// label keys there are, and which one --by names.

// Compare groups the stored runs and compares them. A label key that no
// selected run has is a QueryError listing the keys there are. Where a
// run label and a system-info field or part of the spec share the key,
// the comparison's ByNote says which one it is by and how to ask for the
// other.
func (s *Store) Compare(ctx context.Context, o CompareOptions) (*Comparison, error) {
	if o.By == "" {
		o.By = "device"
	}
	if _, err := testedMetrics(o.Metrics); err != nil {
		return nil, err
	}
	if k, ok := strings.CutPrefix(o.By, "sys."); ok && !isSpecField(k) {
		if _, col := groupColumns[k]; !col {
			return nil, queryErrorf("no system field %q to group by: the system fields and parts of the spec are %s", Printable(k),
				strings.Join(groupKeys(nil), ", "))
		}
	}
	runs, err := s.GroupRuns(ctx, o.By, o.Filter) // with each run's verdict; --exclude-invalid's left out
	if err != nil {
		return nil, err
	}
	note := ""
	if len(runs) > 0 {
		labels, err := s.labelKeys(ctx, o.Filter)
		if err != nil {
			return nil, err
		}
		key, kind := ResolveGroupKey(o.By)
		switch {
		case kind == groupLabel && !slices.Contains(labels, key):
			return nil, queryErrorf("no run has %q to group by: the keys are %s", Printable(o.By), strings.Join(groupKeys(labels), ", "))
		case kind == groupLabelOrSystem && slices.Contains(labels, key):
			note = fmt.Sprintf("%s: the run label %s where a run has one, else the system field; --by sys.%s or label.%s for one of them",
				Printable(key), Printable(key), Printable(key), Printable(key))
		case kind == groupSpec && o.By == key && slices.Contains(labels, key):
			note = fmt.Sprintf("%s: the part of the spec, not the run label %s; --by label.%s for the label",
				Printable(key), Printable(key), Printable(key))
		}
	}
	c, err := BuildComparison(runs, o)
	if c != nil {
		c.ByNote = note
	}
	return c, err
}

// labelKeys lists the label keys of the succeeded results f selects.
func (s *Store) labelKeys(ctx context.Context, f Filter) ([]string, error) {
	where, args := s.d.where(f)
	rows, err := s.query(ctx, s.r, `SELECT DISTINCT j.key FROM results r, `+s.d.labelKeys()+`
		WHERE r.outcome = 'succeeded' AND `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("label keys: %w", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("label keys: %w", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("label keys: %w", err)
	}
	sort.Strings(keys)
	return keys, nil
}

// groupKeys are the keys a comparison can be by: the columns, the parts
// of the spec and the given labels.
func groupKeys(labels []string) []string {
	keys := make([]string, 0, len(groupColumns)+len(specFields)+len(labels))
	for k := range groupColumns {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	keys = append(keys, specFields...)
	for _, l := range labels {
		if _, col := groupColumns[l]; !col && !isSpecField(l) {
			keys = append(keys, Printable(l))
		} else {
			keys = append(keys, "label."+Printable(l))
		}
	}
	return keys
}

// testedMetrics checks the metrics to test: known, each once.
func testedMetrics(names []string) ([]string, error) {
	if len(names) == 0 {
		return []string{"rps", "p50", "p99"}, nil
	}
	if len(names) > len(Metrics) {
		return nil, queryErrorf("%d metrics: there are %d (%s)", len(names), len(Metrics), strings.Join(MetricNames(), ", "))
	}
	for i, name := range names {
		if _, ok := MetricByName(name); !ok {
			return nil, queryErrorf("unknown metric %q (want one of %s)", Printable(name), strings.Join(MetricNames(), ", "))
		}
		if slices.Contains(names[:i], name) {
			return nil, queryErrorf("metric %q given twice", name)
		}
	}
	return names, nil
}
