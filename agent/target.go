package agent

// This file is the serve command: the built-in target, started for a
// while on an address the policy allows (loopback by default; a board
// that a loader on another machine measures lists its own address in
// policy.serve_allow), from a folder the policy allows.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/edgebench/edgebench/target"
	"github.com/edgebench/edgebench/wire"
)

// serve starts the built-in target on an address policy.serve_allow
// allows, for a while within policy.max_serve_duration.
func (a *Agent) serve(ctx context.Context, cmd *wire.Command, reject func(string)) {
	ss := cmd.Spec.Serve
	if ss == nil {
		ss = &wire.ServeSpec{}
	}
	addr := ss.Addr
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	if err := a.checkServeAddr(addr); err != nil {
		reject(err.Error())
		return
	}
	d, err := msDuration("serve duration", ss.DurationMS)
	if err == nil && (d <= 0 || d > a.cfg.Policy.MaxServeDuration) {
		err = refusef("serve duration %v: want 1ms..%v (policy.max_serve_duration)", d, a.cfg.Policy.MaxServeDuration)
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

// parseServeAllow parses an entry of policy.serve_allow: a CIDR or an
// address (a /32 or /128), no host names. "0.0.0.0" and "::" allow the
// unspecified address alone: every interface, only when listed so.
func parseServeAllow(s string) (netip.Prefix, error) {
	pfx, host, err := parseAllowEntry(s)
	if err != nil || host != "" {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR or an IP address", s)
	}
	return pfx, nil
}

// checkServeAddr checks that the serve command may listen on addr: an IP
// address inside policy.serve_allow, and a port.
func (a *Agent) checkServeAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	ip, perr := netip.ParseAddr(host)
	if err != nil || perr != nil || ip.Zone() != "" {
		return refusef("serve address %q: want an IP address and a port", addr)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return refusef("serve address %q: bad port %q", addr, port) // 0: any free port, which the running event names
	}
	ip = ip.Unmap()
	var allowed []string
	for _, e := range a.cfg.Policy.ServeAllow {
		pfx, err := parseServeAllow(e)
		if err != nil {
			continue // refused when the config was loaded
		}
		if pfx.Contains(ip) {
			return nil
		}
		allowed = append(allowed, pfx.String())
	}
	return refusef("serve address %s: not in policy.serve_allow [%s]", ip, strings.Join(allowed, " "))
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
