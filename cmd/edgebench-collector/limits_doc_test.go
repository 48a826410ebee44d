package main

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/collector/broker"
	"github.com/edgebench/edgebench/collector/metrics"
	"github.com/edgebench/edgebench/collector/store/seriesdb"
	"github.com/edgebench/edgebench/internal/config"
)

const (
	boundsBegin = "<!-- bounds: TestREADMELimits -->\n"
	boundsEnd   = "<!-- end of bounds -->\n"
)

// TestREADMELimits: every default README's security section states is the
// code's: each key of a device's quota (the accounts file's table, which
// must list every key of broker.Quota) against broker.DefaultQuota, and
// each row of the table of bounds against serve's setting it names (the
// default its flag shows, as the settings' table) or, for a fixed bound,
// the constant behind it.
func TestREADMELimits(t *testing.T) {
	readme, i, j := readmeBetween(t, boundsBegin, boundsEnd, "table of bounds")

	q := reflect.ValueOf(broker.DefaultQuota())
	for i := range q.NumField() {
		key, _, _ := strings.Cut(q.Type().Field(i).Tag.Get("yaml"), ",")
		row := readmeRow(readme, "| `"+key+"` |")
		if row == nil {
			t.Errorf("README's quota table has no row for %s", key)
			continue
		}
		got, err := readmeSize(row[1])
		if want := q.Field(i).Int(); err != nil || got != want {
			t.Errorf("README's quota %s: default %q (%v), the code's %d", key, row[1], err, want)
		}
	}

	_, gofs := boundSettings()
	fixed := map[string]string{ // a fixed bound's row, by the start of its text: its default
		"series of one device that /metrics exports": fmt.Sprint(seriesdb.SeriesPerDevice),
		"series /metrics exports in all":             fmt.Sprint(metrics.DefaultMaxSeries),
	}
	rows := 0
	for _, line := range strings.Split(readme[i+len(boundsBegin):j], "\n") {
		cells := tableCells(line)
		if len(cells) != 3 || cells[0] == "bound" || strings.HasPrefix(cells[0], "---") {
			continue
		}
		rows++
		bound, setting, def := cells[0], strings.Trim(cells[1], "`"), strings.Trim(cells[2], "`")
		var want string
		if setting == "–" {
			var ok bool
			for start, v := range fixed {
				if strings.HasPrefix(bound, start) {
					want, ok = v, true
				}
			}
			if !ok {
				t.Errorf("README's bound %q has no setting and no constant this test knows: add it to fixed", bound)
				continue
			}
		} else {
			f := gofs.Lookup(config.FlagName(setting))
			if f == nil {
				t.Errorf("README's bound %q names %q, which is not a setting of serve", bound, setting)
				continue
			}
			if want = f.DefValue; want == "" {
				want = "–"
			}
		}
		if def != want {
			t.Errorf("README's bound %q (%s): default %q, the code's %q", bound, setting, def, want)
		}
	}
	if rows < len(fixed) {
		t.Errorf("README's table of bounds has %d rows, want at least the %d fixed ones", rows, len(fixed))
	}
}

// tableCells are the cells of a Markdown table's line, trimmed; nil for a
// line that is not a table's.
func tableCells(line string) []string {
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") {
		return nil
	}
	cells := strings.Split(strings.Trim(line, "|"), "|")
	for k := range cells {
		cells[k] = strings.TrimSpace(cells[k])
	}
	return cells
}

// readmeRow is the cells of the first line of readme that begins with
// prefix, nil when none does.
func readmeRow(readme, prefix string) []string {
	for _, line := range strings.Split(readme, "\n") {
		if strings.HasPrefix(line, prefix) {
			return tableCells(line)
		}
	}
	return nil
}

// readmeSize is a number as README writes one: 4096, 4,096, 1 KiB,
// 128 MiB.
func readmeSize(s string) (int64, error) {
	unit := int64(1)
	for suffix, u := range map[string]int64{" KiB": 1 << 10, " MiB": 1 << 20, " GiB": 1 << 30} {
		if n, ok := strings.CutSuffix(s, suffix); ok {
			s, unit = n, u
		}
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	return n * unit, err
}
