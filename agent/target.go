package agent

// This file is the serve command: the built-in target, started on a
// loopback address for a while, from a folder the policy allows.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"

	"github.com/edgebench/edgebench/target"
	"github.com/edgebench/edgebench/wire"
)

// serve starts the built-in target on a loopback address for a while.
func (a *Agent) serve(ctx context.Context, cmd *wire.Command, reject func(string)) {
	ss := cmd.Spec.Serve
	if ss == nil {
		ss = &wire.ServeSpec{}
	}
	addr := ss.Addr
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	host, _, err := net.SplitHostPort(addr)
	ip, perr := netip.ParseAddr(host)
	if err != nil || perr != nil || !ip.IsLoopback() {
		reject(fmt.Sprintf("serve address %q: loopback only", addr))
		return
	}
	d, err := msDuration("serve duration", ss.DurationMS)
	if err == nil && (d <= 0 || d > a.cfg.Policy.MaxDuration) {
		err = refusef("serve duration %v: want 1ms..%v", d, a.cfg.Policy.MaxDuration)
	}
	if err != nil {
		reject(err.Error())
		return
	}
	if s := a.serving(); s != nil {
		reject("busy: the target is already serving for " + s.cmdID)
		return
	}
	files, err := a.serveDir(ss.Dir)
	if err != nil {
		reject(err.Error())
		return
	}
	srv, err := target.Start(addr, "edgebench/"+a.opt.Version, files)
	if err != nil {
		reject(err.Error())
		return
	}
	sctx, cancel := context.WithTimeout(context.Background(), d)
	s := &serving{cmdID: cmd.ID, srv: srv, cancel: cancel, done: make(chan struct{})}
	a.mu.Lock()
	a.srv = s
	a.mu.Unlock()
	a.event(ctx, cmd.ID, wire.StateAccepted, "", nil, "")
	a.event(ctx, cmd.ID, wire.StateRunning, "serving on http://"+srv.Addr()+"/", nil, "")
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer close(s.done)
		<-sctx.Done()
		srv.Close()
		// Free before the final event: a serve command sent on seeing it
		// is not refused as busy.
		a.mu.Lock()
		if a.srv == s {
			a.srv = nil
		}
		a.mu.Unlock()
		state := wire.StateSucceeded
		if !errors.Is(sctx.Err(), context.DeadlineExceeded) {
			state = wire.StateCancelled
		}
		a.event(context.Background(), cmd.ID, state, "", nil, "")
	}()
}

// serveDir opens the folder a serve command asks to serve files from: a
// path below policy.serve_root, relative to it or absolute. A path that
// leaves the root, by ".." or by a symlink, is refused, and so is any
// folder when no root is configured. "" is no folder: nil, nil.
func (a *Agent) serveDir(dir string) (*os.Root, error) {
	if dir == "" {
		return nil, nil
	}
	root := a.cfg.Policy.ServeRoot
	if root == "" {
		return nil, refusef("serve dir %q: this device serves no files (policy.serve_root is not set)", dir)
	}
	rel := dir
	if filepath.IsAbs(dir) {
		var err error
		if rel, err = filepath.Rel(root, dir); err != nil {
			rel = ".."
		}
	}
	if !filepath.IsLocal(rel) {
		return nil, refusef("serve dir %q: not below policy.serve_root %s", dir, root)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("serve dir %q: policy.serve_root: %w", dir, err)
	}
	defer r.Close()
	sub, err := r.OpenRoot(rel)
	if err != nil {
		return nil, refusef("serve dir %q: %v (below policy.serve_root %s)", dir, err, root)
	}
	return sub, nil
}

// serving is the built-in target's run, nil when it does not run.
func (a *Agent) serving() *serving {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.srv
}

// stopServing stops the built-in target, if it runs, and waits for it.
func (a *Agent) stopServing() {
	if s := a.serving(); s != nil {
		s.cancel()
		<-s.done
	}
}
