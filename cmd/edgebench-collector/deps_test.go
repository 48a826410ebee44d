package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The collector's binary links neither the load generator's engine nor
// the machine sampler and gopsutil: the wire, the reports and the probe's
// summaries are packages of their own (ARCHITECTURE.md).
func TestLinksNoEngineOrSampler(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "github.com/edgebench/edgebench/loadgen" || p == "github.com/edgebench/edgebench/probe" || strings.Contains(p, "gopsutil") {
			t.Errorf("edgebench-collector links %s", p)
		}
	}
}
