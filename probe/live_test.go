package probe

import (
	"math"
	"os"
	"testing"
	"time"
)

func selfPID() int { return os.Getpid() }

// TestLiveSample checks the probe against the machine running the test.
func TestLiveSample(t *testing.T) {
	if testing.Short() {
		t.Skip("live process figures: not in -short (the 32-bit pass runs under qemu-user, whose /proc is the emulator's)")
	}
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc")
	}
	p := New("")
	defer p.Close()
	p.SetWatches([]Watch{{PID: os.Getpid()}})
	if _, err := p.Sample(); err != nil {
		t.Fatalf("first sample: %v", err)
	}
	deadline := time.Now().Add(200 * time.Millisecond)
	for time.Now().Before(deadline) { // burn some CPU so the watch has ticks
	}
	s, err := p.Sample()
	if err != nil {
		t.Fatalf("sample: %v", err)
	}
	if s.CPU == nil {
		t.Fatal("no CPU shares")
	}
	c := s.CPU
	if sum := c.User + c.Nice + c.System + c.Idle + c.IOWait + c.IRQ + c.SoftIRQ + c.Steal; math.Abs(sum-100) > 0.01 {
		t.Errorf("CPU shares sum to %v", sum)
	}
	if len(s.PerCPU) == 0 {
		t.Error("no per-core shares")
	}
	if s.Mem == nil || s.Mem.Total == 0 || s.Mem.Used > s.Mem.Total || s.Mem.Free > s.Mem.Total {
		t.Errorf("mem = %+v", s.Mem)
	}
	if s.Load == nil || s.ContextSwitches == nil || *s.ContextSwitches <= 0 {
		t.Errorf("load %v, ctxt %v", s.Load, s.ContextSwitches)
	}
	self := s.Procs[0]
	if self.Count != 1 || self.CPU == nil || *self.CPU <= 0 || self.RSS == nil || *self.RSS < 1<<20 {
		t.Errorf("self = %+v", self)
	}
	for _, d := range s.Disks {
		if d.Busy < 0 || d.Busy > 100 || d.ReadBps < 0 {
			t.Errorf("disk %+v", d)
		}
	}
}
