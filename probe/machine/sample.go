package machine

import "time"

// Sample is the machine over one interval: the rates between the previous
// snapshot and this one, and instantaneous figures at its end. Absent
// figures are nil or empty and left out of JSON. The first sample of a Probe
// has no previous snapshot and carries only the instantaneous figures.
type Sample struct {
	Time    time.Time `json:"time"`
	Seconds float64   `json:"seconds,omitempty"` // since the previous snapshot

	CPU             *CPU      `json:"cpu,omitempty"`
	PerCPU          []CoreCPU `json:"per_cpu,omitempty"`
	Load            *Load     `json:"load,omitempty"`
	ContextSwitches *float64  `json:"ctxt_per_s,omitempty"`
	Interrupts      *float64  `json:"intr_per_s,omitempty"`
	Running         *uint64   `json:"procs_running,omitempty"`
	Blocked         *uint64   `json:"procs_blocked,omitempty"`
	Mem             *Memory   `json:"mem,omitempty"`
	Disks           []Disk    `json:"disks,omitempty"`
	Nets            []Net     `json:"nets,omitempty"`
	TCP             *TCP      `json:"tcp,omitempty"`
	PSI             *PSI      `json:"psi,omitempty"`
	Temps           []Temp    `json:"temps,omitempty"`
	FreqMHz         []float64 `json:"freq_mhz,omitempty"` // per CPU with cpufreq, in CPU order
	Throttle        *Throttle `json:"throttle,omitempty"`
	Procs           []Proc    `json:"procs,omitempty"`
}

// CPU is the share of CPU time in each state over an interval, in percent
// (they sum to 100).
type CPU struct {
	User    float64 `json:"user"`
	Nice    float64 `json:"nice"`
	System  float64 `json:"system"`
	Idle    float64 `json:"idle"`
	IOWait  float64 `json:"iowait"`
	IRQ     float64 `json:"irq"`
	SoftIRQ float64 `json:"softirq"`
	Steal   float64 `json:"steal"`
}

// Busy is 100 minus idle and iowait.
func (c CPU) Busy() float64 { return max(0, 100-c.Idle-c.IOWait) }

// CoreCPU is one core's CPU shares.
type CoreCPU struct {
	ID int `json:"id"`
	CPU
}

// Load is /proc/loadavg's three averages.
type Load struct {
	Load1  float64 `json:"1m"`
	Load5  float64 `json:"5m"`
	Load15 float64 `json:"15m"`
}

// Memory is /proc/meminfo in bytes. Used is total - free - buffers - cached
// - SReclaimable (free(1) of procps 3.3).
type Memory struct {
	Total     uint64  `json:"total"`
	Used      uint64  `json:"used"`
	Free      uint64  `json:"free"`
	Available *uint64 `json:"available,omitempty"`
	Buffers   *uint64 `json:"buffers,omitempty"`
	Cached    *uint64 `json:"cached,omitempty"`
	Dirty     *uint64 `json:"dirty,omitempty"`
	SwapTotal *uint64 `json:"swap_total,omitempty"`
	SwapUsed  *uint64 `json:"swap_used,omitempty"`
}

// Disk is one block device from /proc/diskstats over an interval. Partition
// tells mmcblk0p2 from mmcblk0: totals should add whole disks only.
type Disk struct {
	Name      string  `json:"name"`
	Partition bool    `json:"partition,omitempty"`
	ReadBps   float64 `json:"read_bps"`
	WriteBps  float64 `json:"write_bps"`
	ReadIOPS  float64 `json:"read_iops"`
	WriteIOPS float64 `json:"write_iops"`
	Busy      float64 `json:"busy"` // % of the interval with I/O in flight
}

// Net is one interface from /proc/net/dev over an interval: bytes and
// packets per second, and packets per second dropped and in error.
type Net struct {
	Name    string  `json:"name"`
	RxBps   float64 `json:"rx_bps"`
	TxBps   float64 `json:"tx_bps"`
	RxPps   float64 `json:"rx_pps"`
	TxPps   float64 `json:"tx_pps"`
	RxDrops float64 `json:"rx_drops_per_s"`
	TxDrops float64 `json:"tx_drops_per_s"`
	RxErrs  float64 `json:"rx_errs_per_s"`
	TxErrs  float64 `json:"tx_errs_per_s"`
}

// TCP is the machine's TCP segments per second over an interval, from
// /proc/net/snmp (the network namespace the probe runs in): received,
// sent (retransmissions excluded, as the kernel counts OutSegs) and
// retransmitted.
type TCP struct {
	InSegs      float64 `json:"in_segs_per_s"`
	OutSegs     float64 `json:"out_segs_per_s"`
	RetransSegs float64 `json:"retrans_segs_per_s"`
}

// PSI is the share of the interval in which some (or all) non-idle tasks
// were stalled on a resource, in percent, from the cumulative totals in
// /proc/pressure. Kernels without PSI (or booted without psi=1, as Raspberry
// Pi OS is) have none.
type PSI struct {
	CPUSome *float64 `json:"cpu_some,omitempty"`
	IOSome  *float64 `json:"io_some,omitempty"`
	IOFull  *float64 `json:"io_full,omitempty"`
	MemSome *float64 `json:"mem_some,omitempty"`
	MemFull *float64 `json:"mem_full,omitempty"`
}

// Temp is one thermal zone.
type Temp struct {
	Zone    string  `json:"zone"` // thermal_zone0
	Type    string  `json:"type,omitempty"`
	Celsius float64 `json:"c"`
}

// Throttle is the Raspberry Pi firmware's get_throttled word, decoded.
type Throttle struct {
	Raw       uint32        `json:"raw"`
	Now       ThrottleFlags `json:"now"`
	SinceBoot ThrottleFlags `json:"since_boot"`
}

// ThrottleFlags are the four conditions get_throttled reports.
type ThrottleFlags struct {
	UnderVoltage  bool `json:"under_voltage,omitempty"`
	FreqCapped    bool `json:"freq_capped,omitempty"`
	Throttled     bool `json:"throttled,omitempty"`
	SoftTempLimit bool `json:"soft_temp_limit,omitempty"`
}

// Any reports whether any flag is set.
func (f ThrottleFlags) Any() bool {
	return f.UnderVoltage || f.FreqCapped || f.Throttled || f.SoftTempLimit
}

// Or returns the flags set in f or g.
func (f ThrottleFlags) Or(g ThrottleFlags) ThrottleFlags {
	return ThrottleFlags{f.UnderVoltage || g.UnderVoltage, f.FreqCapped || g.FreqCapped,
		f.Throttled || g.Throttled, f.SoftTempLimit || g.SoftTempLimit}
}

// String lists the set flags ("under-voltage, throttled"), or "none".
func (f ThrottleFlags) String() string {
	s := ""
	add := func(on bool, name string) {
		if on {
			if s != "" {
				s += ", "
			}
			s += name
		}
	}
	add(f.UnderVoltage, "under-voltage")
	add(f.FreqCapped, "frequency capped")
	add(f.Throttled, "throttled")
	add(f.SoftTempLimit, "soft temperature limit")
	if s == "" {
		return "none"
	}
	return s
}

// The low bits of the Raspberry Pi firmware's get_throttled word (vcgencmd
// get_throttled), the state now; the same bits shifted by 16 say "has
// happened since boot".
const (
	throttleUnderVoltage  = 1 << 0
	throttleFreqCapped    = 1 << 1
	throttleThrottled     = 1 << 2
	throttleSoftTempLimit = 1 << 3
)

// ThrottleFlagsOf unpacks the low bits of a get_throttled word.
func ThrottleFlagsOf(v uint32) ThrottleFlags {
	return ThrottleFlags{
		UnderVoltage:  v&throttleUnderVoltage != 0,
		FreqCapped:    v&throttleFreqCapped != 0,
		Throttled:     v&throttleThrottled != 0,
		SoftTempLimit: v&throttleSoftTempLimit != 0,
	}
}

// Word packs f into the low bits of a get_throttled word, as
// ThrottleFlagsOf unpacks them.
func (f ThrottleFlags) Word() uint32 {
	var w uint32
	for i, set := range []bool{f.UnderVoltage, f.FreqCapped, f.Throttled, f.SoftTempLimit} {
		if set {
			w |= 1 << i
		}
	}
	return w
}

// What a watched process is to a load test: Proc.Role, ProcSummary.Role.
// A process watched for itself (edgebench probe --watch) has none.
const (
	// RoleServer is the server: what listens on the target's port (with
	// its workers), and the processes --watch names in a load test.
	RoleServer = "server"
	// RoleUpstream is a process the server hands its work to, found from
	// the server's connected sockets (php-fpm behind nginx, a proxied
	// local backend): the server's work too.
	RoleUpstream = "upstream"
	// RoleGenerator is the load test's own process, edgebench.
	RoleGenerator = "generator"
)

// Proc is a watched process, or the processes of a watched name or tree
// summed.
type Proc struct {
	Name     string   `json:"name"`
	PID      int      `json:"pid,omitempty"` // set when watched by PID (a tree's root)
	Role     string   `json:"role,omitempty"`
	Of       string   `json:"of,omitempty"`  // an upstream's: the name of the server that hands it work
	Count    int      `json:"count"`         // processes found
	CPU      *float64 `json:"cpu,omitempty"` // % of one core (200 = two cores busy)
	RSS      *uint64  `json:"rss,omitempty"` // bytes
	ReadBps  *float64 `json:"read_bps,omitempty"`
	WriteBps *float64 `json:"write_bps,omitempty"`
	// CPUs are the cores the processes that used CPU over the interval
	// may run on (all the processes' when none did): the union of their
	// Cpus_allowed_list, read once per process; nil: unknown.
	CPUs []int `json:"cpus,omitempty"`
}
