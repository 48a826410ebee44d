package probe

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/edgebench/edgebench/loadgen/report"
	"github.com/edgebench/edgebench/probe/machine"
	"github.com/edgebench/edgebench/verdict"
)

// The Pi 3 fixture (testdata/pi3/README.md): its USB Ethernet at
// 100 Mb/s, full duplex, sending 94.1 Mb/s on the wire, with the drops,
// TCP segments and retransmissions the kernel counted in the second.
func TestPi3Fixture(t *testing.T) {
	_, s := fixtureSamples(t, "pi3", time.Second, Watch{Name: "nginx"})
	var eth *machine.Net
	for i := range s.Nets {
		if s.Nets[i].Name == "eth0" {
			eth = &s.Nets[i]
		}
		if s.Nets[i].Name == "wlan0" {
			t.Errorf("wlan0 moved no packet and is listed: %+v", s.Nets[i])
		}
	}
	if eth == nil {
		t.Fatalf("no eth0 in %+v", s.Nets)
	}
	want := machine.Net{Name: "eth0", RxBps: 262000, TxBps: 11575300, RxPps: 3900, TxPps: 7800, RxDrops: 2}
	if *eth != want {
		t.Errorf("eth0 = %+v, want %+v", *eth, want)
	}
	if s.TCP == nil || *s.TCP != (machine.TCP{InSegs: 3900, OutSegs: 7800, RetransSegs: 78}) {
		t.Errorf("tcp = %+v", s.TCP)
	}
	if s.CPU == nil || !near(s.CPU.SoftIRQ, 20) || !near(s.CPU.Idle, 52.5) || len(s.PerCPU) != 4 || !near(s.PerCPU[0].SoftIRQ, 70) {
		t.Errorf("cpu = %+v, per core %+v", s.CPU, s.PerCPU)
	}
	if len(s.Procs) != 1 || s.Procs[0].CPU == nil || !near(*s.Procs[0].CPU, 52) {
		t.Errorf("nginx = %+v", s.Procs)
	}
}

// The link's speed and duplex reach the machine section: "eth0 (100
// Mb/s)", its drops, and the TCP line with the share retransmitted.
func TestPi3FixtureReport(t *testing.T) {
	rep := fixtureReport(t, "pi3", time.Second, Watch{Name: "nginx"})
	var eth *machine.NetSummary
	for i := range rep.Summary.Nets {
		if n := &rep.Summary.Nets[i]; n.Name == "eth0" {
			eth = n
		}
	}
	if eth == nil || eth.SpeedMbps != 100 || eth.Duplex != "full" || eth.RxDrops == nil || *eth.RxDrops != 2 ||
		eth.TxDrops == nil || *eth.TxDrops != 0 || eth.RxErrs == nil || *eth.RxErrs != 0 {
		t.Errorf("eth0 = %+v", eth)
	}
	tcp := rep.Summary.TCP
	if tcp == nil || tcp.Out != 7800 || tcp.Retrans != 78 || tcp.OutSegs.Mean != 7800 || tcp.InSegs.Mean != 3900 {
		t.Fatalf("tcp = %+v", tcp)
	}
	if pct, ok := tcp.RetransPct(); !ok || pct != 1 {
		t.Errorf("retransmitted %v %% (%v), want 1", pct, ok)
	}
	// Over 2 s, the same counts are halved rates: the window's totals
	// stay the packets and segments counted.
	rep2 := fixtureReport(t, "pi3", 2*time.Second, Watch{Name: "nginx"})
	for _, n := range rep2.Summary.Nets {
		if n.Name == "eth0" && (n.RxDrops == nil || *n.RxDrops != 2 || n.RxPps.Mean != 1950) {
			t.Errorf("eth0 over 2 s: %+v drops %v", n, n.RxDrops)
		}
	}
	if t2 := rep2.Summary.TCP; t2 == nil || t2.Out != 7800 || t2.Retrans != 78 || t2.OutSegs.Mean != 3900 {
		t.Errorf("tcp over 2 s: %+v", t2)
	}
	var buf bytes.Buffer
	if err := rep.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	for _, want := range []string{"eth0 (100 Mb/s)", "retransmitted 78 of 7800 segments sent (1.00 %)"} {
		if !strings.Contains(text, want) {
			t.Errorf("machine section without %q:\n%s", want, text)
		}
	}
	// The verdict weighs the link: nginx is far from its cores, eth0
	// sends at 94 % of its speed.
	l := &report.LoadResult{Connections: 10, Threads: 1, Duration: time.Second, Completed: 1000, OK: 1000, Latency: report.NewLatencyHistogram(),
		Target: report.Target{URL: "http://192.168.2.13/big", Host: "192.168.2.13", Port: 80, Path: "/big"}}
	for range 1000 {
		l.Latency.Record(9000)
	}
	v := verdict.Judge(verdict.Input{Load: l, System: rep})
	if v.LimitedBy != verdict.Network || v.Reasons[0] != "eth0 sent 94.1 Mb/s of its 100 Mb/s link (94 %)" {
		t.Errorf("verdict %s %q", v.LimitedBy, v.Reasons)
	}
}

func TestSystemInfoPi3(t *testing.T) {
	in, err := SystemInfo("testdata/pi3/t0")
	if err != nil {
		t.Fatal(err)
	}
	want := Info{Board: "Raspberry Pi 3 Model B Rev 1.2", CPUModel: "Cortex-A53", Cores: 4, MemoryBytes: 948304 * 1024,
		OS: "Debian GNU/Linux 12 (bookworm)", Kernel: "6.6.31+rpt-rpi-v7", GoArch: runtime.GOARCH, Hostname: "pi3-lab-02",
		BootID: "7c2e4a91-5d3b-4e8f-a1c6-0b9d8e7f6a52", Governor: "ondemand", MaxFreqMHz: 1200}
	if *in != want {
		t.Errorf("pi3 info\n got %+v\nwant %+v", *in, want)
	}
}

func TestParseSNMP(t *testing.T) {
	good := "Ip: A B\nIp: 1 2\nTcp: MaxConn InSegs OutSegs RetransSegs\nTcp: -1 10 20 3\nUdp: X\nUdp: 1\n"
	c, err := parseSNMP([]byte(good))
	if err != nil || c != (tcpCounters{inSegs: 10, outSegs: 20, retransSegs: 3}) {
		t.Errorf("%+v %v", c, err)
	}
	for _, bad := range []string{
		"", "Ip: A\nIp: 1\n", "Tcp: InSegs OutSegs RetransSegs\n", "Tcp: InSegs OutSegs RetransSegs\nUdp: 1 2 3\n",
		"Tcp: InSegs OutSegs RetransSegs\nTcp: 1 2\n", "Tcp: InSegs OutSegs\nTcp: 1 2\n", "Tcp: InSegs OutSegs RetransSegs\nTcp: 1 2 -3\n",
	} {
		if _, err := parseSNMP([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, ok := tcpRates(&tcpCounters{outSegs: 5}, &tcpCounters{outSegs: 4}, 1); ok {
		t.Error("a counter going back gave rates")
	}
}
