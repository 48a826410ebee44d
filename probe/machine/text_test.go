package machine

import (
	"bytes"
	"testing"

	"github.com/edgebench/edgebench/internal/golden"
)

func pf(v float64) *float64 { return &v }
func ps(m, x float64) *Stat { return &Stat{Mean: m, Max: x} }

// fullReport is a recording of a busy Pi 4 with every figure present.
func fullReport() *Report {
	s := Summary{
		Seconds: 30, Samples: 30,
		CPU: &CPUSummary{User: Stat{41, 43.99}, Nice: Stat{0.1, 0.1}, System: Stat{33.5, 35.99}, Idle: Stat{12.5, 17.1},
			IOWait: Stat{0.3, 0.3}, IRQ: Stat{0.05, 0.09}, SoftIRQ: Stat{13.5, 14.99}, Steal: Stat{0, 0}},
		PerCPUBusy: []CoreStat{{ID: 0, Stat: Stat{95, 98.99}}, {ID: 1, Stat: Stat{94.5, 98.99}}},
		Load1:      ps(3.98, 4.19), ContextSwitches: ps(63_400, 65_990), Interrupts: ps(24_000, 24_990),
		Mem: &MemSummary{Total: 3_884_000 << 10, Used: Stat{414_000 << 10, 415_990 << 10}, Free: Stat{2_902_000 << 10, 2_903_990 << 10},
			Available: ps(3_380_000<<10, 3_380_000<<10), Buffers: ps(48_000<<10, 48_000<<10), Cached: ps(620_050<<10, 620_099<<10),
			Dirty: ps(100<<10, 199<<10), SwapUsed: ps(0, 0)},
		Disks: []DiskSummary{{Name: "mmcblk0", WriteKBs: Stat{60, 119}, WriteIOPS: Stat{6, 11}, Busy: Stat{0.45, 0.89}},
			{Name: "mmcblk0p2", Partition: true, WriteKBs: Stat{60, 119}}},
		Nets: []NetSummary{{Name: "lo", RxKBs: Stat{97_500, 98_999}, TxKBs: Stat{97_500, 98_999}, RxPps: Stat{27_750, 27_999}, TxPps: Stat{27_750, 27_999}},
			{Name: "eth0", RxKBs: Stat{120, 130}, TxKBs: Stat{5_600, 6_000}, RxPps: Stat{1_900, 2_000}, TxPps: Stat{3_900, 4_100},
				SpeedMbps: 100, Duplex: "half", RxDrops: new(3.0), TxDrops: new(0.0), RxErrs: new(1.0), TxErrs: new(0.0)}},
		TCP: &TCPSummary{InSegs: Stat{1_900, 2_000}, OutSegs: Stat{3_900, 4_100}, RetransSegs: Stat{39, 80}, Out: 117_000, Retrans: 1_170},
		Path: &PathSummary{Target: "192.168.2.13:80", Idle: &RTT{N: 5, MinMS: 0.281, MedianMS: 0.312, MaxMS: 0.9},
			Loaded: &RTT{N: 120, MinMS: 4.5, MedianMS: 48.25, MaxMS: 312.4}, Lost: 2},
		PSI:      &PSISummary{CPUSome: ps(12, 15), IOSome: ps(0.3, 0.6), MemSome: ps(0, 0)},
		TempMaxC: pf(65.1), FreqMinMHz: pf(1500), FreqMaxMHz: pf(1800),
		Throttled: &ThrottleFlags{UnderVoltage: true},
		Procs: []ProcSummary{{Name: "nginx", Count: 5, CPU: ps(190, 199.99), RSS: ps(21_400<<10, 21_400<<10), ReadKB: pf(0), WriteKB: pf(40)},
			{Name: "edgebench", PID: 812, Count: 1, CPU: ps(150, 159.99), RSS: ps(18_200<<10, 18_200<<10)}},
	}
	return &Report{Interval: 1, Summary: s, Warnings: []string{"the board reported under-voltage during the measured window"}}
}

// TestWriteTextGolden pins the System section: every figure of a full
// recording, and a bare one whose absent figures print as "-". go test
// -run WriteTextGolden -update rewrites the files after a wanted change.
func TestWriteTextGolden(t *testing.T) {
	for name, r := range map[string]*Report{
		"system-full.txt.golden":  fullReport(),
		"system-bare.txt.golden":  {Interval: 1, Summary: Summary{Seconds: 10, Samples: 10}},
		"system-short.txt.golden": {Interval: 1, Summary: Summary{Seconds: 0.05}},
	} {
		var got bytes.Buffer
		if err := r.WriteText(&got); err != nil {
			t.Fatal(err)
		}
		golden.Check(t, name, got.Bytes())
	}
}

// TestSamplingLine: a 0.3 s window has one sample of 0.3 s, not "1
// samples of 1 s"; a window that is not a whole number of intervals
// says the interval.
func TestSamplingLine(t *testing.T) {
	for _, tc := range []struct {
		n       int
		seconds float64
		want    string
	}{
		{1, 0.3, "System (0.3 s measured, 1 sample of 0.3 s):"},
		{1, 1, "System (1.0 s measured, 1 sample of 1 s):"},
		{3, 2.5, "System (2.5 s measured, 3 samples at a 1 s interval):"},
		{10, 10, "System (10.0 s measured, 10 samples of 1 s):"},
	} {
		r := &Report{Interval: 1, Summary: Summary{Seconds: tc.seconds, Samples: tc.n}}
		var b bytes.Buffer
		if err := r.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if got, _, _ := bytes.Cut(b.Bytes(), []byte("\n")); string(got) != tc.want {
			t.Errorf("%d samples over %v s: %q, want %q", tc.n, tc.seconds, got, tc.want)
		}
	}
}
