package collector

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/wire"
)

// ErrNotRunning is returned when a command to cancel runs nowhere: every
// device it went to has finished it.
var ErrNotRunning = errors.New("not running")

// Cancel asks the devices running load-test command id to stop it: each
// ends it as cancelled (its result says so) and is free for the next
// command. A command every device has finished is ErrNotRunning.
func (c *Collector) Cancel(ctx context.Context, id string) (*Triggered, error) {
	targets, err := c.store.CancelTargets(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("cancel: %w", err)
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("cancel: command %s is %w: every device it went to has finished it", escape.Printable(id), ErrNotRunning)
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
	case errors.Is(err, store.ErrNotFound):
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
		http.Error(rw, "cancelling from this page is off (the collector's API has a token): run edgebench-collector cancel "+escape.Printable(id), http.StatusForbidden)
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
