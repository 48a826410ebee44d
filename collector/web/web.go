package web

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/collector/compare"
	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/figures"
	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/rebuild"
	"github.com/edgebench/edgebench/collector/stats"
	"github.com/edgebench/edgebench/collector/store"
	"github.com/edgebench/edgebench/collector/store/sqldb"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/transport"
	"github.com/edgebench/edgebench/verdict"
	"github.com/edgebench/edgebench/wire"
)

// files are the page templates and the chart script. The script is
// edgebench's own (chart.js, about 130 lines of SVG drawing): a charting
// library would be ten times the size for the two chart kinds the pages
// need.
//
//go:embed *.html *.js
var files embed.FS

// Store is what the pages read of the store (a *store.Store).
type Store interface {
	compare.Store // the comparison page
	// Runs lists the results f selects, the last received first.
	Runs(ctx context.Context, f store.Filter) ([]store.RunRow, error)
	// DevicesAfter lists a page of the devices after a cursor.
	DevicesAfter(ctx context.Context, c store.DeviceCursor, limit int) (store.DevicePage, error)
	// DeviceCounts counts the devices and those online.
	DeviceCounts(ctx context.Context) (total, online int, err error)
	// RunsAfter lists a page of results, the newest first.
	RunsAfter(ctx context.Context, f store.Filter) (store.RunPage, error)
	// ResultKept returns a stored result and whether its samples were
	// pruned; RunFigures the figures kept of its runs.
	ResultKept(ctx context.Context, id string) (*wire.Result, store.Kept, error)
	RunFigures(ctx context.Context, id string) ([]figures.Run, error)
	// AddVerdicts sets each row's Verdict and Stable.
	AddVerdicts(ctx context.Context, rows []store.RunRow) error
	// ResultIDPrefix resolves a unique prefix of a result id (or "last").
	ResultIDPrefix(ctx context.Context, prefix string) (string, error)
}

// Options are what New takes besides the store. Zero values take the
// defaults.
type Options struct {
	Log *zap.Logger
	// Cancel, when set, is the fleet page's cancel button: it asks the
	// devices running a command to stop it (the collector's Cancel).
	// Without it (the collector's API has a token) the page has none.
	Cancel func(ctx context.Context, id string) error
}

// Web serves the collector's pages: the fleet at /, a run at /runs/{id},
// a comparison at /compare?by=...&metric=..., and the chart script at
// /static/chart.js. Pages are rendered on the server; the script only
// draws the charts whose data the page carries.
type Web struct {
	store  Store
	log    *zap.Logger
	tmpl   map[string]*template.Template
	mux    *http.ServeMux
	now    func() time.Time
	cancel func(ctx context.Context, id string) error // Options.Cancel
}

// New parses the embedded templates.
func New(st Store, o Options) (*Web, error) {
	log := o.Log
	if log == nil {
		log = zap.NewNop()
	}
	w := &Web{store: st, log: log, tmpl: map[string]*template.Template{}, mux: http.NewServeMux(), now: time.Now, cancel: o.Cancel}
	funcs := template.FuncMap{
		"labels":    group.LabelString,
		"num":       webNum,
		"lat":       webLat,
		"mb":        func(kb float64) string { return webNum(kb / 1024) },
		"ago":       w.ago,
		"inc":       func(i int) int { return i + 1 },
		"hasPrefix": strings.HasPrefix,
	}
	for _, page := range []string{"fleet", "run", "compare", "runs"} {
		t, err := template.New(page).Funcs(funcs).ParseFS(files, "layout.html", "runtable.html", page+".html")
		if err != nil {
			return nil, fmt.Errorf("web templates: %w", err)
		}
		w.tmpl[page] = t
	}
	w.mux.HandleFunc("GET /{$}", w.fleet)
	w.mux.HandleFunc("GET /runs/{id}", w.run)
	w.mux.HandleFunc("GET /runs", w.runs)
	w.mux.HandleFunc("GET /compare", w.compare)
	w.mux.HandleFunc("POST /commands/{id}/cancel", w.webCancel)
	for _, f := range []string{"chart.js", "schedules.js"} {
		w.mux.Handle("GET /static/"+f, http.StripPrefix("/static/", http.FileServerFS(files)))
	}
	return w, nil
}

// ServeHTTP serves the pages.
func (w *Web) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(rw.Header())
	w.mux.ServeHTTP(rw, r)
}

func (w *Web) render(rw http.ResponseWriter, page string, data any) {
	var b bytes.Buffer
	if err := w.tmpl[page].ExecuteTemplate(&b, page+".html", data); err != nil {
		w.log.Error("render page", zap.String("page", page), zap.Error(err))
		http.Error(rw, "internal error", http.StatusInternalServerError)
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	rw.Write(b.Bytes())
}

func (w *Web) fail(rw http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, sqldb.ErrNotFound) {
		http.Error(rw, err.Error(), http.StatusNotFound)
		return
	}
	if errors.Is(err, store.ErrAmbiguous) {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	w.log.Error("page", zap.String("path", r.URL.Path), zap.Error(err))
	http.Error(rw, "internal error", http.StatusInternalServerError)
}

// The fleet page's and the runs page's rows per page: a page costs what
// its rows cost, however many devices and results the store holds.
const (
	devicesPerPage = 100
	runsPerPage    = 50
)

func (w *Web) fleet(rw http.ResponseWriter, r *http.Request) {
	after, err := store.ParseDeviceCursor(r.URL.Query().Get("after"))
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	page, err := w.store.DevicesAfter(r.Context(), after, devicesPerPage)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	total, online, err := w.store.DeviceCounts(r.Context())
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	recent, err := w.store.RunsAfter(r.Context(), store.Filter{Limit: runsPerPage})
	if err == nil {
		err = w.store.AddVerdicts(r.Context(), recent.Runs)
	}
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	ids := []string{}
	for _, d := range page.Devices {
		if d.LastResult != "" {
			ids = append(ids, d.LastResult)
		}
	}
	last, err := w.store.Runs(r.Context(), store.Filter{IDs: ids})
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	type deviceRow struct {
		store.Device
		Last *store.RunRow // its newest result, nil when it has none
	}
	byID := map[string]*store.RunRow{}
	for i := range last {
		byID[last[i].ID] = &last[i]
	}
	rows := make([]deviceRow, len(page.Devices))
	for i, d := range page.Devices {
		rows[i] = deviceRow{d, byID[d.LastResult]}
	}
	w.render(rw, "fleet", map[string]any{"Title": "fleet", "Devices": rows, "Runs": recent.Runs, "MoreRuns": !recent.Next.IsZero(),
		"Total": total, "Online": online, "After": after.String(), "Next": page.Next.String(), "CanCancel": w.cancel != nil})
}

// runs is the listing of results, the newest received first, a page at a
// time: ?fleet=&device=&cmd= select, ?before= is the cursor of the page
// before's last row.
func (w *Web) runs(rw http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k, v := range q {
		if !slices.Contains([]string{"fleet", "device", "cmd", "before"}, k) || len(v) > 1 || len(v[0]) > 256 {
			http.Error(rw, "the runs page takes fleet, device, cmd and before, each once", http.StatusBadRequest)
			return
		}
	}
	before, err := store.ParseCursor(q.Get("before"))
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadRequest)
		return
	}
	f := store.Filter{Fleet: q.Get("fleet"), Device: q.Get("device"), Command: q.Get("cmd"), Before: before, Limit: runsPerPage}
	page, err := w.store.RunsAfter(r.Context(), f)
	if err == nil {
		err = w.store.AddVerdicts(r.Context(), page.Runs)
	}
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	next := ""
	if !page.Next.IsZero() {
		v := url.Values{"before": {page.Next.String()}}
		for _, k := range []string{"fleet", "device", "cmd"} {
			if q.Get(k) != "" {
				v.Set(k, q.Get(k))
			}
		}
		next = "/runs?" + v.Encode()
	}
	title := "runs"
	if f.Device != "" {
		title = "runs of " + f.Device
	}
	w.render(rw, "runs", map[string]any{"Title": title, "Runs": page.Runs, "Next": next, "Filter": f, "Paged": !before.IsZero()})
}

// lineSpec is the data of one line chart, as web/chart.js reads it.
type lineSpec struct {
	Type   string       `json:"type"`
	Title  string       `json:"title"`
	Unit   string       `json:"unit"`
	XUnit  string       `json:"xunit"`
	X      []float64    `json:"x"`
	Series []seriesSpec `json:"series"`
}

type seriesSpec struct {
	Name   string     `json:"name"`
	Values []*float64 `json:"values"` // nil: a gap
}

// barSpec is the data of a bar chart with error bars.
type barSpec struct {
	Type  string    `json:"type"`
	Title string    `json:"title"`
	Unit  string    `json:"unit"`
	Bars  []barItem `json:"bars"`
}

type barItem struct {
	Label string   `json:"label"`
	Value *float64 `json:"value"`
	Lo    *float64 `json:"lo"`
	Hi    *float64 `json:"hi"`
	Note  string   `json:"note,omitempty"`
	Color string   `json:"color,omitempty"` // the group's colour across the page
}

// groupColors are the colours of the groups of a comparison page, in
// the order of the groups (web/chart.js's palette).
var groupColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"}

func specJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil { // only plain data: cannot fail
		return "{}"
	}
	return string(b)
}

func (w *Web) run(rw http.ResponseWriter, r *http.Request) {
	id, err := w.store.ResultIDPrefix(r.Context(), r.PathValue("id"))
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	res, kept, err := w.store.ResultKept(r.Context(), id)
	if err != nil {
		w.fail(rw, r, err)
		return
	}
	var stored []figures.Run // what the store keeps of its runs once their samples are pruned
	if kept.SamplesPruned {
		if stored, err = w.store.RunFigures(r.Context(), id); err != nil {
			w.fail(rw, r, err)
			return
		}
	}
	idx := 0
	if v := r.URL.Query().Get("run"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n >= len(res.Runs) {
			http.Error(rw, fmt.Sprintf("no run %q: this result has runs 0 to %d", v, len(res.Runs)-1), http.StatusNotFound)
			return
		}
		idx = n
	}
	data := map[string]any{"Title": "run " + id, "Result": res, "Spec": group.ResultSpec(res), "Run": idx,
		"CapacityCharts": CapacityCharts(res.Capacity), "Pruned": kept.SamplesPruned}
	if len(res.Runs) > 0 {
		run := &res.Runs[idx]
		fig := figures.Of(run, res.Fingerprint)
		if idx < len(stored) {
			fig = stored[idx]
		}
		data["Fig"] = fig
		data["Throttled"] = fig.Throttled
		data["Charts"] = RunCharts(run)
		switch n := len(run.Timeline); {
		case n == 1:
			data["ChartNote"] = fmt.Sprintf("This run lasted %s: the charts have a point per second of the run, so one point each, "+
				"and the figures above say more. A run of 10 s or more (-d 10s) draws a curve.", formatSeconds(float64(run.DurationUS)/1e6))
		case n > maxChartPoints:
			data["ChartNote"] = fmt.Sprintf("This run lasted %s: the charts draw one point in every %d of its seconds and samples (at most %d a chart).",
				formatSeconds(float64(run.DurationUS)/1e6), stride(n), maxChartPoints)
		}
		var rep bytes.Buffer
		if kept.SamplesPruned {
			rep.WriteString("The per-second samples and histograms of this result were pruned (the collector keeps them for --keep-samples); what is kept of the run:\n\n")
			if err := figures.WriteSummary(&rep, fig); err != nil {
				fmt.Fprintf(&rep, "no summary: %v\n", err)
			}
			if v := rebuild.VerdictOf(run); v != nil {
				fmt.Fprintf(&rep, "Verdict:      %s\n", v.Line())
			}
		} else if lr, err := rebuild.LoadResult(run, rebuild.RunSpec(res)); err != nil {
			fmt.Fprintf(&rep, "no report: %v\n", err)
		} else {
			var b strings.Builder
			if err := report.WriteText(&b, lr); err != nil {
				fmt.Fprintf(&rep, "no report: %v\n", err)
			} else {
				rep.WriteString(verdict.InsertText(b.String(), verdict.TextLines(rebuild.VerdictOf(run), lr)))
			}
		}
		data["Verdict"] = rebuild.VerdictOf(run)
		data["Stable"] = rebuild.StableText(res.Repeat)
		for _, m := range []struct {
			sys   *wire.System
			whose string
		}{{run.System, "target"}, {run.Loader, "loader"}} {
			if m.sys == nil {
				continue
			}
			rep.WriteByte('\n')
			if l := res.Loader; l != nil { // two machines: say whose
				dev := res.Fleet + "/" + res.Device
				if m.whose == "loader" {
					dev = l.Fleet + "/" + l.Device
				}
				fmt.Fprintf(&rep, "The %s, %s:\n", m.whose, dev)
			}
			if err := rebuild.SystemReport(m.sys).WriteText(&rep); err != nil {
				fmt.Fprintf(&rep, "no System section: %v\n", err)
			}
		}
		data["Report"] = rep.String()
	} else {
		data["Fig"] = figures.Run{RPS: math.NaN(), MeanUS: math.NaN(), P50US: math.NaN(), P99US: math.NaN(), MaxUS: math.NaN(),
			CPUPct: math.NaN(), IOKBs: math.NaN(), MemKB: math.NaN(), TempC: math.NaN()}
	}
	w.render(rw, "run", data)
}

// maxChartPoints bounds the points of a run page's chart: a day-long run
// has 86,400 seconds, which a page neither needs nor can draw.
const maxChartPoints = 1500

// stride is the step that keeps at most maxChartPoints of n points.
func stride(n int) int { return (n + maxChartPoints - 1) / maxChartPoints }

// every is every stride(len(s))-th element of s.
func every[T any](s []T) []T {
	k := stride(len(s))
	if k <= 1 {
		return s
	}
	out := make([]T, 0, len(s)/k+1)
	for i := 0; i < len(s); i += k {
		out = append(out, s[i])
	}
	return out
}

// RunCharts builds the run page's chart data: requests/s and latency per
// second of the load timeline, and CPU, IO and temperature per probe
// sample, at most maxChartPoints of each (one in every stride). It returns
// JSON strings for the pages' data-chart attributes.
func RunCharts(run *wire.Run) []string {
	var out []string
	if tl := every(run.Timeline); len(tl) > 0 {
		x := make([]float64, len(tl))
		rps := seriesSpec{Name: "req/s"}
		errs := seriesSpec{Name: "errors/s"}
		p50 := seriesSpec{Name: "p50"}
		p99 := seriesSpec{Name: "p99"}
		for i, s := range tl {
			x[i] = float64(s.T + 1)
			rps.Values = append(rps.Values, fp(float64(s.Completed)))
			errs.Values = append(errs.Values, fp(float64(s.Errors)))
			if s.Completed == 0 { // no latency was measured that second: a gap, not 0 ms
				p50.Values, p99.Values = append(p50.Values, nil), append(p99.Values, nil)
				continue
			}
			p50.Values = append(p50.Values, fp(float64(s.P50US)/1000))
			p99.Values = append(p99.Values, fp(float64(s.P99US)/1000))
		}
		out = append(out,
			specJSON(lineSpec{Type: "line", Title: "Requests per second", Unit: "req/s", XUnit: "s", X: x, Series: []seriesSpec{rps, errs}}),
			specJSON(lineSpec{Type: "line", Title: "Latency", Unit: "ms", XUnit: "s", X: x, Series: []seriesSpec{p50, p99}}))
	}
	sy := run.System
	if sy == nil || len(sy.Samples) == 0 {
		return out
	}
	samples := every(sy.Samples)
	x := make([]float64, len(samples))
	cpu := seriesSpec{Name: "busy"}
	user := seriesSpec{Name: "user"}
	rd := seriesSpec{Name: "read"}
	wr := seriesSpec{Name: "write"}
	temp := seriesSpec{Name: "hottest zone"}
	for i, s := range samples {
		x[i] = float64(s.T) / 1000
		if c := s.CPU; c != nil {
			cpu.Values = append(cpu.Values, fp(float64(10000-c.Idle-c.IOWait)/100))
			user.Values = append(user.Values, fp(float64(c.User+c.Nice)/100))
		} else {
			cpu.Values, user.Values = append(cpu.Values, nil), append(user.Values, nil)
		}
		var r, w float64
		seen := false
		for _, d := range s.Disks {
			if int(d.I) < len(sy.Partitions) && sy.Partitions[d.I] {
				continue
			}
			r, w, seen = r+float64(d.ReadKBs), w+float64(d.WriteKBs), true
		}
		if seen {
			rd.Values, wr.Values = append(rd.Values, fp(r)), append(wr.Values, fp(w))
		} else {
			rd.Values, wr.Values = append(rd.Values, nil), append(wr.Values, nil)
		}
		if len(s.TempDC) > 0 {
			hot := s.TempDC[0]
			for _, t := range s.TempDC {
				hot = max(hot, t)
			}
			temp.Values = append(temp.Values, fp(float64(hot)/10))
		} else {
			temp.Values = append(temp.Values, nil)
		}
	}
	out = append(out,
		specJSON(lineSpec{Type: "line", Title: "CPU", Unit: "%", XUnit: "s", X: x, Series: []seriesSpec{cpu, user}}),
		specJSON(lineSpec{Type: "line", Title: "Disk IO", Unit: "KB/s", XUnit: "s", X: x, Series: []seriesSpec{rd, wr}}),
		specJSON(lineSpec{Type: "line", Title: "Temperature", Unit: "°C", XUnit: "s", X: x, Series: []seriesSpec{temp}}))
	return out
}

func (w *Web) compare(rw http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	data := map[string]any{"Title": "compare", "MetricNames": compare.MetricNames(), "MedianCIRuns": stats.MedianCIRuns}
	o, err := compare.ParseQuery(q)
	if o.By == "" {
		o.By = "device"
	}
	metric := "rps"
	if len(o.Metrics) > 0 {
		metric = o.Metrics[0]
	}
	o.Metrics = []string{metric}
	data["By"], data["Metric"], data["ExcludeThrottled"] = o.By, metric, o.Filter.ExcludeThrottled
	data["Title"] = "compare by " + o.By
	c := &compare.Comparison{By: o.By}
	if err == nil {
		c, err = compare.Runs(r.Context(), w.store, o)
	}
	var qe *compare.QueryError
	switch {
	case errors.As(err, &qe):
		data["Err"] = qe.Msg
		c = &compare.Comparison{By: o.By}
	case err != nil:
		w.fail(rw, r, err)
		return
	}
	m, _ := compare.MetricByName(metric)
	type tableView struct {
		Spec  string
		Base  string
		Chart string
		Text  string
	}
	var tables []tableView
	color := map[string]string{} // one colour per group across the page
	for _, t := range c.Tables {
		for _, g := range t.Groups {
			if _, ok := color[g.Key]; !ok {
				color[g.Key] = groupColors[len(color)%len(groupColors)]
			}
		}
	}
	for _, t := range c.Tables {
		one := *c
		one.Tables = []compare.Table{t}
		var text bytes.Buffer
		if err := one.WriteText(&text); err != nil {
			w.fail(rw, r, err)
			return
		}
		chart := CompareChart(c.By, t, m)
		for i := range chart.Bars {
			chart.Bars[i].Color = color[chart.Bars[i].Label]
		}
		tables = append(tables, tableView{Spec: t.Spec.String(), Base: t.Base, Chart: specJSON(chart), Text: text.String()})
	}
	data["Tables"] = tables
	data["ByKeys"] = w.byKeys(r, o)
	w.render(rw, "compare", data)
}

// byKeys are the keys the page offers to compare by: those the runs
// the page selects have (the columns, the parts of the spec, their
// labels; label.K and sys.K where a label is named like a field), and
// the one asked for.
func (w *Web) byKeys(r *http.Request, o compare.Options) []string {
	labels, err := w.store.LabelKeys(r.Context(), o.Filter)
	if err != nil {
		w.log.Warn("compare keys", zap.Error(err))
	}
	keys := group.Keys(labels)
	for _, l := range labels {
		if group.IsSystemField(l) || group.IsSpecField(l) {
			keys = append(keys, "sys."+escape.Printable(l))
		}
	}
	if !slices.Contains(keys, o.By) {
		keys = append([]string{o.By}, keys...)
	}
	return keys
}

// CompareChart is a comparison table's bar chart of metric m: what the
// table shows of each group (the median with its 95 % interval, or the
// total of a count), labelled with the verdict against the base group.
// Latencies are in the unit the table writes the largest of them in
// (µs, ms or s).
func CompareChart(by string, t compare.Table, m compare.Metric) barSpec {
	spec := barSpec{Type: "bar", Title: m.Title + " by " + by, Unit: m.Unit}
	scale := 1.0
	if m.Unit == "µs" {
		top := 0.0
		for _, g := range t.Groups {
			if v, _, hi := m.Shown(g.Stats[m.Name]); !math.IsNaN(v) {
				top = max(top, v)
				if !math.IsNaN(hi) {
					top = max(top, hi)
				}
			}
		}
		switch {
		case top >= 1e6:
			spec.Unit, scale = "s", 1e6
		case top >= 1e3:
			spec.Unit, scale = "ms", 1e3
		}
	}
	for _, g := range t.Groups {
		v, lo, hi := m.Shown(g.Stats[m.Name])
		b := barItem{Label: g.Key, Value: fp(v / scale), Lo: fp(lo / scale), Hi: fp(hi / scale)}
		if d, ok := g.Deltas[m.Name]; ok {
			b.Note = d.Verdict()
		}
		spec.Bars = append(spec.Bars, b)
	}
	return spec
}

// fp is v as a JSON number, nil when absent.
func fp(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	v = math.Round(v*1000) / 1000
	return &v
}

func webNum(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func webLat(us float64) string {
	if math.IsNaN(us) {
		return "-"
	}
	return compare.FormatValue(compare.Metric{Unit: "µs"}, us)
}

func (w *Web) ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := w.now().Sub(t)
	switch {
	case d < time.Minute:
		return strconv.Itoa(max(0, int(d.Seconds()))) + " s ago"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + " min ago"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + " h ago"
	case d < 30*24*time.Hour:
		return strconv.Itoa(int(d.Hours()/24)) + " days ago"
	}
	return t.Local().Format("2006-01-02 15:04")
}

// formatSeconds writes a duration in seconds as the reports do: 1.00 s.
func formatSeconds(s float64) string { return strconv.FormatFloat(s, 'f', 2, 64) + " s" }

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
	if err := w.cancel(r.Context(), id); err != nil {
		code := CancelStatus(err)
		if code == http.StatusInternalServerError {
			w.log.Error("cancel", zap.String("cmd_id", id), zap.Error(err))
		}
		http.Error(rw, err.Error(), code)
		return
	}
	http.Redirect(rw, r, "/?cancelled="+id, http.StatusSeeOther)
}

// CancelStatus is the HTTP status of an error of the collector's Cancel.
func CancelStatus(err error) int {
	switch {
	case errors.Is(err, sqldb.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, store.ErrNotRunning):
		return http.StatusConflict
	case errors.Is(err, transport.ErrNotConnected):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
