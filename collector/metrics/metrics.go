package metrics

import (
	"context"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/scheduledb"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
)

// The collector's figures for Prometheus, at GET /metrics on its web
// address. Labels are bounded: fleet and device (the fleet's accounts),
// server (a result's server label, or else the server's name without its
// version), metric (one of seriesdb.SeriesMetrics()); never a result's,
// command's or URL's id. The latest figures are the store's latest table
// (store.Latest: each series' last result received, kept at ingest), read
// in the order the collector received them, never by a device's clock:
// of each device at most seriesdb.SeriesPerDevice series (those it sent
// last; the ones its cap left out are counted per device in
// edgebench_series_dropped_total), of the series of one fleet, device and
// server (several specs or labels) the one received last, and at most
// Config.MaxSeries in all (those received last). So one device that
// makes a new series with each result pushes out its own, never the
// others'. The series with a result in the last 30 days that are not
// exported are counted in edgebench_series_not_exported.
//
//	edgebench_results_stored_total                 counter  results committed (new)
//	edgebench_results_duplicate_total              counter  results already stored, resent by their device
//	edgebench_results_failed_total                 counter  results the store did not take (not acked, resent)
//	edgebench_ingest_batches_total                 counter  store transactions of results
//	edgebench_ingest_batch_seconds                 histogram  a batch's time in the store
//	edgebench_ingest_batch_results                 histogram  results per batch
//	edgebench_broker_refused_total                 counter  logins and packets the embedded broker refused
//	edgebench_devices{fleet,state}                 gauge    devices online / offline
//	edgebench_device_spooled_results{fleet,device} gauge   results waiting in a device's spool (its last heartbeat)
//	edgebench_series_latest{fleet,device,server,metric} gauge  the latest result's figure of a series
//	edgebench_series_not_exported                  gauge    series of the last 30 days not exported (merged, capped)
//	edgebench_series_dropped_total{fleet,device}   counter  a device's series its cap left out (the 100 devices with most)
//	edgebench_alerts_published_total, edgebench_alerts_posted_total, edgebench_alerts_dropped_total
//	edgebench_schedules{state}                     gauge    schedules active / paused

// Store is what the metrics read of the store at a scrape (a
// *store.Store).
type Store interface {
	// Devices lists the devices the store knows.
	Devices(ctx context.Context) ([]store.Device, error)
	// Schedules lists the schedules.
	Schedules(ctx context.Context) ([]scheduledb.Schedule, error)
	// Latest lists the latest figures of the series that may be
	// exported, received since since, the last received first, at most
	// limit; total counts the series received since since.
	Latest(ctx context.Context, since time.Time, limit int) ([]seriesdb.LatestSeries, int64, error)
	// SeriesDropped lists the devices whose series their cap left out.
	SeriesDropped(ctx context.Context, limit int) ([]seriesdb.DroppedSeries, error)
}

// Config configures the metrics: the store and the collector's counts,
// read at each scrape.
type Config struct {
	Store Store
	// The collector's counts.
	Stored, Duplicates, Failed, BrokerRefused    func() int64
	AlertsPublished, AlertsPosted, AlertsDropped func() int64
	// MaxSeries bounds the series of edgebench_series_latest; default
	// DefaultMaxSeries.
	MaxSeries int
	Log       *zap.Logger
}

// DefaultMaxSeries is Config.MaxSeries unless set: the series of
// edgebench_series_latest at most, those received last.
const DefaultMaxSeries = 2000

// Metrics are the collector's figures for Prometheus.
type Metrics struct {
	reg     *prometheus.Registry
	log     *zap.Logger
	batches prometheus.Counter
	latency prometheus.Histogram
	size    prometheus.Histogram
}

// ObserveIngest records one batch given to the store, started at start.
func (m *Metrics) ObserveIngest(n int, start time.Time) {
	m.batches.Inc()
	m.latency.Observe(time.Since(start).Seconds())
	m.size.Observe(float64(n))
}

// New registers the metrics; ctx bounds the store's reads of every scrape
// (the collector's life).
func New(ctx context.Context, cfg Config) *Metrics {
	if cfg.MaxSeries <= 0 {
		cfg.MaxSeries = DefaultMaxSeries
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	reg := prometheus.NewRegistry()
	m := &Metrics{reg: reg, log: cfg.Log,
		batches: prometheus.NewCounter(prometheus.CounterOpts{Name: "edgebench_ingest_batches_total", Help: "Store transactions of results."}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "edgebench_ingest_batch_seconds", Help: "A batch's time in the store.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}),
		size: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "edgebench_ingest_batch_results", Help: "Results per batch.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 10)}),
	}
	reg.MustRegister(m.batches, m.latency, m.size)
	counter := func(name, help string, f func() int64) {
		if f == nil {
			f = func() int64 { return 0 }
		}
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(f()) }))
	}
	counter("edgebench_results_stored_total", "Results committed to the store.", cfg.Stored)
	counter("edgebench_results_duplicate_total", "Results already stored, resent by their device.", cfg.Duplicates)
	counter("edgebench_results_failed_total", "Results the store did not take (not acked: the device resends them).", cfg.Failed)
	counter("edgebench_broker_refused_total", "Logins, subscriptions and packets the embedded broker refused.", cfg.BrokerRefused)
	counter("edgebench_alerts_published_total", "Alerts published on MQTT.", cfg.AlertsPublished)
	counter("edgebench_alerts_posted_total", "Alerts the webhook took.", cfg.AlertsPosted)
	counter("edgebench_alerts_dropped_total", "Alerts not posted: the queue was full or every attempt failed.", cfg.AlertsDropped)
	reg.MustRegister(&fleetCollector{ctx: ctx, st: cfg.Store, max: cfg.MaxSeries, log: cfg.Log})
	return m
}

// fleetCollector reads the fleet's figures from the store at each scrape
// (at most every 10 s; a scrape in between gets the figures read last).
type fleetCollector struct {
	ctx  context.Context
	st   Store
	max  int // series exported at most
	log  *zap.Logger
	mu   sync.Mutex
	at   time.Time
	last []prometheus.Metric
}

var (
	descDevices  = prometheus.NewDesc("edgebench_devices", "Devices by state (online, offline).", []string{"fleet", "state"}, nil)
	descSpooled  = prometheus.NewDesc("edgebench_device_spooled_results", "Results waiting in a device's spool, from its last heartbeat.", []string{"fleet", "device"}, nil)
	descLatest   = prometheus.NewDesc("edgebench_series_latest", "The latest result's figure of each series (metric: rps, p99_us, cpu_per_kreq).", []string{"fleet", "device", "server", "metric"}, nil)
	descDropped  = prometheus.NewDesc("edgebench_series_not_exported", "Series with a result in the last 30 days left out of edgebench_series_latest: merged into one of the same fleet, device and server, or past a cap.", nil, nil)
	descCapped   = prometheus.NewDesc("edgebench_series_dropped_total", "Series of a device its cap (the series it sent last) left out of edgebench_series_latest.", []string{"fleet", "device"}, nil)
	descSchedule = prometheus.NewDesc("edgebench_schedules", "Schedules by state (active, paused).", []string{"state"}, nil)
	descUp       = prometheus.NewDesc("edgebench_store_up", "1 when the store answered the last scrape's queries.", nil, nil)
)

func (f *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDevices, descSpooled, descLatest, descDropped, descCapped, descSchedule, descUp} {
		ch <- d
	}
}

func (f *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if time.Since(f.at) >= 10*time.Second || f.last == nil {
		ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
		ms, err := f.fleetMetrics(ctx)
		cancel()
		if err != nil {
			f.log.Warn("metrics", zap.Error(err))
			ms = []prometheus.Metric{prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 0)}
		}
		f.at, f.last = time.Now(), ms
	}
	for _, m := range f.last {
		ch <- m
	}
}

func (fc *fleetCollector) fleetMetrics(ctx context.Context) ([]prometheus.Metric, error) {
	var out []prometheus.Metric
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		out = append(out, prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...))
	}
	devs, err := fc.st.Devices(ctx)
	if err != nil {
		return nil, err
	}
	type fs struct{ online, offline int }
	fleets := map[string]*fs{}
	for _, d := range devs {
		f := fleets[d.Fleet]
		if f == nil {
			f = &fs{}
			fleets[d.Fleet] = f
		}
		if d.Online {
			f.online++
		} else {
			f.offline++
		}
		if d.Heartbeat != nil {
			gauge(descSpooled, float64(d.Heartbeat.Spooled), d.Fleet, d.ID)
		}
	}
	for name, f := range fleets {
		gauge(descDevices, float64(f.online), name, "online")
		gauge(descDevices, float64(f.offline), name, "offline")
	}
	ss, err := fc.st.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	var active, paused int
	for _, s := range ss {
		if s.Paused {
			paused++
		} else {
			active++
		}
	}
	gauge(descSchedule, float64(active), "active")
	gauge(descSchedule, float64(paused), "paused")
	// The latest result of each series within the last 30 days, the last
	// received first: of one fleet, device and server, the first.
	ls, total, err := fc.st.Latest(ctx, time.Now().Add(-30*24*time.Hour), fc.max)
	if err != nil {
		return nil, err
	}
	type lk struct{ fleet, device, server string }
	seen := map[lk]bool{}
	for _, l := range ls {
		k := lk{l.Fleet, l.Device, l.Server}
		if seen[k] {
			continue
		}
		seen[k] = true
		for m, v := range []float64{l.RPS, l.P99US, l.CPUPerKReq} {
			if !math.IsNaN(v) {
				gauge(descLatest, v, l.Fleet, l.Device, l.Server, seriesdb.SeriesMetrics()[m])
			}
		}
	}
	dropped := total - int64(len(seen))
	capped, err := fc.st.SeriesDropped(ctx, 100)
	if err != nil {
		return nil, err
	}
	for _, d := range capped {
		out = append(out, prometheus.MustNewConstMetric(descCapped, prometheus.CounterValue, float64(d.N), d.Fleet, d.Device))
	}
	gauge(descDropped, float64(dropped))
	gauge(descUp, 1)
	return out, nil
}

// Handler serves /metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: zap.NewStdLog(m.log), Timeout: 20 * time.Second})
}
