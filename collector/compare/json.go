package compare

import (
	"encoding/json"
	"io"
	"math"
	"strconv"

	"github.com/edgebench/edgebench/collector/group"
)

// num is a figure in JSON: null when it does not exist (NaN or infinite).
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

type summaryJSON struct {
	N          int `json:"n"`
	Sum        num `json:"sum"`
	Mean       num `json:"mean"`
	StdDev     num `json:"stdev"`
	Median     num `json:"median"`
	MedianLow  num `json:"median_ci95_low"`
	MedianHigh num `json:"median_ci95_high"`
	Min        num `json:"min"`
	Max        num `json:"max"`
	CILow      num `json:"ci95_low"` // of the mean
	CIHigh     num `json:"ci95_high"`
}

type deltaJSON struct {
	N1          int    `json:"n_base"`
	N2          int    `json:"n"`
	Base        num    `json:"base_median"`
	Other       num    `json:"median"`
	Pct         num    `json:"pct"`
	LowPct      num    `json:"pct_ci95_low"`
	HighPct     num    `json:"pct_ci95_high"`
	PctOf       string `json:"pct_of,omitempty"` // "ratio" or "shift" (stats.Delta)
	P           num    `json:"p"`
	Significant bool   `json:"significant"`
	Note        string `json:"note,omitempty"`
}

type groupJSON struct {
	Key       string                 `json:"key"`
	N         int                    `json:"n"`
	Throttled int                    `json:"throttled"`
	Invalid   int                    `json:"invalid"`
	GenBound  int                    `json:"generator_bound"`
	Stats     map[string]summaryJSON `json:"stats"`
	Deltas    map[string]deltaJSON   `json:"deltas,omitempty"`
}

type tableJSON struct {
	Spec   group.Spec  `json:"spec"`
	Base   string      `json:"base"`
	Groups []groupJSON `json:"groups"`
}

// WriteJSON writes the comparison as one JSON object, a table per spec;
// figures that do not exist (a median of no runs, an interval of too
// few) are null.
func (c *Comparison) WriteJSON(w io.Writer) error {
	out := struct {
		By               string      `json:"by"`
		Tested           []string    `json:"tested"`
		ExcludeThrottled bool        `json:"exclude_throttled"`
		ExcludeInvalid   bool        `json:"exclude_invalid"`
		Capped           int         `json:"capped,omitempty"`   // runs compared, the newest, of more that matched
		MaxRuns          int         `json:"max_runs,omitempty"` // the cap
		Tables           []tableJSON `json:"tables"`
	}{By: c.By, Tested: c.Tested, ExcludeThrottled: c.ExcludeThrottled, ExcludeInvalid: c.ExcludeInvalid, Capped: c.Capped,
		MaxRuns: c.MaxRuns, Tables: []tableJSON{}}
	for _, t := range c.Tables {
		tj := tableJSON{Spec: t.Spec, Base: t.Base, Groups: []groupJSON{}}
		for _, g := range t.Groups {
			gj := groupJSON{Key: g.Key, N: g.N, Throttled: g.Throttled, Invalid: g.Invalid, GenBound: g.GeneratorBound, Stats: map[string]summaryJSON{}}
			for k, s := range g.Stats {
				gj.Stats[k] = summaryJSON{s.N, num(s.Sum), num(s.Mean), num(s.StdDev), num(s.Median), num(s.MedianLow), num(s.MedianHigh),
					num(s.Min), num(s.Max), num(s.CILow), num(s.CIHigh)}
			}
			if len(g.Deltas) > 0 {
				gj.Deltas = map[string]deltaJSON{}
				for k, d := range g.Deltas {
					gj.Deltas[k] = deltaJSON{d.N1, d.N2, num(d.Base), num(d.Other), num(d.Pct), num(d.LowPct), num(d.HighPct), d.PctOf, num(d.P), d.Significant, d.Note}
				}
			}
			tj.Groups = append(tj.Groups, gj)
		}
		out.Tables = append(out.Tables, tj)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
