package probe

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/edgebench/edgebench/probe/machine"
)

// maxReportSamples bounds a Report's per-interval samples: past it, every
// other sample is dropped and the stride doubles, so a run of any length
// keeps at most this many (plus its edges). The summary is streamed and
// covers every sample.
const maxReportSamples = 3600

// minSliceRatio: no rate is measured over a slice shorter than the interval
// divided by it. Counters move in whole ticks (10 ms of one CPU), so a slice
// of a few milliseconds shows one tick as 100 % of a state, or a process at
// several times the machine's cores.
const minSliceRatio = 10

// Recorder samples a Probe in its own goroutine every interval, and at the
// edges of the measured window when told. It owns the Probe until Stop
// returns.
//
// No sample measures rates over less than a tenth of the interval. A
// periodic sample that would is skipped: the next one covers the slice. An
// edge sample that would (the window starts or ends just after a periodic
// sample) is merged into its neighbour: it replaces the previous sample and
// measures from the one before, so the window's last slice is up to 1.1
// intervals long. A window shorter than a tenth of the interval has no rates,
// only its instantaneous figures.
type Recorder struct {
	p        *Probe
	interval time.Duration
	max      int

	mu       sync.Mutex
	samples  []machine.Sample
	lastKept bool      // the last sample taken is the last of samples
	last     time.Time // when the last sample was taken
	stride   int
	seq      int
	agg      *aggregator
	ended    bool
	stopped  bool
	warnings []string
	errs     int
	report   *machine.Report
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
	s := r.take(true, false)
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

// tick takes a periodic sample, unless the last sample is too recent.
func (r *Recorder) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.short() {
		return
	}
	s := r.take(false, false)
	if !r.ended {
		r.agg.add(s)
	}
}

// short reports whether a sample now would measure a slice shorter than a
// tenth of the interval.
func (r *Recorder) short() bool {
	return r.p.now().Sub(r.last) < r.interval/minSliceRatio
}

// take samples the probe and keeps the sample in the bounded list: edge
// samples always, periodic ones every stride-th. With merge the sample
// covers the previous slice too and replaces the previous sample. It holds
// r.mu (or runs before the goroutine).
func (r *Recorder) take(edge, merge bool) *machine.Sample {
	s, err := r.p.sample(merge)
	if err != nil {
		r.errs++
		if r.errs == 1 {
			r.warnings = append(r.warnings, "probe: "+err.Error())
		}
	}
	r.last = s.Time
	if merge && r.lastKept {
		r.samples[len(r.samples)-1] = *s
		return s
	}
	if !merge {
		r.seq++
	}
	r.lastKept = edge || r.seq%r.stride == 0
	if r.lastKept {
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
	s := r.take(true, r.short())
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
	r.end()
}

// end closes the window with a sample, merged into the previous one when
// the slice since it is too short. It holds r.mu.
func (r *Recorder) end() {
	if r.short() {
		r.agg.replaceLast(r.take(true, true))
	} else {
		r.agg.add(r.take(true, false))
	}
	r.ended = true
}

// EndWindow ends the measured window now, as MarkEnd, and returns the
// window's report: its summary and the samples of its slices. Recording
// goes on; a later MarkStart opens another window, and Stop ends the
// recording. After Stop it returns nil.
func (r *Recorder) EndWindow() *machine.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped {
		return nil
	}
	if !r.ended {
		r.end()
	}
	sum := r.agg.summary()
	r.p.fillLinks(&sum)
	rep := &machine.Report{Interval: r.interval.Seconds(), Summary: sum, Warnings: warnings(&sum)}
	for _, s := range r.samples {
		if s.Time.After(sum.Start) && !s.Time.After(sum.End) {
			rep.Samples = append(rep.Samples, s)
		}
	}
	if r.stride > 1 {
		rep.Stride = r.stride
	}
	return rep
}

// Stop takes the closing sample (which ends the window unless MarkEnd did;
// after MarkEnd, none when it would be less than a tenth of the interval),
// stops and waits for the sampling goroutine, and returns the report. Later
// calls return the same report.
func (r *Recorder) Stop() *machine.Report {
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
	switch {
	case !r.ended:
		r.end()
	case !r.short():
		r.take(true, false)
	}
	sum := r.agg.summary()
	r.p.fillLinks(&sum)
	rep := &machine.Report{Interval: r.interval.Seconds(), Samples: r.samples, Summary: sum,
		Warnings: append(warnings(&sum), r.warnings...)}
	if r.stride > 1 {
		rep.Stride = r.stride
	}
	if r.errs > 1 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("probe: %d samples had errors", r.errs))
	}
	r.report = rep
}

// fillLinks sets the speed and duplex of each interface of sum, as read
// when the interface was first seen.
func (p *Probe) fillLinks(sum *machine.Summary) {
	for i := range sum.Nets {
		l := p.links[sum.Nets[i].Name]
		sum.Nets[i].SpeedMbps, sum.Nets[i].Duplex = l.speed, l.duplex
	}
}
