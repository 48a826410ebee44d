package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Config is a capacity search.
type Config struct {
	SLO       SLO
	Start     float64       // first trial's rate, requests/s; default 50
	Growth    float64       // the ramp's factor between trials; default 2
	Tolerance float64       // relative width the bisection stops at; default 0.05
	MinRate   float64       // below it no rate meets the SLO; default 1
	MaxRate   float64       // the highest rate tried (a policy's cap); default 1e6
	Warmup    time.Duration // before each trial's window; default 2s, negative: none
	Duration  time.Duration // each trial's measured window; default 5s
	Final     time.Duration // the confirming trial's window; default 3 x Duration
	// Budget bounds the trials' total time (warm-ups included); 0: none.
	Budget time.Duration
	// MaxTrials bounds the number of trials; default 40.
	MaxTrials int
	// MaxRepeats bounds the final trials, and the trials at one rate
	// when its results disagree; default 3.
	MaxRepeats int
}

func (c Config) withDefaults() (Config, error) {
	def := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Start, 50)
	def(&c.Growth, 2)
	def(&c.Tolerance, 0.05)
	def(&c.MinRate, 1)
	def(&c.MaxRate, 1e6)
	if c.Warmup == 0 {
		c.Warmup = 2 * time.Second
	}
	if c.Duration == 0 {
		c.Duration = 5 * time.Second
	}
	if c.Final == 0 {
		c.Final = 3 * c.Duration
	}
	if c.MaxTrials == 0 {
		c.MaxTrials = 40
	}
	if c.MaxRepeats == 0 {
		c.MaxRepeats = 3
	}
	switch {
	case len(c.SLO) == 0:
		return c, errors.New("no SLO")
	case !(c.Growth > 1 && c.Growth <= 100):
		return c, fmt.Errorf("growth %v: want above 1", c.Growth)
	case !(c.Tolerance > 0 && c.Tolerance < 1):
		return c, fmt.Errorf("tolerance %v: want between 0 and 1 (0.05 is 5 %%)", c.Tolerance)
	case !(c.MinRate > 0 && c.Start >= c.MinRate && c.MaxRate >= c.Start) || math.IsInf(c.MaxRate, 0):
		return c, fmt.Errorf("rates: want 0 < min (%v) <= start (%v) <= max (%v)", c.MinRate, c.Start, c.MaxRate)
	case c.Duration <= 0 || c.Final < c.Duration || c.Budget < 0:
		return c, errors.New("durations: want a trial > 0 and a final trial at least as long")
	case c.MaxTrials < 2 || c.MaxRepeats < 1:
		return c, errors.New("want at least 2 trials and 1 per rate")
	}
	return c, nil
}

// Kind says why a trial was run.
type Kind string

// The kinds of trial.
const (
	Ramp    Kind = "ramp"    // the exponential ramp up (or down, when the first rate fails)
	Bisect  Kind = "bisect"  // halving the interval between the best pass and the lowest fail
	Recheck Kind = "recheck" // a rate measured again: an upper bound confirmed, or results that disagree
	Final   Kind = "final"   // the longer trial that confirms the answer
)

// Trial is a trial the search asks for.
type Trial struct {
	N        int           // 1, 2, ...
	Kind     Kind          //
	Rate     float64       // offered, requests/s
	Warmup   time.Duration // not measured
	Duration time.Duration // the measured window
}

// Record is a trial run and its outcome.
type Record struct {
	Trial
	Observation
	Judgement
}

// Limit says what ended a search.
type Limit string

// What ended a search.
const (
	BySLO       Limit = "slo"       // bracketed by a passing and a failing rate: the answer
	ByGenerator Limit = "generator" // the generator limited a trial (its threads, or its cores shared): a lower bound
	ByRateCap   Limit = "rate_cap"  // the highest rate allowed passed: a lower bound
	ByBudget    Limit = "budget"    // the time or trial budget ran out first
	NoRate      Limit = "none"      // not even the lowest rate met the SLO
)

// Result is a search's answer.
type Result struct {
	Capacity float64 // the highest rate found to meet the SLO (0: none)
	// AtLeast: Capacity is a lower bound, not the capacity (the generator
	// ran out first, or the rate cap was reached).
	AtLeast bool
	Limit   Limit
	// Confirmed: Capacity passed the longer final trial.
	Confirmed bool
	// NonMonotonic: results disagreed (trials at one rate, or a final
	// trial that failed where a short one passed) and were measured
	// again.
	NonMonotonic bool
	// UpperBound is the lowest failing rate (0: none).
	UpperBound float64
	Reason     string // what ended the search, with its figures
	Records    []Record
}

// load is what the trials at one rate said.
type load struct {
	pass, fail int
	final      int // 1: a final trial passed, -1: one failed
}

// verdict: 1 pass, -1 fail, 0 undecided (as many passes as fails).
func (l *load) verdict() int {
	if l.final != 0 {
		return l.final
	}
	switch {
	case l.pass > l.fail:
		return 1
	case l.fail > l.pass:
		return -1
	}
	return 0
}

func (l *load) trials() int { return l.pass + l.fail }

// Search is the capacity search as a state machine: Next says which
// trial to run, Observe takes what it measured, until Next says done;
// then Result. It keeps no clock and opens no socket: the caller runs
// the trials (the open-loop engine, or a simulation).
//
// The search, after RFC 2544's throughput search and MLRsearch: an
// exponential ramp from Start until a trial fails (its failure measured
// twice, as one noisy trial would otherwise bound the whole search), then
// a bisection between the highest passing and the lowest failing rate
// until they are within Tolerance of each other; the highest passing rate
// is then run again for Final. A rate's verdict is the majority of its
// trials, a final trial overriding them; trials run only between the
// highest pass and the lowest fail, so the verdicts stay in the order of
// the rates. Results that disagree
// are measured again rather than trusted once: a rate whose trials split
// gets another, and a final trial that fails where the short one passed
// makes that rate an upper bound and the search goes on below it.
// A trial the run verdict calls the generator's (Observation.Generator)
// ends the search with a lower bound.
type Search struct {
	cfg     Config
	loads   map[float64]*load
	records []Record
	pending *Trial
	spent   time.Duration
	done    bool
	res     Result
	finals  int
	nonMono bool
}

// New starts a search.
func New(cfg Config) (*Search, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Search{cfg: cfg, loads: map[float64]*load{}}, nil
}

// Config is the search's configuration, defaults filled in.
func (s *Search) Config() Config { return s.cfg }

// roundRate keeps three significant digits (at least 0.1 req/s), so that
// rates print as they are and a rate tried again is the same key.
func roundRate(r float64) float64 {
	if r <= 0 {
		return 0
	}
	mag := math.Pow(10, math.Floor(math.Log10(r))-2)
	mag = math.Max(mag, 0.1)
	return math.Round(r/mag) * mag
}

// bounds returns the highest rate whose verdict is a pass and the lowest
// whose verdict is a fail (0 when none), and the lowest undecided rate.
func (s *Search) bounds() (lo, hi, undecided float64) {
	rates := make([]float64, 0, len(s.loads))
	for r := range s.loads {
		rates = append(rates, r)
	}
	sort.Float64s(rates)
	for _, r := range rates {
		switch s.loads[r].verdict() {
		case 1:
			lo = r
		case -1:
			if hi == 0 {
				hi = r
			}
		default:
			if undecided == 0 {
				undecided = r
			}
		}
	}
	return lo, hi, undecided
}

// passBelow is the highest passing rate below r.
func (s *Search) passBelow(r float64) float64 {
	best := 0.0
	for k, l := range s.loads {
		if k < r && l.verdict() == 1 && k > best {
			best = k
		}
	}
	return best
}

func (s *Search) finish(capacity float64, limit Limit, reason string) {
	s.done = true
	s.pending = nil
	s.res.Capacity = capacity
	s.res.Limit = limit
	s.res.AtLeast = limit == ByGenerator && capacity > 0 || limit == ByRateCap
	if l := s.loads[capacity]; l != nil && l.final == 1 {
		s.res.Confirmed = true
	}
	s.res.Reason = reason
	s.res.NonMonotonic = s.nonMono
}

// Next returns the trial to run next, or false when the search is over.
// Until that trial is observed, Next returns it again.
func (s *Search) Next() (Trial, bool) {
	if s.done {
		return Trial{}, false
	}
	if s.pending != nil {
		return *s.pending, true
	}
	t, ok := s.decide()
	if !ok {
		return Trial{}, false
	}
	t.N = len(s.records) + 1
	t.Warmup = max(s.cfg.Warmup, 0)
	if t.Duration == 0 {
		t.Duration = s.cfg.Duration
	}
	if len(s.records) >= s.cfg.MaxTrials || s.cfg.Budget > 0 && s.spent+t.Warmup+t.Duration > s.cfg.Budget {
		lo, hi, _ := s.bounds()
		if hi != 0 {
			lo = s.passBelow(hi)
		}
		s.res.UpperBound = hi
		s.finish(lo, ByBudget, fmt.Sprintf("the search's budget (%d trials, %v) ran out before the next trial at %.0f req/s", s.cfg.MaxTrials, s.cfg.Budget, t.Rate))
		return Trial{}, false
	}
	s.pending = &t
	return t, true
}

func (s *Search) decide() (Trial, bool) {
	cfg := s.cfg
	lo, hi, undecided := s.bounds()
	if undecided != 0 {
		// Its trials disagree: one more decides.
		s.nonMono = true
		return Trial{Kind: Recheck, Rate: undecided}, true
	}
	s.res.UpperBound = hi
	if hi == 0 {
		// Ramping up.
		if lo == 0 {
			return Trial{Kind: Ramp, Rate: roundRate(cfg.Start)}, true
		}
		if lo >= cfg.MaxRate {
			return s.confirm(lo, ByRateCap, fmt.Sprintf("the highest rate allowed, %.0f req/s, met the SLO", lo))
		}
		return Trial{Kind: Ramp, Rate: math.Min(roundRate(lo*cfg.Growth), cfg.MaxRate)}, true
	}
	if l := s.loads[hi]; l.final == 0 && l.trials() < 2 && l.verdict() == -1 && s.onlyFailAbove(lo, hi) {
		// The first failure bounds the search: one noisy trial would
		// put the answer far below the truth.
		return Trial{Kind: Recheck, Rate: hi}, true
	}
	if lo == 0 {
		// The first rate failed: ramp down.
		next := roundRate(hi / cfg.Growth)
		if next < cfg.MinRate {
			s.finish(0, NoRate, fmt.Sprintf("no rate of at least %v req/s met the SLO (%.0f req/s failed)", cfg.MinRate, hi))
			return Trial{}, false
		}
		return Trial{Kind: Ramp, Rate: next}, true
	}
	if (hi-lo)/hi > cfg.Tolerance {
		mid := roundRate((lo + hi) / 2)
		if mid > lo && mid < hi {
			return Trial{Kind: Bisect, Rate: mid}, true
		}
	}
	return s.confirm(lo, BySLO, fmt.Sprintf("%.0f req/s met the SLO and %.0f req/s did not", lo, hi))
}

// onlyFailAbove: no rate between lo and hi was tried, and hi is the
// lowest failure so far (the ramp's end).
func (s *Search) onlyFailAbove(lo, hi float64) bool {
	for r, l := range s.loads {
		if r > hi && l.verdict() == -1 {
			return false
		}
	}
	return true
}

// confirm runs the final trial at rate, or ends the search when it passed
// one.
func (s *Search) confirm(rate float64, limit Limit, reason string) (Trial, bool) {
	if s.loads[rate].final == 1 {
		s.finish(rate, limit, reason)
		return Trial{}, false
	}
	if s.finals >= s.cfg.MaxRepeats {
		s.finish(rate, limit, reason+"; no final trial passed")
		return Trial{}, false
	}
	return Trial{Kind: Final, Rate: rate, Duration: s.cfg.Final}, true
}

// Observe takes what the pending trial measured and judges it.
func (s *Search) Observe(o Observation) (Record, error) {
	if s.pending == nil {
		return Record{}, errors.New("capacity: no trial to observe")
	}
	t := *s.pending
	s.pending = nil
	s.spent += t.Warmup + t.Duration
	j := Judge(s.cfg.SLO, o)
	rec := Record{Trial: t, Observation: o, Judgement: j}
	s.records = append(s.records, rec)
	s.res.Records = s.records
	if j.GeneratorLimited {
		lo := s.passBelow(t.Rate)
		if j.Pass && o.Achieved >= Delivered*o.Offered {
			// The rate delivered and the SLO met with the generator at
			// its limit: its own delays count in the latency (from the
			// scheduled send), so the server did at least as well.
			lo = t.Rate
		}
		s.finish(lo, ByGenerator, fmt.Sprintf("at %.0f req/s offered, %.0f achieved: %s", t.Rate, o.Achieved, j.GeneratorReason))
		return rec, nil
	}
	l := s.loads[t.Rate]
	if l == nil {
		l = &load{}
		s.loads[t.Rate] = l
	}
	switch {
	case t.Kind == Final:
		s.finals++
		if j.Pass {
			l.final = 1
		} else {
			l.final = -1
			s.nonMono = true // a rate that passed failed for longer
		}
	case j.Pass:
		l.pass++
	default:
		l.fail++
	}
	return rec, nil
}

// Done reports whether the search is over.
func (s *Search) Done() bool { return s.done }

// Result is the search's answer, once Next said it was done.
func (s *Search) Result() Result {
	r := s.res
	r.Records = s.records
	return r
}

// Answer is the result in one sentence.
func (r Result) Answer() string {
	switch r.Limit {
	case NoRate:
		// The lowest rate tried, and why it failed: the figure to act on.
		var low *Record
		for i := range r.Records {
			if rec := &r.Records[i]; !rec.Pass && (low == nil || rec.Rate < low.Rate) {
				low = rec
			}
		}
		if low == nil {
			return "no rate met the SLO: " + r.Reason
		}
		why := strings.Join(low.Reasons, "; ")
		if low.GeneratorLimited {
			why = low.GeneratorReason
		}
		return fmt.Sprintf("no rate met the SLO (lowest tried %s req/s: %s)", strconv.FormatFloat(math.Round(low.Rate*10)/10, 'f', -1, 64), why)
	case ByGenerator:
		// The generator's trials say nothing of the server but that it
		// did at least as well: never a capacity, never confirmed.
		if r.Capacity == 0 {
			return fmt.Sprintf("not measured: the generator limited the search before a rate met the SLO (%s)", r.Reason)
		}
		return fmt.Sprintf("at least %.0f req/s; the generator limited the search (%s)", r.Capacity, r.Reason)
	case ByRateCap:
		return fmt.Sprintf("at least %.0f req/s: the highest rate allowed met the SLO", r.Capacity)
	case ByBudget:
		return fmt.Sprintf("%.0f req/s, unfinished: %s", r.Capacity, r.Reason)
	}
	s := fmt.Sprintf("%.0f req/s (%s", r.Capacity, r.Reason)
	if r.Confirmed {
		s += "; confirmed by the final trial"
	}
	return s + ")"
}

// Drive runs the search to its end: each trial the search asks for is run
// by run, and each record, once judged, is given to each (when set). An
// error of run (the target refuses every connection, ctx ends) stops the
// search and is returned with the result so far.
func Drive(ctx context.Context, s *Search, run func(context.Context, Trial) (Observation, error), each func(Record)) (Result, error) {
	for {
		t, ok := s.Next()
		if !ok {
			return s.Result(), nil
		}
		if err := ctx.Err(); err != nil {
			return s.Result(), err
		}
		o, err := run(ctx, t)
		if err != nil {
			return s.Result(), err
		}
		rec, err := s.Observe(o)
		if err != nil {
			return s.Result(), err
		}
		if each != nil {
			each(rec)
		}
	}
}
