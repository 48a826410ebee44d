package measure

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/collector/rebuild"
	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/probe/machine"
	"github.com/edgebench/edgebench/wire"
)

// notOnTheWire are the fields of the probe's summary that the wire does
// not carry, and why.
var notOnTheWire = map[string]string{
	"Summary.Start": "the run's StartedAt and the sample times place the window",
	"Summary.End":   "Seconds is the window's length",
	"CoreStat.ID":   "cores are sent in order: the index is the id",
}

// TestEverySummaryFieldReachesTheWire sets each figure of the probe's
// summary alone and checks that the wire form of the recording changes:
// a figure added to probe/machine.Summary and forgotten in FromSystem
// fails here.
func TestEverySummaryFieldReachesTheWire(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	n := 0
	eachLeaf(reflect.TypeFor[machine.Summary](), nil, func(path []int, name string) {
		n++
		if _, ok := notOnTheWire[name[strings.LastIndex(name, ">")+1:]]; ok {
			return
		}
		var base, set machine.Report
		build(reflect.ValueOf(&base.Summary).Elem(), path, false)
		build(reflect.ValueOf(&set.Summary).Elem(), path, true)
		if reflect.DeepEqual(FromSystem(&base, start), FromSystem(&set, start)) {
			t.Errorf("%s does not reach the wire: FromSystem leaves it out", name)
		}
	})
	if n < 60 {
		t.Errorf("only %d leaves walked", n)
	}
}

// TestEverySummaryFieldComesBack is the way back: each figure of the
// probe's summary, set alone, changes the summary the collector rebuilds
// from the wire (rebuild.SystemReport) for its reports. A figure added
// to the wire and forgotten in SystemReport fails here.
func TestEverySummaryFieldComesBack(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	eachLeaf(reflect.TypeFor[machine.Summary](), nil, func(path []int, name string) {
		if _, ok := notOnTheWire[name[strings.LastIndex(name, ">")+1:]]; ok {
			return
		}
		var base, set machine.Report
		build(reflect.ValueOf(&base.Summary).Elem(), path, false)
		build(reflect.ValueOf(&set.Summary).Elem(), path, true)
		if reason, ok := notBack(name); ok {
			t.Logf("%s: not rebuilt by the collector yet (%s)", name, reason)
			return
		}
		got, without := rebuild.SystemReport(FromSystem(&set, start)), rebuild.SystemReport(FromSystem(&base, start))
		if reflect.DeepEqual(got.Summary, without.Summary) {
			t.Errorf("%s does not come back from the wire: rebuild.SystemReport leaves it out", name)
		}
	})
}

// eachLeaf calls fn with the path (field indexes, through pointers and
// slices) and the Type.Field name of every leaf of a struct type.
func eachLeaf(t reflect.Type, path []int, fn func(path []int, name string)) {
	for i := range t.NumField() {
		f := t.Field(i)
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		p := append(append([]int(nil), path...), i)
		if ft.Kind() == reflect.Struct && ft != reflect.TypeFor[time.Time]() {
			if f.Anonymous {
				eachLeaf(ft, p, fn)
				continue
			}
			eachLeaf(ft, p, func(sub []int, name string) {
				fn(sub, t.Name()+"."+f.Name+">"+name)
			})
			continue
		}
		fn(p, t.Name()+"."+f.Name)
	}
}

// build allocates what path goes through in v (pointers, a slice of one)
// and, with set, gives the leaf at its end a value that survives the
// wire's units and rounding.
func build(v reflect.Value, path []int, set bool) {
	for len(path) > 0 {
		v = v.Field(path[0])
		path = path[1:]
		for v.Kind() == reflect.Pointer || v.Kind() == reflect.Slice {
			if v.Kind() == reflect.Pointer {
				if v.IsNil() {
					v.Set(reflect.New(v.Type().Elem()))
				}
			} else if v.Len() == 0 {
				v.Set(reflect.MakeSlice(v.Type(), 1, 1))
			}
			if v.Kind() == reflect.Pointer {
				v = v.Elem()
			} else {
				v = v.Index(0)
			}
		}
	}
	if !set {
		return
	}
	switch v.Kind() {
	case reflect.Float64:
		v.SetFloat(12_345_678.9)
	case reflect.Int, reflect.Int64:
		v.SetInt(7)
	case reflect.Uint64:
		v.SetUint(12_345_678)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.String:
		v.SetString("x")
	default:
		panic("build: no value for " + v.Type().String() + " at " + strings.Repeat(".", len(path)))
	}
}

// TestStreamsBoundAgrees: the wire refuses the streams the engine
// refuses, no fewer and no more.
func TestStreamsBoundAgrees(t *testing.T) {
	if wire.MaxStreams != loadgen.MaxStreams {
		t.Errorf("wire.MaxStreams %d, loadgen.MaxStreams %d", wire.MaxStreams, loadgen.MaxStreams)
	}
}

// TestProcRolesOnTheWire: the server's rows reach the wire with their
// roles, an upstream with its server's name, as msgpack bytes the
// decoder accepts; the probe's roles are the wire's words.
func TestProcRolesOnTheWire(t *testing.T) {
	for machineRole, wireRole := range map[string]string{machine.RoleServer: wire.ProcServer, machine.RoleUpstream: wire.ProcUpstream, machine.RoleGenerator: wire.ProcGenerator} {
		if machineRole != wireRole {
			t.Errorf("the probe's role %q is %q on the wire", machineRole, wireRole)
		}
	}
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cpu := func(m float64) *machine.Stat { return &machine.Stat{Mean: m, Max: m} }
	rep := machine.Report{Summary: machine.Summary{Seconds: 4, Samples: 4, Procs: []machine.ProcSummary{
		{Name: "edgebench", PID: 42, Role: machine.RoleGenerator, Count: 1, CPU: cpu(25)},
		{Name: "nginx", PID: 812, Role: machine.RoleServer, Count: 2, CPU: cpu(39)},
		{Name: "php-fpm8.2", PID: 790, Role: machine.RoleUpstream, Of: "nginx", Count: 5, CPU: cpu(131)},
		{Name: "mysqld", PID: 500, Role: machine.RoleUpstream, Of: "php-fpm8.2", Count: 1, CPU: cpu(9)},
	}}}
	in, _ := throughTheWire(t, wire.RunSpec{URL: "http://127.0.0.1/", Method: "GET", Connections: 1},
		wire.Run{StartedAt: start, System: FromSystem(&rep, start)})
	sys := in.Runs[0].System
	for i, p := range sys.Summary.Procs {
		want := rep.Summary.Procs[i]
		of := ""
		if p.Of != nil {
			of = sys.Procs[*p.Of]
		}
		if sys.Procs[p.I] != want.Name || p.Role != want.Role || of != want.Of || p.CPUBP.Mean != int64(want.CPU.Mean*100) {
			t.Errorf("row %d: %s role %q of %q at %d bp, want %s role %q of %q", i, sys.Procs[p.I], p.Role, of, p.CPUBP.Mean, want.Name, want.Role, want.Of)
		}
	}
}
