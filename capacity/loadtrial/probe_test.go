package loadtrial

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/edgebench/edgebench/capacity"
	"github.com/edgebench/edgebench/internal/testenv"
	"github.com/edgebench/edgebench/loadgen"
	"github.com/edgebench/edgebench/measure"
)

// A trial records the machine even when no server is named to watch:
// the verdict's generator rule needs the cores' figures (a generator
// starved on its pinned cores reads as an idle one without them), and
// the probe watches edgebench itself and what listens on the target's
// port. Without the probe a starved generator's trial passed as the
// server's capacity.
func TestTrialRecordsTheMachineWithoutWatches(t *testing.T) {
	var got measure.Run
	r := Runner{
		Load:     loadgen.Config{URL: testenv.Target(t, "") + "/", Connections: 2, Threads: 1, Timeout: 2 * time.Second},
		Measured: func(_ capacity.Trial, run measure.Run) { got = run },
	}
	if _, err := r.Run(context.Background(), capacity.Trial{Rate: 100, Duration: time.Second, Warmup: 200 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if got.System == nil || len(got.System.Summary.PerCPUBusy) == 0 {
		t.Fatalf("the trial recorded no machine figures: %+v", got.System)
	}
	self := false
	for _, p := range got.System.Summary.Procs {
		self = self || p.PID == os.Getpid()
	}
	if !self {
		t.Errorf("the probe did not watch edgebench (pid %d): %+v", os.Getpid(), got.System.Summary.Procs)
	}
}
