package main

import (
	"flag"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "write the manual pages and completions into docs/ ('make docs')")

// TestDocsAreCurrent: the manual pages and shell completions committed in
// docs/ are what the flags make now ('make docs' writes them).
func TestDocsAreCurrent(t *testing.T) {
	if *updateDocs {
		if err := program().WriteDocs("../../docs"); err != nil {
			t.Fatal(err)
		}
	}
	if stale := program().StaleDocs("../../docs"); len(stale) > 0 {
		t.Errorf("docs/ is out of date: %v: run 'make docs' and commit", stale)
	}
}
