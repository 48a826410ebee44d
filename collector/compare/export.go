package compare

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/edgebench/edgebench/collector/escape"
	"github.com/edgebench/edgebench/collector/group"
	"github.com/edgebench/edgebench/collector/store"
)

// exportFormats are the formats Export writes.
var exportFormats = []string{"csv", "json", "benchfmt"}

// ExportStore is what an export reads of the store (a *store.Store).
type ExportStore interface {
	// Runs lists the results f selects, the last received first.
	Runs(ctx context.Context, f store.Filter) ([]store.RunRow, error)
	// GroupRuns returns the succeeded runs f selects, each with its
	// spec and its group under by.
	GroupRuns(ctx context.Context, by string, f store.Filter) ([]store.GroupedRun, error)
}

// Export writes the runs of st matching f in format: csv (one row per
// result, figures averaged over its runs, and its spec; each figure's
// column names its statistic over the runs: rps_mean, max_us_max,
// errors_total), json (the same rows) or benchfmt (one Go benchmark line per run, readable by
// benchstat, with the spec as configuration so that benchstat keeps
// different work apart as compare does).
func Export(ctx context.Context, w io.Writer, st ExportStore, format string, f store.Filter) error {
	switch format {
	case "csv", "json":
		rows, err := st.Runs(ctx, f)
		if err != nil {
			return err
		}
		if format == "json" {
			return writeJSONRows(w, rows)
		}
		return writeCSV(w, rows)
	case "benchfmt":
		runs, err := st.GroupRuns(ctx, "device", f)
		if err != nil {
			return err
		}
		rows, err := st.Runs(ctx, f)
		if err != nil {
			return err
		}
		meta := map[string]store.RunRow{}
		for _, r := range rows {
			meta[r.ID] = r
		}
		return writeBenchfmt(w, runs, meta)
	}
	return fmt.Errorf("export: unknown format %q (want %s)", format, strings.Join(exportFormats, ", "))
}

// csvColumns are the CSV export's columns.
var csvColumns = []string{"id", "fleet", "device", "cmd_id", "outcome", "started", "url", "connections", "runs", "labels",
	"board", "server", "throttled", "rps_mean", "mean_us_mean", "p50_us_mean", "p99_us_mean", "max_us_max", "timeouts_total", "errors_total",
	"cpu_pct_mean", "io_kbs_mean", "mem_kb_mean",
	"reason", "method", "keepalive", "rate", "body_bytes", "headers", "sys_board", "sys_server"}

func writeCSV(w io.Writer, rows []store.RunRow) error {
	bw := bufio.NewWriter(w)
	writeCSVRecord(bw, csvColumns, nil)
	for _, r := range rows {
		sp := r.Spec
		// board and server as compare groups them: a run label of the
		// name wins; sys_board and sys_server are what the device said.
		board, server := r.Board, r.Server
		if v, ok := r.Labels["board"]; ok {
			board = v
		}
		if v, ok := r.Labels["server"]; ok {
			server = v
		}
		// What a device sent (ids and outcomes are checked at the
		// decoder, but escaped all the same) is text: escaped and quoted;
		// the figures are numbers.
		text := []string{r.ID, r.Fleet, r.Device, r.CommandID, r.Outcome, r.Started.UTC().Format(time.RFC3339Nano), r.URL}
		rec := append(text, strconv.Itoa(r.Conns), strconv.Itoa(r.Runs))
		rec = append(rec, group.LabelString(r.Labels), board, server)
		rec = append(rec, strconv.FormatBool(r.Throttled),
			csvFloat(r.RPS), csvFloat(r.MeanUS), csvFloat(r.P50US), csvFloat(r.P99US), csvFloat(r.MaxUS),
			strconv.FormatInt(r.Timeouts, 10), strconv.FormatInt(r.Errors, 10), csvFloat(r.CPUPct), csvFloat(r.IOKBs), csvFloat(r.MemKB))
		rec = append(rec, r.Reason, sp.Method)
		rec = append(rec, optBool(sp.KeepAlive), csvFloat(sp.Rate), strconv.FormatInt(sp.BodyBytes, 10))
		rec = append(rec, strings.Join(sp.Headers, "; "), r.Board, r.Server)
		writeCSVRecord(bw, rec, csvText)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export csv: %w", err)
	}
	return nil
}

// csvText marks the CSV export's columns of text a device sent: all but
// the counts, figures and flags the collector writes.
var csvText = func() []bool {
	text := make([]bool, len(csvColumns))
	for i, c := range csvColumns {
		switch c {
		case "connections", "runs", "throttled", "rps_mean", "mean_us_mean", "p50_us_mean", "p99_us_mean", "max_us_max",
			"timeouts_total", "errors_total", "cpu_pct_mean", "io_kbs_mean", "mem_kb_mean", "keepalive", "rate", "body_bytes":
		default:
			text[i] = true
		}
	}
	return text
}()

// writeCSVRecord writes one CSV record (RFC 4180, lines ending in \n).
// A field of text (text[i]) is made inert for a spreadsheet as OWASP's
// CSV injection advice says: one that begins with =, +, -, @, a tab or a
// carriage return, which a spreadsheet would take for a formula, gets a
// single quote before it, and every text field is quoted, so that a
// semicolon or a tab inside (other locales' separators) cannot start a
// cell of its own. Other fields are quoted when they need it.
func writeCSVRecord(w *bufio.Writer, fields []string, text []bool) {
	for i, f := range fields {
		if i > 0 {
			w.WriteByte(',')
		}
		quote := strings.ContainsAny(f, ",\"\r\n") || strings.HasPrefix(f, " ")
		if i < len(text) && text[i] {
			f, quote = csvInert(f), true
		}
		if !quote {
			w.WriteString(f)
			continue
		}
		w.WriteByte('"')
		w.WriteString(strings.ReplaceAll(f, `"`, `""`))
		w.WriteByte('"')
	}
	w.WriteByte('\n')
}

// csvInert is s with a single quote before it when it begins with a
// character a spreadsheet reads as the start of a formula.
func csvInert(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// csvFloat writes an absent figure as an empty field.
func csvFloat(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// ExportRow is a RunRow as JSON, with absent figures as null.
type ExportRow struct {
	store.RunRow
	MeanUS *float64 `json:"mean_us"`
	P50US  *float64 `json:"p50_us"`
	P99US  *float64 `json:"p99_us"`
	MaxUS  *float64 `json:"max_us"`
	CPUPct *float64 `json:"cpu_pct"`
	IOKBs  *float64 `json:"io_kbs"`
	MemKB  *float64 `json:"mem_kb"`
}

func ptr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// ExportRows converts rows for JSON.
func ExportRows(rows []store.RunRow) []ExportRow {
	out := make([]ExportRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, ExportRow{RunRow: r, MeanUS: ptr(r.MeanUS), P50US: ptr(r.P50US), P99US: ptr(r.P99US), MaxUS: ptr(r.MaxUS),
			CPUPct: ptr(r.CPUPct), IOKBs: ptr(r.IOKBs), MemKB: ptr(r.MemKB)})
	}
	return out
}

func writeJSONRows(w io.Writer, rows []store.RunRow) error {
	out := ExportRows(rows)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("export json: %w", err)
	}
	return nil
}

// writeBenchfmt writes runs in the Go benchmark format: configuration
// lines (device, server, build, fleet, board, every other run label and
// the spec's method, keep-alive, rate, body size and headers) before each
// run's line, which names the target and connections and carries the
// figures as value-unit pairs. "Unit ... better=higher"
// lines tell benchstat which way req/s goes. benchstat -col server (or
// device, build) then compares the groups.
func writeBenchfmt(w io.Writer, runs []store.GroupedRun, meta map[string]store.RunRow) error {
	var b strings.Builder
	b.WriteString("Unit req/s better=higher\n\n")
	cur := map[string]string{}
	for _, r := range runs {
		m, ok := meta[r.ResultID]
		if !ok {
			continue
		}
		cfg := map[string]string{"device": m.Device, "fleet": m.Fleet, "server": "", "build": "", "board": m.Board}
		for k, v := range m.Labels {
			cfg[configKey(k)] = v
		}
		sp := r.Spec // the work done, which no label may hide
		cfg["method"], cfg["keepalive"], cfg["rate"] = sp.Method, optBool(sp.KeepAlive), strconv.FormatFloat(sp.Rate, 'f', -1, 64)
		cfg["body-bytes"], cfg["headers"] = strconv.FormatInt(sp.BodyBytes, 10), strings.Join(sp.Headers, "; ")
		cfg["protocol"], _ = sp.Field("protocol")
		cfg["tls-resume"], _ = sp.Field("tls_resume")
		cfg["tls-version"], _ = sp.Field("tls_version")
		if cfg["server"] == "" {
			cfg["server"] = m.Server
		}
		keys := make([]string, 0, len(cfg))
		for k := range cfg {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := configValue(cfg[k])
			if cur[k] != v {
				fmt.Fprintf(&b, "%s: %s\n", k, v)
				cur[k] = v
			}
		}
		name := "BenchmarkHTTP/" + benchName(m.URL) + "/conns=" + strconv.Itoa(m.Conns)
		iters := r.Completed
		if iters < 1 {
			iters = 1
		}
		fmt.Fprintf(&b, "%s %d %s req/s", name, iters, strconv.FormatFloat(r.RPS, 'g', 6, 64))
		pair := func(v, scale float64, unit string) {
			if !math.IsNaN(v) {
				fmt.Fprintf(&b, " %s %s", strconv.FormatFloat(v*scale, 'g', 6, 64), unit)
			}
		}
		pair(r.MeanUS, 1e-6, "sec/op")
		pair(r.P50US, 1e-6, "p50-sec")
		pair(r.P99US, 1e-6, "p99-sec")
		pair(r.MaxUS, 1e-6, "max-sec")
		pair(float64(r.Timeouts), 1, "timeouts")
		pair(float64(r.Errors), 1, "errors")
		pair(r.CPUPct, 1, "cpu-%")
		pair(r.IOKBs, 1, "io-KB/s")
		pair(r.MemKB*1024, 1, "mem-B")
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("export benchfmt: %w", err)
	}
	return nil
}

// configKey makes a label key a benchfmt configuration key: lower case,
// no spaces.
func configKey(k string) string {
	k = strings.ToLower(k)
	k = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == ':' {
			return '-'
		}
		return r
	}, k)
	if k == "" || !(k[0] >= 'a' && k[0] <= 'z') {
		k = "l" + k
	}
	return k
}

// configValue makes v a configuration value: one line, printable.
func configValue(v string) string {
	return escape.Printable(strings.Join(strings.Fields(v), " "))
}

// benchName turns a target URL into a benchmark name element: host and
// path, no spaces or slashes.
func benchName(raw string) string {
	u, err := url.Parse(raw)
	name := raw
	if err == nil && u.Host != "" {
		name = u.Host + u.Path
		if u.RawQuery != "" {
			name += "?" + u.RawQuery
		}
	}
	name = strings.TrimSuffix(name, "/")
	return strings.Map(func(r rune) rune {
		switch {
		case r == '/' || unicode.IsSpace(r):
			return '_'
		case unicode.IsControl(r):
			return -1
		}
		return r
	}, name)
}

// optBool is b as "true" or "false", empty when unknown.
func optBool(b *bool) string {
	if b == nil {
		return ""
	}
	return strconv.FormatBool(*b)
}
