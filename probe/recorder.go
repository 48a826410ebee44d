package probe

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// maxReportSamples bounds a Report's per-interval samples: past it, every
// other sample is dropped and the stride doubles, so a run of any length
// keeps at most this many (plus its edges). The summary is streamed and
// covers every sample.
const maxReportSamples = 3600

// Report is what a recording returns: the samples (bounded), the summary of
// the measured window and warnings about it.
type Report struct {
	Interval float64  `json:"interval"`         // seconds between samples
	Stride   int      `json:"stride,omitempty"` // > 1: Samples keeps every stride-th sample of a long run
	Samples  []Sample `json:"samples"`
	Summary  Summary  `json:"summary"`
	Warnings []string `json:"warnings,omitempty"`
}

// Recorder samples a Probe in its own goroutine every interval, and at the
// edges of the measured window when told. It owns the Probe until Stop
// returns.
type Recorder struct {
	p        *Probe
	interval time.Duration
	max      int

	mu       sync.Mutex
	samples  []Sample
	stride   int
	seq      int
	agg      *aggregator
	ended    bool
	stopped  bool
	warnings []string
	errs     int
	report   *Report
	once     sync.Once

	stop chan struct{}
	done chan struct{}
}

// Record starts sampling every interval (1 s if interval <= 0) and watching
// the given processes. It takes the first snapshot before it returns; the
// measured window starts there unless MarkStart moves it. Cancelling ctx
// stops the periodic samples; Stop must still be called, and returns the
// report.
func (p *Probe) Record(ctx context.Context, interval time.Duration, watches []Watch) *Recorder {
	if interval <= 0 {
		interval = time.Second
	}
	t := time.NewTicker(interval)
	return p.record(ctx, interval, watches, t.C, t.Stop)
}

// record starts a Recorder whose periodic samples follow ticks; stop is
// called when the sampling goroutine ends. Tests pass a channel of their own
// and call tick themselves.
func (p *Probe) record(ctx context.Context, interval time.Duration, watches []Watch, ticks <-chan time.Time, stop func()) *Recorder {
	p.SetWatches(watches)
	r := &Recorder{p: p, interval: interval, max: maxReportSamples, stride: 1,
		stop: make(chan struct{}), done: make(chan struct{})}
	s := r.take(true)
	r.agg = newAggregator(s)
	go r.loop(ctx, ticks, stop)
	return r
}

func (r *Recorder) loop(ctx context.Context, ticks <-chan time.Time, stop func()) {
	defer close(r.done)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.stop:
			return
		case <-ticks:
			r.tick()
		}
	}
}

// tick takes a periodic sample.
func (r *Recorder) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	s := r.take(false)
	if !r.ended {
		r.agg.add(s)
	}
}

// take samples the probe and keeps the sample in the bounded list. Edge
// samples are always kept. It holds r.mu (or runs before the goroutine).
func (r *Recorder) take(edge bool) *Sample {
	s, err := r.p.Sample()
	if err != nil {
		r.errs++
		if r.errs == 1 {
			r.warnings = append(r.warnings, "probe: "+err.Error())
		}
	}
	r.seq++
	if edge || r.seq%r.stride == 0 {
		if len(r.samples) >= r.max {
			kept := r.samples[:0]
			for i := 0; i < len(r.samples); i += 2 {
				kept = append(kept, r.samples[i])
			}
			clear(r.samples[len(kept):])
			r.samples = kept
			r.stride *= 2
		}
		r.samples = append(r.samples, *s)
	}
	return s
}

// MarkStart starts the measured window now (after a warm-up): it takes a
// sample that closes the interval before, and the summary starts over.
func (r *Recorder) MarkStart() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return
	}
	s := r.take(true)
	r.agg = newAggregator(s)
	r.ended = false
}

// MarkEnd ends the measured window now, with a sample; samples after it are
// kept but not summarised.
func (r *Recorder) MarkEnd() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.ended {
		return
	}
	r.agg.add(r.take(true))
	r.ended = true
}

// Stop takes the closing sample (which ends the window unless MarkEnd did),
// stops and waits for the sampling goroutine, and returns the report. Later
// calls return the same report.
func (r *Recorder) Stop() *Report {
	r.once.Do(r.finish)
	return r.report
}

func (r *Recorder) finish() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
	close(r.stop)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.take(true)
	if !r.ended {
		r.agg.add(s)
		r.ended = true
	}
	sum := r.agg.summary()
	rep := &Report{Interval: r.interval.Seconds(), Samples: r.samples, Summary: sum,
		Warnings: append(sum.warnings(), r.warnings...)}
	if r.stride > 1 {
		rep.Stride = r.stride
	}
	if r.errs > 1 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("probe: %d samples had errors", r.errs))
	}
	r.report = rep
}
