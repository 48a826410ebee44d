package stats

import "sync"

// tables are what the exact tests read again and again, computed once on
// first use and never changed after: the null distribution of U for
// samples of up to exactMax values each, and the normal quantile of the
// 95 % intervals. The change detector compares a series' windows at
// every result the collector stores; computing these each time took
// nearly all of a comparison's time (150 us of 155 us for 20 values
// against 8).
type tables struct {
	dist  [exactMax + 1][exactMax + 1][]float64 // dist[m][n]: uDistRows' counts of U
	total [exactMax + 1][exactMax + 1]float64   // their sums, C(m+n, m)
	p95   float64                               // 1 - (1-0.95)/2 as Compare computes it
	z95   float64                               // normalQuantile(p95)
}

// exactTables returns the tables, computing them on the first call.
var exactTables = sync.OnceValue(func() *tables {
	t := &tables{}
	rows := uDistRows(exactMax, exactMax)
	for m := range rows {
		for n := range rows[m] {
			t.dist[m][n] = rows[m][n]
			for _, c := range rows[m][n] {
				t.total[m][n] += c
			}
		}
	}
	conf := 0.95
	t.p95 = 1 - (1-conf)/2
	t.z95 = normalQuantile(t.p95)
	return t
})

// quantile is normalQuantile, from the table for the 95 % intervals.
func quantile(p float64) float64 {
	if t := exactTables(); p == t.p95 {
		return t.z95
	}
	return normalQuantile(p)
}
