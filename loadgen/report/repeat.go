package report

import "math"

// Repeated summarises the runs of --repeat.
type Repeated struct {
	Runs int     `json:"runs"`
	RPS  Spread  `json:"rps"`
	P50  Spread  `json:"p50_us"`
	P99  Spread  `json:"p99_us"`
	RSD  float64 `json:"rps_rsd_pct"` // relative stdev of req/s, %
}

// Spread is one figure across runs: its mean, sample standard deviation,
// least and greatest, and a 95 % confidence interval (Student's t).
//
// The figures it spreads (req/s, latencies) are positive and vary by
// factors rather than by amounts, and the mean's interval of a few spread
// runs reaches below zero (a p50 of [-68.46, 1554.46] us over three runs):
// the interval is computed on their logarithms and brought back, the
// interval of their geometric mean, GeoMean / f to GeoMean x f, which
// stays positive and, for the same reason, a ratio of two such figures
// stays above -100 %. CIOf says so: "geomean". When a figure is 0 or less
// (a run that completed nothing) there is no logarithm: the interval is
// the mean's, its lower end clamped at 0, and CIOf is "mean".
type Spread struct {
	Mean    float64 `json:"mean"`
	StdDev  float64 `json:"stdev"`
	GeoMean float64 `json:"geomean,omitempty"` // 0 when a figure is 0 or less
	CILow   float64 `json:"ci95_low"`
	CIHigh  float64 `json:"ci95_high"`
	CIOf    string  `json:"ci95_of,omitempty"` // "geomean" (on logarithms) or "mean" (clamped at 0)
	Min     float64 `json:"min"`
	Max     float64 `json:"max"`
}

// Summarize computes the spread of req/s, p50 and p99 over repeated runs.
// A run without a latency (no response completed in its window) is left
// out of the spreads of p50 and p99: its 0 is a figure no request backs.
func Summarize(runs []*LoadResult) Repeated {
	var rps, p50, p99 []float64
	for _, r := range runs {
		rps = append(rps, r.RPS())
		if r.NoLatency() != "" {
			continue
		}
		p50 = append(p50, float64(r.Latency.Quantile(0.50)))
		p99 = append(p99, float64(r.Latency.Quantile(0.99)))
	}
	s := Repeated{Runs: len(runs), RPS: spreadOf(rps), P50: spreadOf(p50), P99: spreadOf(p99)}
	if s.RPS.Mean > 0 {
		s.RSD = 100 * s.RPS.StdDev / s.RPS.Mean
	}
	return s
}

func spreadOf(xs []float64) Spread {
	if len(xs) == 0 {
		return Spread{}
	}
	var s Spread
	s.Min, s.Max = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		s.Mean += x
		s.Min, s.Max = math.Min(s.Min, x), math.Max(s.Max, x)
	}
	n := float64(len(xs))
	s.Mean /= n
	s.StdDev = stdDev(xs, s.Mean)
	t := StudentT95(len(xs)-1) / math.Sqrt(n)
	if s.Min <= 0 {
		half := t * s.StdDev
		s.CILow, s.CIHigh, s.CIOf = math.Max(s.Mean-half, 0), s.Mean+half, "mean"
		return s
	}
	if len(xs) == 1 {
		s.GeoMean, s.CILow, s.CIHigh, s.CIOf = xs[0], xs[0], xs[0], "geomean"
		return s
	}
	logs := make([]float64, len(xs))
	var m float64
	for i, x := range xs {
		logs[i] = math.Log(x)
		m += logs[i]
	}
	m /= n
	half := t * stdDev(logs, m)
	s.GeoMean, s.CILow, s.CIHigh, s.CIOf = math.Exp(m), math.Exp(m-half), math.Exp(m+half), "geomean"
	return s
}

// stdDev is the sample standard deviation of xs around their mean m; 0
// for fewer than 2.
func stdDev(xs []float64, m float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// StudentT95 is the two-sided 95 % critical value of Student's t with df
// degrees of freedom (0 for df < 1).
func StudentT95(df int) float64 {
	table := [...]float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
		2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093,
		2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	switch {
	case df < 1:
		return 0
	case df < len(table):
		return table[df]
	case df < 60:
		return 2.000 + (2.042-2.000)*float64(60-df)/30
	case df < 120:
		return 1.980 + (2.000-1.980)*float64(120-df)/60
	default:
		return 1.960
	}
}
