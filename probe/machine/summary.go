package machine

import (
	"strconv"
	"time"
)

// Stat is a figure's time-weighted mean and its maximum over a window.
type Stat struct {
	Mean float64 `json:"mean"`
	Max  float64 `json:"max"`
}

// Summary is the measured window of a recording: mean and max of each
// figure. Figures the machine did not provide are absent.
type Summary struct {
	Start   time.Time `json:"start"`
	End     time.Time `json:"end"`
	Seconds float64   `json:"seconds"`
	Samples int       `json:"samples"`

	CPU             *CPUSummary    `json:"cpu,omitempty"`
	PerCPUBusy      []CoreStat     `json:"per_cpu_busy,omitempty"` // 100 - idle - iowait
	Load1           *Stat          `json:"load1,omitempty"`
	ContextSwitches *Stat          `json:"ctxt_per_s,omitempty"`
	Interrupts      *Stat          `json:"intr_per_s,omitempty"`
	Mem             *MemSummary    `json:"mem,omitempty"`
	Disks           []DiskSummary  `json:"disks,omitempty"`
	Nets            []NetSummary   `json:"nets,omitempty"`
	TCP             *TCPSummary    `json:"tcp,omitempty"`
	Path            *PathSummary   `json:"path,omitempty"` // the round-trip time to a remote target
	PSI             *PSISummary    `json:"psi,omitempty"`
	TempMaxC        *float64       `json:"temp_max_c,omitempty"`
	FreqMinMHz      *float64       `json:"freq_min_mhz,omitempty"` // of the fastest core in each sample
	FreqMaxMHz      *float64       `json:"freq_max_mhz,omitempty"`
	Throttled       *ThrottleFlags `json:"throttled,omitempty"` // seen during the window; nil without get_throttled
	Procs           []ProcSummary  `json:"procs,omitempty"`
}

// CPUSummary is the CPU shares over the window, in percent.
type CPUSummary struct {
	User    Stat `json:"user"`
	Nice    Stat `json:"nice"`
	System  Stat `json:"system"`
	Idle    Stat `json:"idle"`
	IOWait  Stat `json:"iowait"`
	IRQ     Stat `json:"irq"`
	SoftIRQ Stat `json:"softirq"`
	Steal   Stat `json:"steal"`
}

// CoreStat is one core's figure.
type CoreStat struct {
	ID int `json:"id"`
	Stat
}

// MemSummary is memory over the window, in bytes.
type MemSummary struct {
	Total     uint64 `json:"total"`
	Used      Stat   `json:"used"`
	Free      Stat   `json:"free"`
	Available *Stat  `json:"available,omitempty"`
	Cached    *Stat  `json:"cached,omitempty"`
	Buffers   *Stat  `json:"buffers,omitempty"`
	Dirty     *Stat  `json:"dirty,omitempty"`
	SwapUsed  *Stat  `json:"swap_used,omitempty"`
}

// DiskSummary is one block device over the window.
type DiskSummary struct {
	Name      string `json:"name"`
	Partition bool   `json:"partition,omitempty"`
	ReadKBs   Stat   `json:"read_kbs"`
	WriteKBs  Stat   `json:"write_kbs"`
	ReadIOPS  Stat   `json:"read_iops"`
	WriteIOPS Stat   `json:"write_iops"`
	Busy      Stat   `json:"busy"`
}

// NetSummary is one interface over the window.
type NetSummary struct {
	Name  string `json:"name"`
	RxKBs Stat   `json:"rx_kbs"`
	TxKBs Stat   `json:"tx_kbs"`
	RxPps Stat   `json:"rx_pps"`
	TxPps Stat   `json:"tx_pps"`
	// SpeedMbps is the link's speed in Mb/s (sys/class/net/NAME/speed,
	// read once when the interface is first seen); 0: unknown (loopback,
	// virtual links, a link down, no sysfs).
	SpeedMbps int `json:"speed_mbps,omitempty"`
	// Duplex is the link's duplex, "full" or "half" (sys/class/net/NAME/duplex,
	// read with the speed); "": unknown.
	Duplex string `json:"duplex,omitempty"`
	// RxDrops, TxDrops, RxErrs and TxErrs are the packets dropped and in
	// error over the window (/proc/net/dev); nil: not recorded.
	RxDrops *float64 `json:"rx_drops,omitempty"`
	TxDrops *float64 `json:"tx_drops,omitempty"`
	RxErrs  *float64 `json:"rx_errs,omitempty"`
	TxErrs  *float64 `json:"tx_errs,omitempty"`
}

// TCPSummary is the machine's TCP segments over the window, from
// /proc/net/snmp: per second, and the totals sent and retransmitted.
type TCPSummary struct {
	InSegs      Stat    `json:"in_segs_per_s"`
	OutSegs     Stat    `json:"out_segs_per_s"`
	RetransSegs Stat    `json:"retrans_segs_per_s"`
	Out         float64 `json:"out_segs"`
	Retrans     float64 `json:"retrans_segs"`
}

// RetransPct is the segments retransmitted in % of those sent (RetransSegs
// against OutSegs, as nstat and sar show it); false when none were sent.
func (t *TCPSummary) RetransPct() (float64, bool) {
	if t == nil || t.Out <= 0 {
		return 0, false
	}
	return 100 * t.Retrans / t.Out, true
}

// PSISummary is the stall shares over the window, in percent.
type PSISummary struct {
	CPUSome *Stat `json:"cpu_some,omitempty"`
	IOSome  *Stat `json:"io_some,omitempty"`
	IOFull  *Stat `json:"io_full,omitempty"`
	MemSome *Stat `json:"mem_some,omitempty"`
	MemFull *Stat `json:"mem_full,omitempty"`
}

// ProcSummary is one watched process (or name, or tree) over the window.
type ProcSummary struct {
	Name string `json:"name"`
	PID  int    `json:"pid,omitempty"`
	// Role is what the processes are to the load test (RoleServer,
	// RoleUpstream, RoleGenerator); "": watched for themselves, or
	// recorded before roles.
	Role string `json:"role,omitempty"`
	// Of is an upstream's server: the name of the process that hands it
	// its work.
	Of      string   `json:"of,omitempty"`
	Count   int      `json:"count"` // most processes seen at once
	CPU     *Stat    `json:"cpu,omitempty"`
	RSS     *Stat    `json:"rss,omitempty"`
	ReadKB  *float64 `json:"read_kb,omitempty"` // total over the window
	WriteKB *float64 `json:"write_kb,omitempty"`
	// CPUs are the cores the processes may run on (Cpus_allowed_list of
	// /proc/PID/status, their union), of those that used CPU in the
	// window (all of them when none did); nil: unknown.
	CPUs []int `json:"cpus,omitempty"`
}

// Label is the row's name as the System section prints it: the name, the
// PID of a tree or process watched by PID, and an upstream's server,
// "php-fpm8.2 [812] (upstream of nginx)".
func (p *ProcSummary) Label() string {
	name := p.Name
	if name == "" {
		name = "?"
	}
	if p.PID > 0 {
		name += " [" + strconv.Itoa(p.PID) + "]"
	}
	if p.Role == RoleUpstream && p.Of != "" {
		name += " (upstream of " + p.Of + ")"
	}
	return name
}

// PathSummary is the round-trip time from this machine to a load test's
// target on another machine, measured by TCP handshakes to the target's
// address and port (the kernel's RTT of each handshake, TCP_INFO's
// tcpi_rtt): a few before the load (Idle) and a few per second over the
// measured window (Loaded). A queue on the path (a link at its speed, a
// shaper, a busy switch) shows as Loaded growing over Idle.
type PathSummary struct {
	Target string `json:"target"` // address:port
	Idle   *RTT   `json:"idle,omitempty"`
	Loaded *RTT   `json:"loaded,omitempty"`
	// Lost counts the handshakes of the window that did not complete in
	// time, or failed.
	Lost int `json:"lost,omitempty"`
}

// RTT is round-trip times measured by N handshakes, in milliseconds.
type RTT struct {
	N        int     `json:"n"`
	MinMS    float64 `json:"min_ms"`
	MedianMS float64 `json:"median_ms"`
	MaxMS    float64 `json:"max_ms"`
}
