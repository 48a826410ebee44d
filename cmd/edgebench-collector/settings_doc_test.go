package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/edgebench/edgebench/internal/config"
)

var updateREADME = flag.Bool("update-readme", false, "rewrite README.md's table of serve's settings")

// settingsTable is README's table of serve's settings, made from the
// fields that define them (their keys, variables, flags, defaults and
// help), as the manual page's flags are: each is documented once.
func settingsTable() string {
	keys, gofs := boundSettings()
	var b strings.Builder
	b.WriteString("| key | variable | flag | default | what |\n|---|---|---|---|---|\n")
	for _, k := range keys {
		def := gofs.Lookup(config.FlagName(k.Name)).DefValue
		if def == "" {
			def = "–"
		} else {
			def = "`" + def + "`"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | `--%s` | %s | %s |\n", k.Name, config.EnvName(k.Name), config.FlagName(k.Name), def,
			strings.ReplaceAll(k.Help, "|", "\\|"))
	}
	return b.String()
}

// boundSettings are serve's settings at their defaults, in order, and a
// flag set they are bound to as serve binds them: its flags' DefValue is
// the default each shows.
func boundSettings() ([]config.Key, *flag.FlagSet) {
	d := defaultSettings()
	gofs := flag.NewFlagSet("serve", flag.ContinueOnError)
	config.Bind(gofs, &d)
	return config.Keys(&d), gofs
}

// readmeBetween is README.md and where begin and end stand in it; the
// test stops when they are not there, in that order, around its what.
func readmeBetween(t *testing.T, begin, end, what string) (readme string, i, j int) {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme = string(b)
	i, j = strings.Index(readme, begin), strings.Index(readme, end)
	if i < 0 || j < i {
		t.Fatalf("README.md has no %s between %q and %q", what, begin, end)
	}
	return readme, i, j
}

const (
	tableBegin = "<!-- serve's settings: go test ./cmd/edgebench-collector -run TestREADMESettingsTable -update-readme -->\n"
	tableEnd   = "<!-- end of serve's settings -->\n"
)

// TestREADMESettingsTable: README's table of serve's settings is the one
// the settings' fields make.
func TestREADMESettingsTable(t *testing.T) {
	readme, i, j := readmeBetween(t, tableBegin, tableEnd, "table of serve's settings")
	want := tableBegin + settingsTable() + tableEnd
	if got := readme[i : j+len(tableEnd)]; got != want {
		if *updateREADME {
			if err := os.WriteFile("../../README.md", []byte(readme[:i]+want+readme[j+len(tableEnd):]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("README.md's table of serve's settings is not the settings' own: go test ./cmd/edgebench-collector -run TestREADMESettingsTable -update-readme")
	}
}
