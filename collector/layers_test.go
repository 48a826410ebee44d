package collector

import (
	"os/exec"
	"strings"
	"testing"
)

// layers are the collector's packages by layer (ARCHITECTURE.md, "The
// collector's packages"): a package imports only packages of lower
// layers, never one of its own layer or above. The pure ones first, then
// the broker and the store, which know nothing of each other, the views
// over the store, what serves them, and the wiring. A new package gets a
// place here, or this test fails.
var layers = [][]string{
	{"collector/escape", "collector/stats", "collector/cron", "collector/rebuild", "collector/summary", "collector/store/migrations"}, // pure, alone
	{"collector/group", "collector/figures", "collector/join"},                                                                        // pure, over the above
	{"collector/store/sqldb"}, // the store's engines, under its tables
	{"collector/store/scheduledb", "collector/store/seriesdb", "collector/store/retention"}, // the store's tables by concern
	{"collector/broker", "collector/store", "collector/show"},                               // the parts
	{"collector/compare", "collector/series"},                                               // views over the store
	{"collector/schedules", "collector/alerts", "collector/metrics", "collector/web"},
	{"collector"},        // the wiring
	{"collector/client"}, // its web API's client, for the command line and tests
}

// testOnly are packages for tests: no package imports them outside a
// _test.go file.
var testOnly = []string{"collector/store/storetest"}

// TestImportLayers checks the rule of who imports whom among the
// collector's packages, on their imports without tests.
func TestImportLayers(t *testing.T) {
	const mod = "github.com/edgebench/edgebench/"
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	layer := map[string]int{}
	for i, l := range layers {
		for _, p := range l {
			layer[p] = i
		}
	}
	isTestOnly := func(p string) bool {
		for _, q := range testOnly {
			if p == q {
				return true
			}
		}
		return false
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(f[0], mod)
		if isTestOnly(pkg) {
			continue
		}
		from, ok := layer[pkg]
		if !ok {
			t.Errorf("%s has no layer: give it one in layers (and in ARCHITECTURE.md)", pkg)
			continue
		}
		seen++
		for _, imp := range f[1:] {
			dep, ours := strings.CutPrefix(imp, mod)
			if !ours || (dep != "collector" && !strings.HasPrefix(dep, "collector/")) {
				continue
			}
			switch to, known := layer[dep]; {
			case isTestOnly(dep):
				t.Errorf("%s imports %s, which is for tests only", pkg, dep)
			case !known:
				t.Errorf("%s imports %s, which has no layer", pkg, dep)
			case to >= from:
				t.Errorf("%s (layer %d) imports %s (layer %d): a package imports only packages of lower layers", pkg, from, dep, to)
			}
		}
	}
	if seen != len(layer) {
		t.Errorf("go list found %d of the %d packages of layers", seen, len(layer))
	}
}
