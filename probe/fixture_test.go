package probe

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/probe/machine"
)

// fixtureSamples samples tree/t0 then tree/t1, dt apart on a fake clock, and
// returns both samples.
func fixtureSamples(t *testing.T, tree string, dt time.Duration, watches ...Watch) (*machine.Sample, *machine.Sample) {
	t.Helper()
	t0 := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	now := t0
	p := New("testdata/" + tree + "/t0")
	t.Cleanup(func() { p.Close() })
	p.now = func() time.Time { return now }
	p.pageSize = 4096
	p.SetWatches(watches)
	s0, err := p.Sample()
	if err != nil {
		t.Fatalf("sample t0: %v", err)
	}
	p.setRoot("testdata/" + tree + "/t1")
	now = t0.Add(dt)
	s1, err := p.Sample()
	if err != nil {
		t.Fatalf("sample t1: %v", err)
	}
	return s0, s1
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

func checkF(t *testing.T, what string, got *float64, want float64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s absent, want %v", what, want)
		return
	}
	if !near(*got, want) {
		t.Errorf("%s = %v, want %v", what, *got, want)
	}
}

func checkU(t *testing.T, what string, got *uint64, want uint64) {
	t.Helper()
	if got == nil {
		t.Errorf("%s absent, want %v", what, want)
		return
	}
	if *got != want {
		t.Errorf("%s = %v, want %v", what, *got, want)
	}
}

func checkCPU(t *testing.T, what string, got machine.CPU, want machine.CPU) {
	t.Helper()
	g := []float64{got.User, got.Nice, got.System, got.Idle, got.IOWait, got.IRQ, got.SoftIRQ, got.Steal}
	w := []float64{want.User, want.Nice, want.System, want.Idle, want.IOWait, want.IRQ, want.SoftIRQ, want.Steal}
	for i := range g {
		if !near(g[i], w[i]) {
			t.Errorf("%s = %+v, want %+v", what, got, want)
			return
		}
	}
}

const kB = 1024

// The Pi 4 fixture's t1 is 2 s after t0. The expected values below are the
// deltas written into the fixture files, worked out by hand.
func TestPi4Fixture(t *testing.T) {
	s0, s := fixtureSamples(t, "pi4", 2*time.Second, Watch{Name: "nginx"}, Watch{PID: 1200})

	// The first sample has no previous snapshot: no rates, but the
	// instantaneous figures are there.
	if s0.CPU != nil || s0.Disks != nil || s0.Nets != nil || s0.ContextSwitches != nil || s0.Procs[0].CPU != nil {
		t.Errorf("first sample has rates: %+v", s0)
	}
	if s0.Mem == nil || s0.Mem.Total != 3884356*kB || s0.Throttle == nil || s0.Throttle.Raw != 0x50000 {
		t.Errorf("first sample lacks instantaneous figures: %+v", s0)
	}
	if s.Seconds != 2 {
		t.Errorf("Seconds = %v, want 2", s.Seconds)
	}

	// 4 cores x 200 ticks: user 200, system 80, idle 400, iowait 40, softirq 80.
	if s.CPU == nil {
		t.Fatal("CPU absent")
	}
	checkCPU(t, "cpu", *s.CPU, machine.CPU{User: 25, System: 10, Idle: 50, IOWait: 5, SoftIRQ: 10})
	if len(s.PerCPU) != 4 {
		t.Fatalf("%d cores, want 4", len(s.PerCPU))
	}
	checkCPU(t, "cpu0", s.PerCPU[0].CPU, machine.CPU{User: 60, System: 10, Idle: 10, SoftIRQ: 20})
	checkCPU(t, "cpu3", s.PerCPU[3].CPU, machine.CPU{User: 10, System: 10, Idle: 60, IOWait: 10, SoftIRQ: 10})
	if s.PerCPU[3].ID != 3 || !near(s.PerCPU[0].Busy(), 90) {
		t.Errorf("cpu3 id %d, cpu0 busy %v", s.PerCPU[3].ID, s.PerCPU[0].Busy())
	}
	checkF(t, "ctxt/s", s.ContextSwitches, 24690.0/2)
	checkF(t, "intr/s", s.Interrupts, 6000.0/2)
	if s.Load == nil || s.Load.Load1 != 1.04 || s.Load.Load15 != 0.63 {
		t.Errorf("load = %+v", s.Load)
	}

	m := s.Mem
	if m.Total != 3884356*kB || m.Free != 2701024*kB {
		t.Errorf("mem total/free = %d/%d", m.Total, m.Free)
	}
	// used = total - free - buffers - cached - SReclaimable
	if want := uint64(3884356-2701024-61532-614496-41980) * kB; m.Used != want {
		t.Errorf("mem used = %d, want %d", m.Used, want)
	}
	checkU(t, "available", m.Available, 3381324*kB)
	checkU(t, "cached", m.Cached, 614496*kB)
	checkU(t, "dirty", m.Dirty, 4364*kB)
	checkU(t, "swap used", m.SwapUsed, (102396-98300)*kB)

	// mmcblk0 and p2: +2048 sectors read, +4096 written, +100 reads, +60
	// writes, +500 ms busy, over 2 s. p1 idle. ram and loop devices never
	// used: absent.
	names := []string{}
	for _, d := range s.Disks {
		names = append(names, d.Name)
	}
	if !slices.Equal(names, []string{"mmcblk0", "mmcblk0p1", "mmcblk0p2"}) {
		t.Fatalf("disks %v", names)
	}
	d := s.Disks[0]
	if d.Partition || d.ReadBps != 2048*512/2 || d.WriteBps != 4096*512/2 || d.ReadIOPS != 50 || d.WriteIOPS != 30 || d.Busy != 25 {
		t.Errorf("mmcblk0 = %+v", d)
	}
	if !s.Disks[1].Partition || !s.Disks[2].Partition || s.Disks[1].ReadBps != 0 || s.Disks[2].WriteBps != d.WriteBps {
		t.Errorf("partitions = %+v", s.Disks[1:])
	}

	want := []machine.Net{{Name: "lo", RxBps: 500000, TxBps: 500000, RxPps: 100, TxPps: 100}, {Name: "eth0", RxBps: 1000000, TxBps: 200000, RxPps: 1500, TxPps: 1000}, {Name: "wlan0", RxBps: 1024, TxBps: 512, RxPps: 2, TxPps: 1}}
	if !slices.Equal(s.Nets, want) {
		t.Errorf("nets = %+v, want %+v", s.Nets, want)
	}

	if len(s.Temps) != 1 || s.Temps[0] != (machine.Temp{Zone: "thermal_zone0", Type: "cpu-thermal", Celsius: 61.855}) {
		t.Errorf("temps = %+v", s.Temps)
	}
	if !slices.Equal(s.FreqMHz, []float64{1000, 1000, 1000, 1000}) || !slices.Equal(s0.FreqMHz, []float64{1500, 1500, 1500, 1500}) {
		t.Errorf("freq = %v then %v", s0.FreqMHz, s.FreqMHz)
	}
	wantT := machine.Throttle{Raw: 0x50005, Now: machine.ThrottleFlags{UnderVoltage: true, Throttled: true}, SinceBoot: machine.ThrottleFlags{UnderVoltage: true, Throttled: true}}
	if s.Throttle == nil || *s.Throttle != wantT {
		t.Errorf("throttle = %+v, want %+v", s.Throttle, wantT)
	}
	if s.PSI != nil {
		t.Errorf("PSI present on a Pi without /proc/pressure: %+v", s.PSI)
	}

	// nginx: master 0 ticks, workers 100 and 50 ticks in 2 s = 75 % of a
	// core; RSS (1200+1500+1400) pages; worker 813 wrote 4096 bytes.
	ng := s.Procs[0]
	if ng.Name != "nginx" || ng.Count != 3 || ng.PID != 0 {
		t.Errorf("nginx = %+v", ng)
	}
	checkF(t, "nginx cpu", ng.CPU, 75)
	checkU(t, "nginx rss", ng.RSS, 4100*4096)
	checkF(t, "nginx write", ng.WriteBps, 2048)
	checkF(t, "nginx read", ng.ReadBps, 0)
	eb := s.Procs[1]
	if eb.Name != "edgebench" || eb.PID != 1200 || eb.Count != 1 {
		t.Errorf("edgebench = %+v", eb)
	}
	checkF(t, "edgebench cpu", eb.CPU, 15)
	checkU(t, "edgebench rss", eb.RSS, 3100*4096)
	if eb.ReadBps != nil || eb.WriteBps != nil {
		t.Errorf("edgebench IO present without /proc/1200/io: %+v", eb)
	}
}

// The amd64 fixture's t1 is 1 s after t0: nvme, PSI, no thermal zone, no Pi
// files, no sys/class/block (partitions told apart by name).
func TestAmd64Fixture(t *testing.T) {
	_, s := fixtureSamples(t, "amd64", time.Second, Watch{Name: "caddy"}, Watch{Name: "nosuchprocess"})
	// 4 cores x 100 ticks: user 100, nice 10, system 40, idle 230, iowait
	// 10, irq 5, softirq 5.
	checkCPU(t, "cpu", *s.CPU, machine.CPU{User: 25, Nice: 2.5, System: 10, Idle: 57.5, IOWait: 2.5, IRQ: 1.25, SoftIRQ: 1.25})
	checkCPU(t, "cpu2", s.PerCPU[2].CPU, machine.CPU{User: 10, Nice: 10, System: 5, Idle: 75})
	checkF(t, "ctxt/s", s.ContextSwitches, 31337)

	if len(s.Disks) != 3 || s.Disks[0].Name != "nvme0n1" || s.Disks[0].Partition || !s.Disks[1].Partition || !s.Disks[2].Partition {
		t.Fatalf("disks = %+v", s.Disks)
	}
	if d := s.Disks[0]; d.ReadBps != 8192*512 || d.WriteBps != 1024*512 || d.ReadIOPS != 250 || d.WriteIOPS != 125 || d.Busy != 12 {
		t.Errorf("nvme0n1 = %+v", d)
	}
	if len(s.Nets) != 2 || s.Nets[1] != (machine.Net{Name: "enp3s0", RxBps: 125000, TxBps: 62500, RxPps: 100, TxPps: 50}) {
		t.Errorf("nets = %+v (docker0 never used: absent)", s.Nets)
	}
	if s.PSI == nil {
		t.Fatal("PSI absent")
	}
	checkF(t, "psi cpu some", s.PSI.CPUSome, 25)
	checkF(t, "psi io some", s.PSI.IOSome, 5)
	checkF(t, "psi io full", s.PSI.IOFull, 2)
	checkF(t, "psi mem some", s.PSI.MemSome, 0) // present and zero, not absent
	checkU(t, "swap total", s.Mem.SwapTotal, 0)

	if s.Temps != nil || s.Throttle != nil {
		t.Errorf("thermal or throttle present on amd64: %+v %+v", s.Temps, s.Throttle)
	}
	if !slices.Equal(s.FreqMHz, []float64{3600, 3500, 3400, 3300}) {
		t.Errorf("freq = %v", s.FreqMHz)
	}
	checkF(t, "caddy cpu", s.Procs[0].CPU, 60)
	checkF(t, "caddy write", s.Procs[0].WriteBps, 65536)
	if np := s.Procs[1]; np.Count != 0 || np.CPU != nil || np.RSS != nil {
		t.Errorf("missing process has figures: %+v", np)
	}

	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"temps"`, `"throttle"`} {
		if strings.Contains(string(b), key) {
			t.Errorf("JSON has absent figure %s: %s", key, b)
		}
	}
	if !strings.Contains(string(b), `"mem_some":0`) {
		t.Errorf("JSON drops a present zero: %s", b)
	}
}

func TestListenerPID(t *testing.T) {
	for _, tc := range []struct {
		tree string
		port int
		want []int
	}{
		{"pi4", 80, []int{812, 813, 814}}, // master and workers share the socket
		{"pi4", 8080, []int{1200}},        // tcp6
		{"amd64", 8080, []int{2301}},      // tcp6, plus an established socket on the same port
		{"pi4", 22, nil},                  // listening, but no inode (another namespace)
		{"pi4", 443, nil},
	} {
		got, err := ListenerPIDs("testdata/"+tc.tree+"/t0", tc.port)
		if tc.want == nil {
			if !errors.Is(err, ErrNoListener) {
				t.Errorf("%s:%d: got %v, %v; want ErrNoListener", tc.tree, tc.port, got, err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s:%d = %v, %v; want %v", tc.tree, tc.port, got, err, tc.want)
		}
		pid, err := ListenerPID("testdata/"+tc.tree+"/t0", tc.port)
		if err != nil || pid != tc.want[0] {
			t.Errorf("ListenerPID %s:%d = %d, %v", tc.tree, tc.port, pid, err)
		}
	}
	if ws := DefaultWatches("testdata/pi4/t0", 80); !slices.Equal(ws, []Watch{{PID: 812, Tree: true, Role: machine.RoleServer, Upstreams: true}}) {
		t.Errorf("DefaultWatches = %+v", ws)
	}
	if _, err := ListenerPID(t.TempDir(), 80); err == nil {
		t.Error("no error without proc/net/tcp")
	}
}

func TestParseWatch(t *testing.T) {
	for in, want := range map[string]Watch{
		"1234": {PID: 1234}, "nginx": {Name: "nginx"}, "0": {Name: "0"}, "-5": {Name: "-5"}, "kangle2": {Name: "kangle2"},
	} {
		if got := ParseWatch(in); got != want {
			t.Errorf("ParseWatch(%q) = %+v, want %+v", in, got, want)
		}
	}
}

func TestParseThrottled(t *testing.T) {
	for in, want := range map[string]machine.Throttle{
		"0\n":     {},
		"50005\n": {Raw: 0x50005, Now: machine.ThrottleFlags{UnderVoltage: true, Throttled: true}, SinceBoot: machine.ThrottleFlags{UnderVoltage: true, Throttled: true}},
		"0x80008": {Raw: 0x80008, Now: machine.ThrottleFlags{SoftTempLimit: true}, SinceBoot: machine.ThrottleFlags{SoftTempLimit: true}},
		"20000":   {Raw: 0x20000, SinceBoot: machine.ThrottleFlags{FreqCapped: true}},
		"e000e\n": {Raw: 0xe000e, Now: machine.ThrottleFlags{FreqCapped: true, Throttled: true, SoftTempLimit: true}, SinceBoot: machine.ThrottleFlags{FreqCapped: true, Throttled: true, SoftTempLimit: true}},
	} {
		got, err := parseThrottled([]byte(in))
		if err != nil || got != want {
			t.Errorf("parseThrottled(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	if _, err := parseThrottled([]byte("throttled")); err == nil {
		t.Error("no error for a non-hex word")
	}
	if got := (machine.ThrottleFlags{UnderVoltage: true, Throttled: true}).String(); got != "under-voltage, throttled" {
		t.Errorf("String = %q", got)
	}
}

func TestParseModel(t *testing.T) {
	if got := parseModel([]byte("Raspberry Pi 4 Model B Rev 1.4\x00")); got != "Raspberry Pi 4 Model B Rev 1.4" {
		t.Errorf("model %q", got)
	}
}

// Malformed input is an error, not a panic or a silently wrong figure.
func TestParsersReject(t *testing.T) {
	var st statSnap
	for _, in := range []string{"", "intr 1 2\n", "cpu0 1 2 3 4\n", "cpu  1 2 x 4 5\n", "cpu 1 2\n", "cpu  1 2 3 4\ncpu  1 2 3 4\n"} {
		if err := parseStat([]byte(in), &st); err == nil {
			t.Errorf("parseStat(%q): no error", in)
		}
	}
	for _, in := range []string{"", "MemFree: 1 kB\n", "MemTotal: x kB\nMemFree: 1 kB\n", "MemTotal: 99999999999999999999 kB\nMemFree: 1 kB\n"} {
		if _, err := parseMeminfo([]byte(in)); err == nil {
			t.Errorf("parseMeminfo(%q): no error", in)
		}
	}
	if err := parseDiskstats([]byte(" 179 0 mmcblk0 1 2 3\n"), func([]byte, diskCounters) {}); err == nil {
		t.Error("parseDiskstats: short line accepted")
	}
	if err := parseNetDev([]byte("eth0: 1 2 3\n"), func([]byte, netCounters) {}); err == nil {
		t.Error("parseNetDev: short line accepted")
	}
	if _, err := parsePressure([]byte("some avg10=0.00\n")); err == nil {
		t.Error("parsePressure: no total accepted")
	}
	if _, err := parsePidStat([]byte("12 (x) S 1 2")); err == nil {
		t.Error("parsePidStat: short line accepted")
	}
	if _, err := parseLoadavg([]byte("0.1 x 0.3 1/2 3")); err == nil {
		t.Error("parseLoadavg: bad value accepted")
	}
}

func TestParsePidStatOddComm(t *testing.T) {
	in := "42 (a) b (c)) R 1 42 42 0 -1 0 0 0 0 0 700 300 0 0 20 0 1 0 99 1000 25 0 0\n"
	ps, err := parsePidStat([]byte(in))
	if err != nil || string(ps.comm) != "a) b (c)" || ps.ticks != 1000 || ps.rssPages != 25 {
		t.Errorf("parsePidStat = %+v (comm %q), %v", ps, ps.comm, err)
	}
}

func TestIsPartitionName(t *testing.T) {
	all := map[string]bool{"sda": true, "sda1": true, "mmcblk0": true, "mmcblk0p2": true, "nvme0n1": true, "nvme0n1p1": true, "md0": true, "dm-0": true}
	has := func(n string) bool { return all[n] }
	for name, want := range map[string]bool{"sda": false, "sda1": true, "mmcblk0": false, "mmcblk0p2": true, "nvme0n1": false, "nvme0n1p1": true, "md0": false, "dm-0": false} {
		if got := isPartitionName(name, has); got != want {
			t.Errorf("isPartitionName(%q) = %v", name, got)
		}
	}
}
