package verdict

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/probe/machine"
)

// checkTable: a table's precedences are unique and its rows in their
// order, every row named and tested, and the last limit of a table always
// applies (limits only).
func checkTable[J any](t *testing.T, what string, rows []rule[J]) {
	t.Helper()
	seen := map[int]string{}
	names := map[string]bool{}
	for i, r := range rows {
		if other, ok := seen[r.precedence]; ok {
			t.Errorf("%s: %q and %q share precedence %d", what, other, r.name, r.precedence)
		}
		seen[r.precedence] = r.name
		if i > 0 && rows[i-1].precedence >= r.precedence {
			t.Errorf("%s: %q (%d) after %q (%d)", what, r.name, r.precedence, rows[i-1].name, rows[i-1].precedence)
		}
		if r.name == "" || r.test == nil || names[r.name] {
			t.Errorf("%s: row %d %+v: a name of its own and a test", what, i, r)
		}
		names[r.name] = true
	}
}

// TestRuleTables: each table's rows by a unique precedence; the
// generator's rows first (GeneratorBound is theirs, and a run they name
// is the generator's whatever else applies); a two-machine run's table
// takes the loader's rows (generator, errors, rate) and every
// invalidation from the one-machine table, at their precedence, before
// its own.
func TestRuleTables(t *testing.T) {
	checkTable(t, "limits", limits)
	checkTable(t, "invalidations", invalidations)
	checkTable(t, "twoLimits", twoLimits)
	checkTable(t, "twoInvalidations", twoInvalidations)
	for i, r := range limits {
		if gen := r.resource == Generator; i > 0 && gen && limits[i-1].resource != Generator {
			t.Errorf("generator row %q after %q", r.name, limits[i-1].name)
		}
		if r.resource == "" {
			t.Errorf("limit %q names no resource", r.name)
		}
	}
	for _, r := range invalidations {
		if r.resource != "" {
			t.Errorf("invalidation %q names a limit, %s", r.name, r.resource)
		}
	}
	var fromOne []string
	for _, r := range limits {
		if r.resource == Generator || r.resource == Errors || r.resource == Rate {
			fromOne = append(fromOne, r.name)
		}
	}
	for i, name := range fromOne {
		if twoLimits[i].name != name || twoLimits[i].precedence != limits[i].precedence {
			t.Errorf("two machines' row %d: %q (%d), want the loader's %q (%d)", i, twoLimits[i].name, twoLimits[i].precedence, name, limits[i].precedence)
		}
	}
	for i, r := range invalidations {
		if twoInvalidations[i].name != r.name {
			t.Errorf("two machines' invalidation %d: %q, want the loader's %q", i, twoInvalidations[i].name, r.name)
		}
	}
	// The last limit always applies: a verdict always has a reason.
	bare := &report.LoadResult{Latency: report.NewLatencyHistogram()}
	j := Default.judge(Input{Load: bare})
	if why := limits[len(limits)-1].test(Default, &j); why == "" {
		t.Errorf("the last limit, %q, does not apply to a bare run", limits[len(limits)-1].name)
	}
	jt := Default.judgeTwo(TwoInput{Loader: Input{Load: bare}, Target: &machine.Report{}})
	if why := twoLimits[len(twoLimits)-1].test(Default, &jt); why == "" {
		t.Errorf("the two machines' last limit, %q, does not apply to a bare run", twoLimits[len(twoLimits)-1].name)
	}
}

// readmeRules are the rows of README's table of verdicts: name and
// whether they make the run not valid, in their order.
func readmeRules(t *testing.T) (names []string, invalid map[string]bool) {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n| limit or invalidation | rule | makes the run NOT VALID |\n")
	if i < 0 {
		t.Fatal("README.md: no table of verdicts")
	}
	invalid = map[string]bool{}
	for _, line := range strings.Split(text[i+1:], "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(line, "|")
		name, valid := strings.TrimSpace(cells[1]), strings.TrimSpace(cells[len(cells)-2])
		names = append(names, name)
		invalid[name] = strings.HasPrefix(valid, "yes")
	}
	return names, invalid
}

// invalidates reports whether the row name makes a run not valid by the
// invalidations: one of them is the row, or its kind ("generator" of
// "generator, its threads").
func invalidates(name string) bool {
	for _, r := range invalidations {
		if name == r.name || strings.HasPrefix(name, r.name+", ") {
			return true
		}
	}
	return false
}

// TestREADMEListsTheRules: README's table of verdicts has a row of each
// rule, and a rule of each row, by name; the limits in their precedence;
// and it says a row makes the run not valid when an invalidation does.
func TestREADMEListsTheRules(t *testing.T) {
	names, invalid := readmeRules(t)
	var order []string
	for _, name := range names {
		i := slices.IndexFunc(limits, func(r oneRule) bool { return r.name == name })
		switch {
		case i >= 0:
			order = append(order, name)
		case !slices.ContainsFunc(invalidations, func(r oneRule) bool { return r.name == name }):
			t.Errorf("README's row %q: no rule of that name", name)
		}
		if invalid[name] != invalidates(name) {
			t.Errorf("README's row %q says NOT VALID %v, the invalidations %v", name, invalid[name], invalidates(name))
		}
	}
	var want []string
	for _, r := range limits {
		want = append(want, r.name)
	}
	if !slices.Equal(order, want) {
		t.Errorf("README's limits, in its order:\n%q\nthe table's, by precedence:\n%q", order, want)
	}
	for _, r := range invalidations {
		if !slices.ContainsFunc(names, func(n string) bool { return n == r.name || strings.HasPrefix(n, r.name+", ") }) {
			t.Errorf("invalidation %q: no row of README names it", r.name)
		}
	}
}

// ruleCases are, by the name of a row of limits, a run it names the
// limit of (limit); by the name of an invalidation, a run whose figure it
// says does not stand (invalid).
func ruleCases() (limit, invalid map[string]Input) {
	open := func(rate float64, n, us int64) *report.LoadResult {
		l := load(n, us)
		l.Rate = rate
		return l
	}
	waited := open(100, 230, 900_000)
	waited.Waiting = report.NewLatencyHistogram()
	for range 230 {
		waited.Waiting.Record(400_000)
	}
	errs := load(10000, 500)
	errs.Errors.Status, errs.OK = 200, errs.OK-200
	disk := sys(40, 30, 30)
	disk.Summary.Disks = []machine.DiskSummary{{Name: "mmcblk0p2", Partition: true, Busy: stat(99)}, {Name: "mmcblk0", Busy: stat(93)}}
	memory := sys(60, 50, 40)
	memory.Summary.PSI = &machine.PSISummary{MemSome: pstat(30)}
	steal := sys(97, 60, 60)
	steal.Summary.CPU.Steal = stat(20)
	oneCore := sys(55, 0, 40)
	oneCore.Summary.Procs = oneCore.Summary.Procs[1:]
	oneCore.Summary.PerCPUBusy[0].Mean, oneCore.Summary.PerCPUBusy[1].Mean = 99, 11
	taken := pinned(70, 60, 30, 0)
	taken.Summary.PerCPUBusy[0].Mean, taken.Summary.PerCPUBusy[1].Mean = 95, 40
	backlog := load(5000, 2000)
	backlog.Target, _ = report.ParseTarget("http://127.0.0.1/")
	backlog.Connect = report.NewLatencyHistogram()
	for i := range 5000 {
		backlog.Connect.Record(map[bool]int64{true: 1_030_000, false: 300}[i < 50])
	}
	flowing := &report.LoadResult{Connections: 1, Threads: 1, Duration: 4e9, Bytes: 80 << 20,
		Latency: report.NewLatencyHistogram(), Drained: report.Drained{Requests: 1, Cut: 1}}
	throttled := sys(40, 30, 20)
	throttled.Summary.Throttled = &machine.ThrottleFlags{UnderVoltage: true}
	limit = map[string]Input{
		"generator, its threads":    {Load: load(50000, 300), System: sys(99, 60, 190), GeneratorPID: 42},
		"generator, open loop":      {Load: open(100000, 500000, 300), System: sys(99, 60, 170), GeneratorPID: 42},
		"generator, starved":        {Load: load(50000, 300), System: sys(99, 60, 45), GeneratorPID: 42, GeneratorCPUs: []int{1}},
		"generator, shared cores":   {Load: open(1000, 10000, 300), System: sys(97, 3, 5), GeneratorPID: 42},
		"errors":                    {Load: errs, System: sys(50, 40, 30), GeneratorPID: 42},
		"rate":                      {Load: open(100, 1000, 300), System: sys(10, 5, 5), GeneratorPID: 42},
		"server, all cores":         {Load: load(50000, 300), System: sys(99, 185, 10), GeneratorPID: 42},
		"server, whole cores":       {Load: load(50000, 300), System: sys(96, 99, 80), GeneratorPID: 42},
		"server, its cores":         {Load: load(50000, 300), System: taken, GeneratorPID: 42},
		"network":                   {Load: remote(50000), System: linkSys(11575300, 7800), GeneratorPID: 42},
		"disk":                      {Load: load(5000, 300), System: disk, GeneratorPID: 42},
		"memory":                    {Load: load(5000, 300), System: memory, GeneratorPID: 42},
		"cpu, steal":                {Load: load(5000, 300), System: steal, GeneratorPID: 42},
		"cpu, saturated":            {Load: load(50000, 300), System: sys(98, 120, 60), GeneratorPID: 42},
		"cpu, one core":             {Load: load(50000, 300), System: oneCore, GeneratorPID: 42},
		"network, the path":         {Load: flatLoad(steady(), 120_000), System: laptop(20, 30, 0.3, 45), GeneratorPID: 42},
		"cpu, close to saturated":   {Load: load(50000, 300), System: sys(85, 60, 40), GeneratorPID: 42},
		"server, listen backlog":    {Load: backlog, System: sys(40, 30, 20), GeneratorPID: 42},
		"server, no response":       {Load: flowing},
		"connections, open loop":    {Load: waited, System: sys(10, 5, 5), GeneratorPID: 42},
		"server, machine not seen":  {Load: load(5000, 300)},
		"connections":               {Load: load(50000, 300), System: sys(79, 30, 30), GeneratorPID: 42},
		"server, nothing saturated": {Load: open(100, 230, 300), System: sys(10, 5, 5), GeneratorPID: 42},
	}
	invalid = map[string]Input{
		"other processes":        {Load: load(50000, 300), System: sys(100, 29, 26), GeneratorPID: 42},
		"throttling":             {Load: load(5000, 300), System: throttled, GeneratorPID: 42},
		"generator":              limit["generator, its threads"],
		"rate":                   limit["connections, open loop"],
		"errors":                 limit["errors"],
		"server, listen backlog": limit["server, listen backlog"],
		"server, no response":    limit["server, no response"],
		"too few requests":       {Load: load(40, 300)},
	}
	return limit, invalid
}

// onItsOwn is r on its run in cases: the run, its figures, the row's
// reason and the verdict; false when cases has none.
func onItsOwn(t *testing.T, kind string, r oneRule, cases map[string]Input) (in Input, j judgement, why string, v Verdict, ok bool) {
	t.Helper()
	if in, ok = cases[r.name]; !ok {
		t.Errorf("%s %q: no run of its own in ruleCases", kind, r.name)
		return in, j, "", v, false
	}
	j = Default.judge(in)
	return in, j, r.test(Default, &j), Judge(in), true
}

// TestEachRuleOnItsOwn: each row of the table, on a run of its own, names
// the limit (a limit) or says the figure does not stand (an
// invalidation), and the verdict, its JSON and its text lines say what
// the row says: its resource, and its reason first, whole.
func TestEachRuleOnItsOwn(t *testing.T) {
	limitCases, invalidCases := ruleCases()
	for _, r := range limits {
		in, j, why, v, ok := onItsOwn(t, "limit", r, limitCases)
		if !ok {
			continue
		}
		if why == "" || v.LimitedBy != r.resource || v.Reasons[0] != why {
			t.Errorf("limit %q: %s %q, the row says %s %q", r.name, v.LimitedBy, v.Reasons, r.resource, why)
			continue
		}
		var doc struct {
			LimitedBy string   `json:"limited_by"`
			Reasons   []string `json:"reasons"`
		}
		b, _ := json.Marshal(v)
		if err := json.Unmarshal(b, &doc); err != nil || doc.LimitedBy != r.resource || len(doc.Reasons) == 0 || doc.Reasons[0] != why {
			t.Errorf("limit %q: JSON %s", r.name, b)
		}
		// Its other reasons are the invalidations', in their order, each
		// once.
		want := []string{why}
		for _, inv := range invalidations {
			if r := inv.test(Default, &j); r != "" && r != why {
				want = append(want, r)
			}
		}
		if !slices.Equal(v.Reasons, want) || len(slices.Compact(slices.Sorted(slices.Values(v.Reasons)))) != len(v.Reasons) {
			t.Errorf("limit %q: reasons %q, the rows say %q", r.name, v.Reasons, want)
		}
		if text := strings.Join(TextLines(&v, in.Load), "\n"); !strings.Contains(text, "limited by "+r.resource+": "+why) {
			t.Errorf("limit %q: text %q", r.name, text)
		}
		if gb, gwhy := GeneratorBound(in); gb != (r.resource == Generator) || gb && gwhy != why {
			t.Errorf("limit %q: GeneratorBound %v %q", r.name, gb, gwhy)
		}
	}
	for _, r := range invalidations {
		_, _, why, v, ok := onItsOwn(t, "invalidation", r, invalidCases)
		if ok && (why == "" || v.Valid || !slices.Contains(v.Reasons, why)) {
			t.Errorf("invalidation %q: valid=%v %q, the row says %q", r.name, v.Valid, v.Reasons, why)
		}
	}
	for name := range limitCases {
		if !slices.ContainsFunc(limits, func(r oneRule) bool { return r.name == name }) {
			t.Errorf("ruleCases: %q is no limit", name)
		}
	}
	for name := range invalidCases {
		if !slices.ContainsFunc(invalidations, func(r oneRule) bool { return r.name == name }) {
			t.Errorf("ruleCases: %q is no invalidation", name)
		}
	}
}

// TestWhereRulesMeet: runs to which two rows apply, the one of the lower
// precedence naming the limit.
func TestWhereRulesMeet(t *testing.T) {
	row := func(name string) oneRule {
		i := slices.IndexFunc(limits, func(r oneRule) bool { return r.name == name })
		if i < 0 {
			t.Fatalf("no limit %q", name)
		}
		return limits[i]
	}
	behind := load(500000, 300)
	behind.Rate = 100000
	failing := load(10000, 300)
	failing.Rate, failing.Errors.Status, failing.OK = 1000, 200, failing.OK-200
	busyDisk := linkSys(11575300, 7800)
	busyDisk.Summary.Disks = []machine.DiskSummary{{Name: "sda", Busy: stat(90)}}
	for _, c := range []struct {
		first, second string
		in            Input
	}{
		// Pinned to a busy core, and behind its schedule while busy: the
		// schedule's reason.
		{"generator, open loop", "generator, starved", Input{Load: behind, System: sys(99, 60, 80), GeneratorPID: 42, GeneratorCPUs: []int{1}}},
		{"generator, its threads", "errors", Input{Load: func() *report.LoadResult {
			l := load(50000, 300)
			l.Errors.Status, l.OK = 2000, l.OK-2000
			return l
		}(), System: sys(99, 60, 190), GeneratorPID: 42}},
		{"errors", "rate", Input{Load: failing, System: sys(10, 5, 5), GeneratorPID: 42}},
		{"network", "disk", Input{Load: remote(50000), System: busyDisk, GeneratorPID: 42}},
		{"cpu, close to saturated", "connections", Input{Load: load(50000, 300), System: sys(85, 60, 40), GeneratorPID: 42}},
	} {
		first, second := row(c.first), row(c.second)
		if first.precedence >= second.precedence {
			t.Errorf("%q does not come before %q", c.first, c.second)
		}
		j := Default.judge(c.in)
		a, b := first.test(Default, &j), second.test(Default, &j)
		if v := Judge(c.in); a == "" || b == "" || v.LimitedBy != first.resource || v.Reasons[0] != a {
			t.Errorf("%s over %s: the rows say %q and %q, the verdict %s %q", c.first, c.second, a, b, v.LimitedBy, v.Reasons)
		}
	}
}
