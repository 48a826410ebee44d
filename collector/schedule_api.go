package collector

import (
	"encoding/json"
	"errors"
	"html/template"
	"mime"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/store"
)

// scheduleTick is how often the scheduler looks for due schedules.
var scheduleTick = time.Second

// startFleet starts what watches the fleet over time: the scheduler and
// the alerts.
func (c *Collector) startFleet() {
	c.metrics = c.newMetrics()
	c.wg.Add(1)
	go c.scheduler(scheduleTick)
	c.startAlerts()
}

// fleetRoutes adds the schedules' API to api and their page to mux:
//
//	GET    /api/schedules              []Schedule
//	POST   /api/schedules              Schedule (name, every|cron, jitter, trigger) -> Schedule
//	DELETE /api/schedules/{name}
//	POST   /api/schedules/{name}/pause
//	POST   /api/schedules/{name}/resume
//	GET    /api/schedules/{name}/runs  []ScheduleRun, newest first (?limit=N, default 50)
//	GET    /schedules                  the page, with pause, resume and remove buttons
//	GET    /metrics                    the figures for Prometheus (metrics.go)
//	GET    /changes                    each series with a change: its req/s with the changes marked (?days=7)
//	GET    /api/changes                []Change (?days=7, 0: all; &fleet=&device=)
func (c *Collector) fleetRoutes(mux, api *http.ServeMux) {
	fail := func(w http.ResponseWriter, err error) {
		code := http.StatusBadRequest
		switch {
		case errors.Is(err, store.ErrNotFound):
			code = http.StatusNotFound
		case errors.Is(err, store.ErrExists):
			code = http.StatusConflict
		case errors.Is(err, store.ErrUnavailable):
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
			ss = []store.Schedule{}
		}
		writeJSON(w, ss)
	})
	api.HandleFunc("POST /api/schedules", func(w http.ResponseWriter, r *http.Request) {
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
			http.Error(w, "a schedule is a JSON body (Content-Type: application/json)", http.StatusUnsupportedMediaType)
			return
		}
		var sch store.Schedule
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sch); err != nil {
			http.Error(w, "bad request: "+err.Error(), http.StatusBadRequest)
			return
		}
		sch.Paused, sch.LastRun = false, nil
		if err := c.store.AddSchedule(r.Context(), &sch, time.Now()); err != nil {
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
	api.HandleFunc("GET /api/schedules/{name}/runs", func(w http.ResponseWriter, r *http.Request) {
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
			runs = []store.ScheduleRun{}
		}
		writeJSON(w, runs)
	})
	mux.Handle("GET /metrics", c.metricsHandler())
	mux.HandleFunc("GET /changes", c.changesPage())
	api.HandleFunc("GET /api/changes", func(w http.ResponseWriter, r *http.Request) {
		days, err := strconv.Atoi(r.URL.Query().Get("days"))
		if err != nil || days < 0 {
			days = 7
		}
		o := ChangeOptions{Fleet: r.URL.Query().Get("fleet"), Device: r.URL.Query().Get("device")}
		if days > 0 {
			o.Since = time.Now().Add(-time.Duration(days) * 24 * time.Hour)
		}
		cs, err := Changes(r.Context(), c.store, o)
		if err != nil {
			fail(w, err)
			return
		}
		if cs == nil {
			cs = []Change{}
		}
		writeJSON(w, cs)
	})
	page := template.Must(template.New("schedules").Funcs(template.FuncMap{"labels": group.LabelString}).
		ParseFS(webFiles, "web/layout.html", "web/schedules.html"))
	mux.HandleFunc("GET /schedules", func(w http.ResponseWriter, r *http.Request) {
		ss, err := c.store.Schedules(r.Context())
		if err != nil {
			c.log.Error("schedules page", zap.Error(err))
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := page.ExecuteTemplate(w, "schedules.html", map[string]any{
			"Title": "schedules", "Schedules": ss, "NeedToken": c.cfg.APIToken != ""}); err != nil {
			c.log.Warn("schedules page", zap.Error(err))
		}
	})
}
