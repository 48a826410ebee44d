package collector

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/collector/web"
	"github.com/edgebench/edgebench/transport"
)

// CommandStatus is a command's events and results, for trigger --wait.
// For a run across two devices, Events are the loader's and the target's
// watch's, and Pair says how far the run is: its result is stored when
// Pair.State is succeeded, and nothing when it failed.
type CommandStatus struct {
	Events  []store.Event       `json:"events"`
	Results []compare.ExportRow `json:"results"`
	Pair    *store.Pair         `json:"pair,omitempty"`
}

// api adds the JSON endpoints the CLI uses to the mux:
//
//	POST /api/trigger               TriggerRequest -> Triggered
//	GET  /api/commands/{id}         CommandStatus
//	GET  /api/compare?by=&cmd=...   the comparison as text
//	GET  /api/devices               []Device, a page at a time (listing.go)
//	GET  /api/runs                  []ExportRow, the newest first, a page at a time (listing.go)
//	POST /api/commands/{id}/cancel  Triggered (the cancel sent)
func (c *Collector) api(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/trigger", func(w http.ResponseWriter, r *http.Request) {
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			http.Error(w, "a trigger is a JSON body (Content-Type: application/json)", http.StatusUnsupportedMediaType)
			return
		}
		var req scheduledb.TriggerRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return
		}
		t, err := c.Trigger(r.Context(), req)
		if err != nil {
			code := http.StatusBadRequest
			if errors.Is(err, transport.ErrNotConnected) {
				code = http.StatusServiceUnavailable
			}
			http.Error(w, err.Error(), code)
			return
		}
		writeJSON(w, t)
	})
	mux.HandleFunc("GET /api/commands/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		evs, err := c.store.Events(r.Context(), id)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		pair, err := c.store.Pair(r.Context(), id)
		switch {
		case err == nil && pair.ID == id: // the watch's events too
			wevs, err := c.store.Events(r.Context(), pair.WatchID)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			evs = append(evs, wevs...)
		case err != nil && !errors.Is(err, sqldb.ErrNotFound):
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		runs, err := c.store.Runs(r.Context(), store.Filter{Command: id})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		writeJSON(w, CommandStatus{Events: evs, Results: compare.ExportRows(runs), Pair: pair})
	})
	mux.Handle("GET /api/compare", c.expensive(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cmp, err := compare.FromQuery(r.Context(), c.store, r.URL.Query())
		var qe *compare.QueryError
		switch {
		case errors.As(err, &qe):
			http.Error(w, qe.Msg, http.StatusBadRequest)
		case err != nil:
			c.log.Error("compare", zap.Error(err))
			http.Error(w, "internal error", http.StatusInternalServerError)
		default:
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			cmp.WriteText(w)
		}
	})))
	c.cancelAPI(mux)
	c.listingAPI(mux)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// cancelAPI adds POST /api/commands/{id}/cancel: Cancel, answered with
// the cancel command sent (Triggered).
func (c *Collector) cancelAPI(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/commands/{id}/cancel", func(w http.ResponseWriter, r *http.Request) {
		t, err := c.Cancel(r.Context(), r.PathValue("id"))
		if err != nil {
			http.Error(w, err.Error(), web.CancelStatus(err))
			return
		}
		writeJSON(w, t)
	})
}

// fleetRoutes adds the schedules' and changes' API to api, and to mux
// their pages and /metrics:
//
//	GET    /api/schedules              []Schedule
//	POST   /api/schedules              Schedule (name, every|cron, jitter, trigger) -> Schedule
//	DELETE /api/schedules/{name}
//	POST   /api/schedules/{name}/pause
//	POST   /api/schedules/{name}/resume
//	GET    /api/schedules/{name}/runs  []ScheduleRun, newest first (?limit=N, default 50)
//	GET    /schedules                  the page, with pause, resume and remove buttons
//	GET    /metrics                    the figures for Prometheus (package metrics)
//	GET    /changes                    the stored changes, the latest first, a page at a time (?days=7&fleet=&device=&limit=&cursor=)
//	GET    /api/changes                []Change: the same page, the provisional claims first on the first page
//	                                   (&provisional=0: none); the next page in the Link header (rel="next")
//
// The runs of a schedule, /changes, /api/changes and /metrics are
// guarded as expensive (webguard.go).
func (c *Collector) fleetRoutes(mux, api *http.ServeMux) {
	fail := func(w http.ResponseWriter, err error) {
		code := http.StatusBadRequest
		switch {
		case errors.Is(err, sqldb.ErrNotFound):
			code = http.StatusNotFound
		case errors.Is(err, scheduledb.ErrExists), errors.Is(err, scheduledb.ErrTooManySchedules):
			code = http.StatusConflict
		case errors.Is(err, sqldb.ErrUnavailable):
			code = http.StatusServiceUnavailable
		}
		http.Error(w, err.Error(), code)
	}
	api.HandleFunc("GET /api/schedules", func(w http.ResponseWriter, r *http.Request) {
		ss, err := c.store.Schedules(r.Context())
		if err != nil {
			fail(w, err)
			return
		}
		if ss == nil {
			ss = []scheduledb.Schedule{}
		}
		writeJSON(w, ss)
	})
	api.HandleFunc("POST /api/schedules", func(w http.ResponseWriter, r *http.Request) {
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			http.Error(w, "a schedule is a JSON body (Content-Type: application/json)", http.StatusUnsupportedMediaType)
			return
		}
		var sch scheduledb.Schedule
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sch); err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return
		}
		sch.Paused, sch.LastRun = false, nil
		if err := c.scheduleWithinLimits(&sch); err != nil {
			fail(w, err)
			return
		}
		if err := c.store.AddScheduleUpTo(r.Context(), &sch, time.Now(), c.cfg.Schedules.Max); err != nil {
			if errors.Is(err, scheduledb.ErrTooManySchedules) {
				err = fmt.Errorf("%w (serve --max-schedules); remove one first", err)
			}
			fail(w, err)
			return
		}
		c.log.Info("schedule added", zap.String("schedule", sch.Name), zap.Time("next", sch.NextAt))
		writeJSON(w, sch)
	})
	api.HandleFunc("DELETE /api/schedules/{name}", func(w http.ResponseWriter, r *http.Request) {
		if err := c.store.RemoveSchedule(r.Context(), r.PathValue("name")); err != nil {
			fail(w, err)
			return
		}
		writeJSON(w, map[string]string{"removed": r.PathValue("name")})
	})
	for _, act := range []string{"pause", "resume"} {
		api.HandleFunc("POST /api/schedules/{name}/"+act, func(w http.ResponseWriter, r *http.Request) {
			if err := c.store.PauseSchedule(r.Context(), r.PathValue("name"), act == "pause", time.Now()); err != nil {
				fail(w, err)
				return
			}
			sch, err := c.store.Schedule(r.Context(), r.PathValue("name"))
			if err != nil {
				fail(w, err)
				return
			}
			writeJSON(w, sch)
		})
	}
	api.Handle("GET /api/schedules/{name}/runs", c.expensive(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := 50
		if s := r.URL.Query().Get("limit"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 {
				http.Error(w, "limit: want a number", http.StatusBadRequest)
				return
			}
			limit = n
		}
		if _, err := c.store.Schedule(r.Context(), r.PathValue("name")); err != nil {
			fail(w, err)
			return
		}
		runs, err := c.store.ScheduleRuns(r.Context(), r.PathValue("name"), limit)
		if err != nil {
			fail(w, err)
			return
		}
		if runs == nil {
			runs = []scheduledb.ScheduleRun{}
		}
		writeJSON(w, runs)
	})))
	mux.Handle("GET /metrics", c.scrapes(c.metrics.Handler()))
	mux.Handle("GET /changes", c.expensivePage(web.ChangesPage(c.store, c.log)))
	api.Handle("GET /api/changes", c.expensive(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, _, err := web.ChangesQuery(r.URL.Query(), time.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		cs, next, err := c.store.ListChanges(r.Context(), q)
		if err == nil && q.Cursor == "" && r.URL.Query().Get("provisional") != "0" {
			var prov []seriesdb.Change
			if prov, _, err = c.store.ProvisionalChanges(r.Context(), q); err == nil {
				cs = append(prov, cs...)
			}
		}
		if errors.Is(err, seriesdb.ErrBadCursor) {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if err != nil {
			fail(w, err)
			return
		}
		if cs == nil {
			cs = []seriesdb.Change{}
		}
		if next != "" {
			v := r.URL.Query()
			v.Set("cursor", next)
			w.Header().Set("Link", "<"+r.URL.Path+"?"+v.Encode()+`>; rel="next"`)
		}
		writeJSON(w, cs)
	})))
	mux.Handle("GET /schedules", web.SchedulesPage(c.store, c.log, c.cfg.APIToken != ""))
	mux.Handle("GET /trigger", web.TriggerPage(c.store, c.log, c.cfg.APIToken != ""))
}
