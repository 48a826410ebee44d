//go:build linux

package loadgen

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// refusedAfter ends a run whose every connection attempt has failed for
// this long, rather than hammering a dead port until the deadline.
const refusedAfter = time.Second

// Run performs one load test and returns what it measured. It returns an
// error only when the test cannot start (bad config, unresolvable host);
// failed requests are counted in the Result. Cancelling ctx ends the test
// early with Interrupted set.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg, target, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ip, err := pickAddr(ctx, cfg, target)
	if err != nil {
		return nil, err
	}
	sh := &shared{
		cfg:      cfg,
		req:      buildRequest(cfg, target),
		timeout:  int64(cfg.Timeout),
		budget:   cfg.Requests,
		headOnly: cfg.Method == "HEAD",
	}
	sh.bigRequest = len(sh.req) > 1400
	if ip4 := ip.To4(); ip4 != nil {
		sa := &syscall.SockaddrInet4{Port: target.Port}
		copy(sa.Addr[:], ip4)
		sh.sa, sh.family = sa, syscall.AF_INET
	} else {
		sa := &syscall.SockaddrInet6{Port: target.Port}
		copy(sa.Addr[:], ip.To16())
		sh.sa, sh.family = sa, syscall.AF_INET6
	}
	sh.docLen.Store(-1)
	if cfg.Rate > 0 {
		sh.interval = int64(float64(cfg.Connections) * float64(time.Second) / cfg.Rate)
		if sh.interval < 1 {
			sh.interval = 1
		}
	}

	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && uint64(cfg.Connections)+64 > lim.Cur {
		return nil, configErr("connections %d: the open-file limit is %d (raise it with ulimit -n or LimitNOFILE=)", cfg.Connections, lim.Cur)
	}
	nw := cfg.Threads
	if nw == 0 {
		nw = runtime.GOMAXPROCS(0)
	}
	nw = min(nw, cfg.Connections)
	workers := make([]*worker, nw)
	for i := range workers {
		n := cfg.Connections / nw
		if i < cfg.Connections%nw {
			n++
		}
		w, err := newWorker(sh, n)
		if err != nil {
			for _, w := range workers[:i] {
				syscall.Close(w.epfd)
			}
			return nil, fmt.Errorf("load generator: %w", err)
		}
		workers[i] = w
	}

	sh.base = time.Now()
	sh.measureStart = int64(cfg.Warmup)
	sh.lastSecond = -1
	if cfg.Duration > 0 {
		sh.deadline = int64(cfg.Warmup + cfg.Duration)
		sh.lastSecond = max(int((cfg.Duration+time.Second-1)/time.Second)-1, 0)
	}
	var wg sync.WaitGroup
	for i, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(i, nw)
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	interrupted := watch(ctx, sh, workers, done)
	end := sh.now()

	r := merge(workers, cfg, target)
	r.Start = sh.base.Add(time.Duration(sh.measureStart))
	r.Duration = time.Duration(end - sh.measureStart)
	if r.Duration < 0 {
		r.Duration = 0
	}
	r.Interrupted = interrupted
	r.DocLength = sh.docLen.Load()
	return r, nil
}

// watch waits for the workers, reports progress once a second, and stops
// the run when ctx ends or the target refuses every connection.
func watch(ctx context.Context, sh *shared, workers []*worker, done <-chan struct{}) (interrupted bool) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	lastReport := time.Now()
	for {
		select {
		case <-done:
			return interrupted
		case <-ctx.Done():
			interrupted = true
			sh.abort.Store(true)
			<-done
			return interrupted
		case now := <-t.C:
			var completed, errs, connected, connFails int64
			for _, w := range workers {
				completed += w.prog.completed.Load()
				errs += w.prog.errors.Load()
				connected += w.prog.connected.Load()
				connFails += w.prog.connFails.Load()
			}
			if connected == 0 && connFails > 0 && now.Sub(sh.base) > refusedAfter {
				sh.abort.Store(true)
			}
			if sh.cfg.Progress != nil && now.Sub(lastReport) >= time.Second {
				lastReport = now
				el := now.Sub(sh.base) - time.Duration(sh.measureStart)
				sh.cfg.Progress(Progress{Elapsed: el, Completed: completed, Errors: errs, Warmup: el < 0})
			}
		}
	}
}

func pickAddr(ctx context.Context, cfg Config, t Target) (net.IP, error) {
	if len(cfg.Addrs) > 0 {
		return cfg.Addrs[0], nil
	}
	if ip := net.ParseIP(t.Host); ip != nil {
		return ip, nil
	}
	addrs, err := net.DefaultResolver.LookupIPAddr(ctx, t.Host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", t.Host, err)
	}
	for _, a := range addrs {
		if a.IP.To4() != nil {
			return a.IP, nil
		}
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no address", t.Host)
	}
	return addrs[0].IP, nil
}

// merge adds up the workers' statistics into one Result.
func merge(workers []*worker, cfg Config, t Target) *Result {
	r := &Result{
		Target: t, Method: cfg.Method, Connections: cfg.Connections, Threads: len(workers),
		KeepAlive: cfg.KeepAlive, Rate: cfg.Rate, Timeout: cfg.Timeout, Warmup: cfg.Warmup,
		StatusCodes: map[int]int64{},
		Latency:     NewLatencyHistogram(), Connect: NewLatencyHistogram(),
		Waiting: NewLatencyHistogram(), Processing: NewLatencyHistogram(),
	}
	type agg struct {
		completed, errors int64
		hist              *Histogram
	}
	seconds := map[int]*agg{}
	last := -1
	for _, w := range workers {
		r.Completed += w.completed
		r.OK += w.ok
		r.Errors.add(w.errs)
		r.Bytes += w.bytes
		r.BodyBytes += w.body
		r.Connects += w.connects
		if r.Server == "" {
			r.Server = w.server
		}
		for code, n := range w.status {
			if n > 0 {
				r.StatusCodes[code] += n
			}
		}
		// Histograms of one shape merge without error.
		_ = r.Latency.Merge(w.lat)
		_ = r.Connect.Merge(w.connH)
		_ = r.Waiting.Merge(w.wait)
		_ = r.Processing.Merge(w.proc)
		for _, s := range w.timeline {
			a := seconds[s.t]
			if a == nil {
				a = &agg{hist: NewHistogram(latencyMaxUS, 2)}
				seconds[s.t] = a
			}
			a.completed += s.completed
			a.errors += s.errors
			if h, err := DecodeHistogram(s.hist); err == nil {
				_ = a.hist.Merge(h)
			}
			last = max(last, s.t)
		}
	}
	for t := 0; t <= last; t++ {
		s := Second{T: t}
		if a := seconds[t]; a != nil {
			s.Completed, s.Errors = a.completed, a.errors
			s.P50, s.P99 = a.hist.Quantile(0.50), a.hist.Quantile(0.99)
		}
		r.Timeline = append(r.Timeline, s)
	}
	return r
}
