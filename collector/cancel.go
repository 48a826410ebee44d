package collector

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// ErrNotRunning is returned when a command to cancel runs nowhere: every
// device it went to has finished it.
var ErrNotRunning = errors.New("not running")

// cancelTargets are the devices to send a cancel of command id to: those
// whose last event of it is not final (accepted, queued, running) or,
// when no device has answered yet, where the command was sent (a device
// or a fleet's _all).
func (s *Store) cancelTargets(ctx context.Context, id string) ([]wire.Addr, error) {
	evs, err := s.Events(ctx, id)
	if err != nil {
		return nil, err
	}
	last := map[wire.Addr]wire.EventState{}
	for _, e := range evs { // by device and sequence: the last one wins
		last[wire.Addr{Fleet: e.Fleet, Device: e.Device}] = e.State
	}
	var out []wire.Addr
	for a, st := range last {
		if !st.Terminal() {
			out = append(out, a)
		}
	}
	if len(out) > 0 || len(last) > 0 {
		sort.Slice(out, func(i, j int) bool { return out[i].Fleet+"/"+out[i].Device < out[j].Fleet+"/"+out[j].Device })
		return out, nil
	}
	rows, err := s.query(ctx, s.r, "SELECT fleet, target FROM commands WHERE id = ? AND kind = ?", id, string(wire.KindLoadTest))
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var a wire.Addr
		if err := rows.Scan(&a.Fleet, &a.Device); err != nil {
			return nil, fmt.Errorf("command %s: %w", id, err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("command %s: %w", id, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("command %s: %w", Printable(id), ErrNotFound)
	}
	return out, nil
}

// Cancel asks the devices running load-test command id to stop it: each
// ends it as cancelled (its result says so) and is free for the next
// command. A command every device has finished is ErrNotRunning.
func (c *Collector) Cancel(ctx context.Context, id string) (*Triggered, error) {
	targets, err := c.store.cancelTargets(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("cancel: %w", err)
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("cancel: command %s is %w: every device it went to has finished it", Printable(id), ErrNotRunning)
	}
	now := time.Now().UTC()
	cmd := &wire.Command{V: wire.SchemaVersion, ID: wire.NewID(), IssuedAt: now, ExpiresAt: now.Add(time.Minute),
		Kind: wire.KindCancel, Spec: wire.CommandSpec{Cancel: &wire.CancelSpec{CommandID: id}}}
	out := &Triggered{CommandID: cmd.ID}
	topics := wire.Topics{Prefix: c.cfg.Prefix}
	for _, t := range targets {
		signed, err := c.sign(cmd, t.Fleet, t.Device)
		if err != nil {
			return nil, fmt.Errorf("cancel: %w", err)
		}
		raw, err := signed.MarshalMsg(nil)
		if err != nil {
			return nil, fmt.Errorf("cancel: encode: %w", err)
		}
		if err := c.store.AddCommand(ctx, t.Fleet, t.Device, signed, raw); err != nil {
			return nil, fmt.Errorf("cancel: %w", err)
		}
		if err := c.client.PublishCommand(ctx, t.Fleet, t.Device, signed); err != nil {
			return nil, fmt.Errorf("cancel: %w", err)
		}
		topic, _ := topics.Topic(t.Fleet, t.Device, wire.TopicCmd)
		out.Topics = append(out.Topics, topic)
		if t.Device != wire.AllDevices {
			out.Devices = append(out.Devices, t.Fleet+"/"+t.Device)
		}
	}
	c.log.Info("cancel sent", zap.String("cmd_id", cmd.ID), zap.String("cancels", id), zap.Strings("topics", out.Topics))
	return out, nil
}

// cancelStatus is the HTTP status of a Cancel error.
func cancelStatus(err error) int {
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, ErrNotRunning):
		return http.StatusConflict
	case errors.Is(err, transport.ErrNotConnected):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// cancelAPI adds POST /api/commands/{id}/cancel: Cancel, answered with
// the cancel command sent (Triggered).
func (c *Collector) cancelAPI(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/commands/{id}/cancel", func(w http.ResponseWriter, r *http.Request) {
		t, err := c.Cancel(r.Context(), r.PathValue("id"))
		if err != nil {
			http.Error(w, err.Error(), cancelStatus(err))
			return
		}
		writeJSON(w, t)
	})
}

// webCancel is the fleet page's cancel button: POST
// /commands/{id}/cancel, then back to the fleet page. With an API token
// the page has no button (the token guards every command) and this says
// how to cancel from the command line.
func (w *Web) webCancel(rw http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if w.cancel == nil {
		http.Error(rw, "cancelling from this page is off (the collector's API has a token): run edgebench-collector cancel "+Printable(id), http.StatusForbidden)
		return
	}
	if _, err := w.cancel(r.Context(), id); err != nil {
		code := cancelStatus(err)
		if code == http.StatusInternalServerError {
			w.log.Error("cancel", zap.String("cmd_id", id), zap.Error(err))
		}
		http.Error(rw, err.Error(), code)
		return
	}
	http.Redirect(rw, r, "/?cancelled="+id, http.StatusSeeOther)
}
