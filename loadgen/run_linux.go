//go:build linux

package loadgen

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
)

// refusedAfter ends a run whose every connection attempt has failed for
// this long, rather than hammering a dead port until the deadline.
const refusedAfter = time.Second

// Run performs one load test and returns what it measured. It returns an
// error when the test cannot start (bad config, unresolvable host) or
// when not one connection could be opened (a *DialError); failed requests
// are counted in the LoadResult. Cancelling ctx ends the test early with
// Interrupted set.
func Run(ctx context.Context, cfg Config) (*report.LoadResult, error) {
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
		whole:    cfg.WholeRequestTimeout,
		budget:   cfg.Requests,
		headOnly: cfg.Method == "HEAD",
	}
	sh.bigRequest = len(sh.req) > 1400
	if target.Scheme == "https" {
		if sh.tls, err = clientTLS(cfg, target); err != nil {
			return nil, err
		}
		sh.serverName = sh.tls.ServerName
	}
	if cfg.HTTP2 {
		sh.h2, sh.h2req = true, newH2Request(cfg, target)
	}
	sh.pendMax = pendMax(cfg, sh)
	sh.addr = &net.TCPAddr{IP: ip, Port: target.Port}
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
	sh.unstarted.Store(int64(cfg.Connections))
	if cfg.Rate > 0 {
		sh.interval = openLoopInterval(cfg.Connections, cfg.Rate)
	}

	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && uint64(cfg.Connections)+64 > lim.Cur {
		return nil, configErr("connections %d: the open-file limit is %d (raise it with ulimit -n or LimitNOFILE=)", cfg.Connections, lim.Cur)
	}
	// wrk's threads, each with its share of the connections, run on at
	// most one event loop per P: a loop blocks in epoll_wait holding its
	// P, and a loop whose events came while every P was held waited for
	// the runtime to take one back (up to sysmon's 10 ms), a wait its
	// requests' latency counted (wrk -t10 on 2 cores: a mean of 6 ms at
	// 36,700 req/s over 10 connections, where Little's law allows 272
	// us). wrk's figures per thread (Req/Sec) are kept per thread.
	threads := cfg.Threads
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	threads = min(threads, cfg.Connections)
	loops := min(threads, runtime.GOMAXPROCS(0))
	workers := make([]*worker, loops)
	for i, places := range layout(cfg.Connections, threads, loops) {
		w, err := newWorker(sh, places, (threads-i+loops-1)/loops)
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
	if cfg.Duration > 0 {
		sh.deadline = int64(cfg.Warmup + cfg.Duration)
		sh.drainEnd = sh.deadline + sh.timeout
	} else if cfg.MaxTime > 0 {
		// A run of Requests, bounded: at MaxTime the window ends and
		// what is still in flight is cut at once.
		sh.deadline = int64(cfg.Warmup + cfg.MaxTime)
		sh.drainEnd = sh.deadline
	}
	if cfg.WindowStart != nil && cfg.Warmup == 0 {
		cfg.WindowStart()
	}
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	st := watch(ctx, sh, workers, done)
	end := sh.now()
	if cfg.WindowEnd != nil && !st.windowEnded {
		cfg.WindowEnd()
	}
	// Not one connection, whether the refusal stopped the run or its end
	// came first: there is nothing to report but why.
	var connected, connFails, ready, setupFails int64
	var errno syscall.Errno
	for _, w := range workers {
		connected += w.prog.connected.Load()
		connFails += w.prog.connFails.Load()
		ready += w.prog.ready.Load()
		setupFails += w.prog.setupFails.Load()
		if e := w.prog.connErr.Load(); e != 0 {
			errno = syscall.Errno(e)
		}
	}
	if connected > 0 && ready == 0 && setupFails > 0 && !st.interrupted {
		// Connected, but not one connection set up (TLS, HTTP/2).
		err, _ := sh.setup()
		return nil, &HandshakeError{Addr: net.JoinHostPort(target.Host, strconv.Itoa(target.Port)), Err: err}
	}
	if connected == 0 && connFails > 0 && !st.interrupted {
		if errno == 0 {
			errno = syscall.ECONNREFUSED
		}
		addr := net.JoinHostPort(target.Host, strconv.Itoa(target.Port))
		if !ip.Equal(net.ParseIP(target.Host)) {
			addr += " (" + ip.String() + ")"
		}
		return nil, &DialError{Addr: addr, Err: errno}
	}

	r := merge(workers, cfg, target)
	if r.TLS != nil {
		r.TLS.Resume = !cfg.TLS.NoResume
	}
	r.Start = sh.base.Add(time.Duration(sh.measureStart))
	var lastEnd int64
	for _, w := range workers {
		lastEnd = max(lastEnd, w.lastEnd)
	}
	r.Duration = max(time.Duration(windowEnd(end, st.abortAt, sh.deadline, lastEnd)-sh.measureStart), 0)
	r.Interrupted = st.interrupted
	r.DocLength = sh.docLen.Load()
	return r, nil
}

// pendMax bounds a connection's pending output (fdConn.pend), as
// pendBound says: past it the server is reading less than it makes the
// client write; the connection is closed and its requests counted as
// Errors.Limit.
func pendMax(cfg Config, sh *shared) int {
	if !sh.h2 {
		return pendBound(1, len(sh.req))
	}
	r := &sh.h2req
	return pendBound(cfg.Streams, len(r.first)+h2Request0(len(r.body)))
}

// watchState is how a run ended, as watch saw it.
type watchState struct {
	interrupted bool  // ctx ended the run
	refused     bool  // not one connection could be opened
	abortAt     int64 // when the run was stopped early, ns since base; 0: it was not
	windowEnded bool  // Config.WindowEnd was called
}

// watch waits for the workers, reports progress once a second, calls the
// window's hooks at its edges, and stops the run when ctx ends or the
// target refuses every connection.
func watch(ctx context.Context, sh *shared, workers []*worker, done <-chan struct{}) (st watchState) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	// Timers at the window's edges, for the hooks only: the engine keeps
	// its own time.
	edge := func(at int64, hook func()) (<-chan time.Time, func()) {
		if hook == nil || at <= 0 {
			return nil, func() {}
		}
		tm := time.NewTimer(time.Until(sh.base.Add(time.Duration(at))))
		return tm.C, func() { tm.Stop() }
	}
	startC, stopStart := edge(sh.measureStart, sh.cfg.WindowStart)
	defer stopStart()
	endC, stopEnd := edge(sh.deadline, sh.cfg.WindowEnd)
	defer stopEnd()
	endWindow := func() {
		if sh.cfg.WindowEnd != nil && !st.windowEnded {
			st.windowEnded = true
			sh.cfg.WindowEnd()
		}
	}
	lastReport := time.Now()
	for {
		select {
		case <-done:
			return st
		case <-startC:
			sh.cfg.WindowStart()
		case <-endC:
			endWindow()
		case <-ctx.Done():
			st.interrupted = true
			st.abortAt = sh.now()
			sh.abort.Store(true)
			endWindow()
			<-done
			return st
		case now := <-t.C:
			var completed, errs, connected, connFails, ready, setupFails int64
			for _, w := range workers {
				completed += w.prog.completed.Load()
				errs += w.prog.errors.Load()
				connected += w.prog.connected.Load()
				connFails += w.prog.connFails.Load()
				ready += w.prog.ready.Load()
				setupFails += w.prog.setupFails.Load()
			}
			refused := connected == 0 && connFails > 0 && now.Sub(sh.base) > refusedAfter
			if sh.tls != nil || sh.h2 {
				// Connected, but no connection set up: at once when the
				// reason lasts (a refused certificate, no TLS, no h2).
				_, lasting := sh.setup()
				refused = refused || ready == 0 && setupFails > 0 && (lasting || now.Sub(sh.base) > refusedAfter)
			}
			if refused && !st.refused {
				st.refused = true
				st.abortAt = sh.now()
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

func pickAddr(ctx context.Context, cfg Config, t report.Target) (net.IP, error) {
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
