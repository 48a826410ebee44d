package measure

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/rebuild"
	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/probe/machine"
	"github.com/edgebench/edgebench/wire"
)

// This file checks the mapping onto the wire and back by value: every
// figure of a run and of the probe's summary gets a value no other figure
// has, goes through FromRun/FromSystem, real msgpack bytes and the
// collector's LoadResult/SystemReport, and must come back equal, in its
// own unit and at its own place. A swap of two figures, a unit slipped or
// a figure dropped on either side fails here.

// filler gives the leaves of a value distinct numbers, in an order that
// is the fields' order, so that any two figures differ.
type filler struct{ k int }

// next is the next distinct number, from 1.
func (f *filler) next() int { f.k++; return f.k }

var durationType = reflect.TypeFor[time.Duration]()
var timeType = reflect.TypeFor[time.Time]()
var histType = reflect.TypeFor[*report.Histogram]()

// fill sets v and everything under it. The values survive the wire's
// units exactly: floats are whole multiples of 10,240 (basis points,
// KiB, tenths of a degree and hundredths all carry them), durations whole
// seconds, byte counts of unsigned kind whole KiB. Slices get two
// elements and maps two entries, so that mixing up elements shows too.
// A histogram records one value of its own (a whole millisecond, exact
// at two significant digits).
func (f *filler) fill(v reflect.Value) {
	switch {
	case v.Type() == histType:
		h := report.NewLatencyHistogram()
		h.Record(int64(f.next()) * 1000)
		v.Set(reflect.ValueOf(h))
		return
	case v.Type() == durationType:
		v.SetInt(int64(f.next()) * int64(time.Second))
		return
	case v.Type() == timeType:
		v.Set(reflect.ValueOf(time.Date(2026, 3, 1, 12, 0, f.next(), 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		f.fill(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				f.fill(v.Field(i))
			}
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			f.fill(v.Index(i))
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
			f.fill(k)
			f.fill(e)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Float64:
		v.SetFloat(float64(f.next()) * 10240)
	case reflect.Int, reflect.Int32, reflect.Int64:
		v.SetInt(int64(f.next()))
	case reflect.Uint64:
		v.SetUint(uint64(f.next()) * 1024)
	case reflect.Uint32:
		v.SetUint(uint64(f.next()))
	case reflect.Bool:
		v.SetBool(f.next()%2 == 1)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", f.next()))
	default:
		panic("fill: no value for " + v.Type().String())
	}
}

// diff lists where got differs from want, by path, skipping the fields
// named in skip (by Type.Field, as "LoadResult.Timings"). Floats are
// equal within a part in 10^12, histograms in their count, minimum and
// maximum.
func diff(want, got reflect.Value, path string, skip map[string]string, out *[]string) {
	bad := func(format string, args ...any) { *out = append(*out, path+": "+fmt.Sprintf(format, args...)) }
	switch {
	case want.Type() == histType:
		w, g := want.Interface().(*report.Histogram), got.Interface().(*report.Histogram)
		if (w == nil) != (g == nil) {
			bad("%v, want %v", g, w)
		} else if w != nil && (w.Count() != g.Count() || w.Min() != g.Min() || w.Max() != g.Max()) {
			bad("count %d min %d max %d, want %d %d %d", g.Count(), g.Min(), g.Max(), w.Count(), w.Min(), w.Max())
		}
		return
	case want.Type() == timeType:
		if w, g := want.Interface().(time.Time), got.Interface().(time.Time); !w.Equal(g) {
			bad("%v, want %v", g, w)
		}
		return
	}
	switch want.Kind() {
	case reflect.Pointer:
		if want.IsNil() || got.IsNil() {
			if want.IsNil() != got.IsNil() {
				bad("nil %v, want nil %v", got.IsNil(), want.IsNil())
			}
			return
		}
		diff(want.Elem(), got.Elem(), path, skip, out)
	case reflect.Struct:
		for i := range want.NumField() {
			ft := want.Type().Field(i)
			if _, ok := skip[want.Type().Name()+"."+ft.Name]; ok || !ft.IsExported() {
				continue
			}
			p := path + "." + ft.Name
			if ft.Anonymous {
				p = path
			}
			diff(want.Field(i), got.Field(i), p, skip, out)
		}
	case reflect.Slice:
		if want.Len() != got.Len() {
			bad("%d elements, want %d", got.Len(), want.Len())
			return
		}
		for i := range want.Len() {
			diff(want.Index(i), got.Index(i), fmt.Sprintf("%s[%d]", path, i), skip, out)
		}
	case reflect.Map:
		if want.Len() != got.Len() {
			bad("%v, want %v", got, want)
			return
		}
		for _, k := range want.MapKeys() {
			if g := got.MapIndex(k); !g.IsValid() {
				bad("no entry %v", k)
			} else {
				diff(want.MapIndex(k), g, fmt.Sprintf("%s[%v]", path, k), skip, out)
			}
		}
	case reflect.Float64:
		if w, g := want.Float(), got.Float(); math.Abs(w-g) > 1e-12*math.Abs(w) {
			bad("%v, want %v", g, w)
		}
	default:
		if !reflect.DeepEqual(want.Interface(), got.Interface()) {
			bad("%v, want %v", got, want)
		}
	}
}

// throughTheWire sends a result of one run the way a device does
// (msgpack bytes) and decodes it the way the collector does.
func throughTheWire(t *testing.T, spec wire.RunSpec, run wire.Run) (*wire.Result, []byte) {
	t.Helper()
	out := wire.Result{V: wire.SchemaVersion, ID: wire.NewID(), Fleet: "f", Device: "d", CreatedAt: time.Now().UTC(),
		Kind: wire.KindLoadTest, Outcome: wire.StateSucceeded, Spec: spec, Runs: []wire.Run{run}}
	b, err := out.MarshalMsg(nil)
	if err != nil {
		t.Fatal(err)
	}
	in, err := wire.DecodeResult(b)
	if err != nil {
		t.Fatalf("decode %d bytes: %v", len(b), err)
	}
	return in, b
}

// summaryNotBack are the figures of the probe's report that do not come
// back from the wire, and why; everything else must.
var summaryNotBack = map[string]string{
	"Summary.Start":  "the run's StartedAt and the sample times place the window",
	"Summary.End":    "Seconds is the window's length",
	"Report.Samples": "the collector draws samples from the wire's own form (RunCharts); SystemReport rebuilds the summary",
}

// notBackYet are figures that reach the wire
// (TestEverySummaryFieldReachesTheWire, TestRunRoundTripByValue) and that
// the collector's SystemReport or LoadResult does not rebuild yet: the
// network's figures of two-machine runs (issue 30), a watched row's role
// and an upstream's server (issue 28; TestProcRolesOnTheWire checks their
// bytes), and the event loops that ran a run's threads (issue 32). The
// collector's side maps them back, and takes them off this list.
var notBackYet = map[string]string{
	"LoadResult.Loops":   issue32,
	"NetSummary.Duplex":  issue30,
	"NetSummary.RxDrops": issue30,
	"NetSummary.TxDrops": issue30,
	"NetSummary.RxErrs":  issue30,
	"NetSummary.TxErrs":  issue30,
	"Summary.TCP":        issue30,
	"Summary.Path":       issue30,
	"ProcSummary.Role":   issue28,
	"ProcSummary.Of":     issue28,
}

// notBack reports whether the leaf name (as eachLeaf names it, its parents
// first: "Summary.TCP>TCPSummary.Out") is one the collector does not
// rebuild yet, and why.
func notBack(name string) (string, bool) {
	for _, part := range strings.Split(name, ">") {
		if why, ok := notBackYet[part]; ok {
			return why, true
		}
	}
	return "", false
}

const (
	issue30 = "the collector's side of two-machine runs (issue 30) rebuilds it"
	issue28 = "collector/rebuild/rebuild.go maps a row's role and an upstream's server back (issue 28)"
	issue32 = "collector/rebuild/rebuild.go maps the run's event loops back (issue 32), for its reports to say them"
)

// TestSummaryRoundTripByValue: every figure of the probe's summary comes
// back from the wire where it was and in its unit. Cores are sent in
// order, so a core's id comes back as its index: the filled ids are set
// to their indexes first.
func TestSummaryRoundTripByValue(t *testing.T) {
	var rep machine.Report
	(&filler{}).fill(reflect.ValueOf(&rep).Elem())
	for i := range rep.Summary.PerCPUBusy {
		rep.Summary.PerCPUBusy[i].ID = i
	}
	for i := range rep.Summary.Disks { // partitions are a flag of the disk's name, once
		rep.Summary.Disks[i].Partition = i == 1
	}
	// Roles are words the decoder knows; an upstream's server is a row.
	rep.Summary.Procs[0].Role, rep.Summary.Procs[0].Of = machine.RoleServer, ""
	rep.Summary.Procs[1].Role, rep.Summary.Procs[1].Of = machine.RoleUpstream, rep.Summary.Procs[0].Name
	for i := range rep.Summary.Nets { // the decoder takes full, half or none
		rep.Summary.Nets[i].Duplex = "half"
	}
	rep.Summary.Path.Idle.MinMS, rep.Summary.Path.Idle.MedianMS = 1, 2 // and times in order
	rep.Summary.Path.Loaded.MinMS, rep.Summary.Path.Loaded.MedianMS = 3, 4
	rep.Samples = nil
	start := rep.Summary.Start
	in, _ := throughTheWire(t, wire.RunSpec{URL: "http://127.0.0.1/", Method: "GET", Connections: 1},
		wire.Run{StartedAt: start, System: FromSystem(&rep, start)})
	back := rebuild.SystemReport(in.Runs[0].System)
	var bad []string
	skip := maps.Clone(summaryNotBack)
	maps.Copy(skip, notBackYet)
	diff(reflect.ValueOf(rep), reflect.ValueOf(*back), "Report", skip, &bad)
	for _, d := range bad {
		t.Error(d)
	}

	// Each flag of the firmware's throttling word alone, so that two
	// flags swapped show even where the filler gave both the same value.
	ft := reflect.TypeFor[machine.ThrottleFlags]()
	for i := range ft.NumField() {
		var one machine.Report
		one.Summary.Throttled = &machine.ThrottleFlags{}
		reflect.ValueOf(one.Summary.Throttled).Elem().Field(i).SetBool(true)
		in, _ := throughTheWire(t, wire.RunSpec{URL: "http://127.0.0.1/", Method: "GET", Connections: 1},
			wire.Run{StartedAt: start, System: FromSystem(&one, start)})
		got := rebuild.SystemReport(in.Runs[0].System).Summary.Throttled
		if got == nil || *got != *one.Summary.Throttled {
			t.Errorf("throttle flag %s alone came back as %+v", ft.Field(i).Name, got)
		}
	}
}

// runNotBack are the figures of a run that do not come back from the
// wire, and why; everything else must.
var runNotBack = map[string]string{
	"LoadResult.Timings":             "ab's -e and -g files are written on the device; the wire carries the histograms",
	"LoadResult.ThreadRates":         "wrk's per-thread Req/Sec samples are printed on the device only",
	"LoadResult.WholeRequestTimeout": "the spec's mode (wrk) says it: the collector's reports do not use it",
	"LoadResult.Target":              "the spec's URL, parsed again: checked apart below",
	"LoadResult.Protocol":            "the spec's protocol or mode: checked apart below",
	"H2Info.Streams":                 "the spec's streams: checked apart below",
}

// TestRunRoundTripByValue: every figure of a run comes back from the wire
// where it was and in its unit, those the device's configuration decides
// (connections, rate, timeouts, ...) through the spec.
func TestRunRoundTripByValue(t *testing.T) {
	var res report.LoadResult
	(&filler{}).fill(reflect.ValueOf(&res).Elem())
	cfg := loadgen.Config{URL: "https://bench.example:8443/p?q=1", Method: "PATCH", Body: make([]byte, 901),
		Connections: 902, Threads: 903, Rate: 904.5, KeepAlive: true, Timeout: 905 * time.Millisecond, Warmup: 906 * time.Millisecond,
		LengthCheck: true, HTTP2: true, Streams: 907}
	res.Method, res.Connections, res.Threads, res.Rate, res.KeepAlive = cfg.Method, cfg.Connections, cfg.Threads, cfg.Rate, cfg.KeepAlive
	res.Timeout, res.Warmup, res.LengthCheck, res.RequestBody = cfg.Timeout, cfg.Warmup, cfg.LengthCheck, int64(len(cfg.Body))
	res.Duration = res.Duration.Truncate(time.Microsecond) // the wire's unit
	in, _ := throughTheWire(t, SpecOf(cfg, 1, time.Second, nil), FromRun(&res, nil))
	back, err := rebuild.LoadResult(&in.Runs[0], in.Spec)
	if err != nil {
		t.Fatal(err)
	}
	skip := maps.Clone(runNotBack)
	for name, why := range notBackYet {
		if strings.HasPrefix(name, "LoadResult.") {
			skip[name] = why
		}
	}
	var bad []string
	diff(reflect.ValueOf(res), reflect.ValueOf(*back), "LoadResult", skip, &bad)
	for _, d := range bad {
		t.Error(d)
	}
	// On the wire already, at their place, though not rebuilt yet.
	if got := in.Runs[0].Loops; got != res.Loops {
		t.Errorf("wire's loops %d, want %d", got, res.Loops)
	}
	if back.Loops == res.Loops {
		t.Error("the collector rebuilds LoadResult.Loops: take it off notBackYet")
	}
	if want, _ := report.ParseTarget(cfg.URL); back.Target != want {
		t.Errorf("target %+v, want %+v", back.Target, want)
	}
	if back.Protocol != "h2" || back.H2 == nil || back.H2.Streams != cfg.Streams {
		t.Errorf("protocol %q, h2 %+v: want h2 with %d streams", back.Protocol, back.H2, cfg.Streams)
	}
}
