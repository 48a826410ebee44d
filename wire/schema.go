package wire

import "time"

// This file is the wire schema: every message edgebench sends over MQTT.
// Payloads are msgpack maps with short keys; decoders skip keys they do
// not know, so a field may be added without a version bump. V is bumped
// only for a change old readers cannot survive, and decoders reject a
// version other than SchemaVersion. The json tags give the same data
// descriptive names for exports and for the size comparison in the tests.
//
// Units: durations in the names' unit (MS, US), shares of CPU time in
// basis points (0.01 %, 10000 = 100 %), memory in KiB, disk and network
// rates in KiB/s, temperatures in 0.1 °C. A figure the device could not
// read is nil (pointers) or empty, never a zero.

//go:generate go tool msgp -file schema.go -o schema_gen.go -io=false

// Element limits applied while decoding (on top of the payload size cap
// and the shape check in decode.go). Fields with their own limit=N tag
// override them.
//msgp:limit arrays:1024 maps:256
//msgp:newtime
//msgp:timezone utc

// SchemaVersion is the value of V in every message this package writes.
const SchemaVersion = 1

// StatusState is a device's presence on its status topic.
type StatusState string

// The states of Status: a birth says online, the Last Will says lost, and
// a clean shutdown publishes offline.
const (
	StatusOnline  StatusState = "online"
	StatusLost    StatusState = "lost"
	StatusOffline StatusState = "offline"
)

// Status is the retained message on <prefix>/<fleet>/<device>/status. The
// birth of connection ConnSeq and the Last Will set for that connection
// carry the same BootID and ConnSeq, so a collector can tell a stale will
// (older ConnSeq) from the birth of the connection that replaced it.
type Status struct {
	V       int         `msg:"v" json:"v"`
	State   StatusState `msg:"s" json:"state"`
	BootID  string      `msg:"b,omitempty" json:"boot_id,omitempty"`
	ConnSeq uint64      `msg:"c" json:"conn_seq"`
	At      time.Time   `msg:"t,omitempty" json:"at,omitzero"` // zero in the will: the broker sends it later
	Info    *DeviceInfo `msg:"i,omitempty" json:"info,omitempty"`
}

// DeviceInfo is what a device says about itself in its birth.
type DeviceInfo struct {
	AgentVersion string            `msg:"av,omitempty" json:"agent_version,omitempty"`
	Hostname     string            `msg:"h,omitempty" json:"hostname,omitempty"`
	Board        string            `msg:"bd,omitempty" json:"board,omitempty"` // /proc/device-tree/model
	CPUModel     string            `msg:"cm,omitempty" json:"cpu_model,omitempty"`
	Cores        int               `msg:"nc,omitempty" json:"cores,omitempty"`
	MemKB        int64             `msg:"mk,omitempty" json:"mem_kb,omitempty"`
	OS           string            `msg:"os,omitempty" json:"os,omitempty"`
	Kernel       string            `msg:"k,omitempty" json:"kernel,omitempty"`
	Arch         string            `msg:"a,omitempty" json:"arch,omitempty"`
	GoArch       string            `msg:"ga,omitempty" json:"goarch,omitempty"`
	Governor     string            `msg:"g,omitempty" json:"cpu_governor,omitempty"`
	MaxFreqMHz   int               `msg:"mf,omitempty" json:"cpu_max_mhz,omitempty"`
	Labels       map[string]string `msg:"l,omitempty,limit=64" json:"labels,omitempty"`
	// Addrs are the device's own IP addresses (loopback and link-local
	// ones left out), so that a fleet can list its boards: an allowlist
	// for the loaders of two-machine runs. DecodeStatus checks that each
	// is an address.
	Addrs []string `msg:"ad,omitempty,limit=16" json:"addrs,omitempty"`
}

// Heartbeat is the small live sample on <prefix>/<fleet>/<device>/heartbeat
// (QoS 0, not retained).
type Heartbeat struct {
	V         int       `msg:"v" json:"v"`
	At        time.Time `msg:"t" json:"at"`
	Busy      bool      `msg:"bz,omitempty" json:"busy,omitempty"`
	CommandID string    `msg:"cid,omitempty" json:"cmd_id,omitempty"` // the command running, if any
	UptimeS   int64     `msg:"up,omitempty" json:"uptime_s,omitempty"`
	Spooled   int       `msg:"sp,omitempty" json:"spooled,omitempty"`  // results waiting for an ack
	Rejected  int64     `msg:"rj,omitempty" json:"rejected,omitempty"` // results set aside since the agent started: refused by the collector, or unsendable
	CPUBusy   *int32    `msg:"cpu,omitempty" json:"cpu_busy_bp,omitempty"`
	Load1     *int32    `msg:"ld,omitempty" json:"load1_x100,omitempty"`
	MemUsedKB *int64    `msg:"mu,omitempty" json:"mem_used_kb,omitempty"`
	MemAvail  *int64    `msg:"ma,omitempty" json:"mem_avail_kb,omitempty"`
	TempDC    *int32    `msg:"tc,omitempty" json:"temp_dc,omitempty"` // hottest zone
	FreqMHz   *int32    `msg:"fq,omitempty" json:"freq_mhz,omitempty"`
	Throttled *uint32   `msg:"th,omitempty" json:"throttled,omitempty"` // Pi get_throttled word
}

// CommandKind says what a command asks for; its spec is in the matching
// field of CommandSpec.
type CommandKind string

// The kinds of Command.
const (
	KindLoadTest CommandKind = "loadtest"
	KindServe    CommandKind = "serve"
	KindProbe    CommandKind = "probe"
	KindCancel   CommandKind = "cancel"
	KindInfo     CommandKind = "info"
	// KindCapacity searches the highest open-loop rate that meets an SLO
	// (edgebench capacity); its result carries Result.Capacity.
	KindCapacity CommandKind = "capacity"
	// KindMark marks an edge of a load's measured window in a running
	// watch (a probe command on the target of a two-machine run): the
	// collector relays the loader's window events to the target with it.
	KindMark CommandKind = "mark"
)

// Command is a request to a device, on its cmd topic or the fleet's _all
// cmd topic. A device ignores ids it has already seen and commands past
// ExpiresAt. Sig, when present, signs SigningBytes.
type Command struct {
	V         int         `msg:"v" json:"v"`
	ID        string      `msg:"id" json:"id"` // ULID
	IssuedAt  time.Time   `msg:"ia" json:"issued_at"`
	ExpiresAt time.Time   `msg:"ea" json:"expires_at"`
	Kind      CommandKind `msg:"k" json:"kind"`
	Select    []Label     `msg:"sel,omitempty,limit=32" json:"select,omitempty"` // on _all: run only where every label matches
	Spec      CommandSpec `msg:"sp" json:"spec"`
	Sig       []byte      `msg:"sig,omitempty,limit=512" json:"sig,omitempty"`
}

// CommandSpec holds the parameters of a command: the field named by the
// command's kind is set; info has none.
type CommandSpec struct {
	LoadTest *LoadTestSpec `msg:"lt,omitempty" json:"loadtest,omitempty"`
	Serve    *ServeSpec    `msg:"sv,omitempty" json:"serve,omitempty"`
	Probe    *ProbeSpec    `msg:"pr,omitempty" json:"probe,omitempty"`
	Cancel   *CancelSpec   `msg:"cn,omitempty" json:"cancel,omitempty"`
	Capacity *CapacitySpec `msg:"cp,omitempty" json:"capacity,omitempty"`
	Mark     *MarkSpec     `msg:"mk,omitempty" json:"mark,omitempty"`
}

// CapacitySpec mirrors the flags of edgebench capacity: the load test of
// every trial (its rate, duration, warm-up and repeat are the search's)
// and the search. Zero fields take the command's defaults; the agent's
// policy caps MaxRate and the trials' total time.
type CapacitySpec struct {
	Load      LoadTestSpec `msg:"lt" json:"load"`
	SLO       string       `msg:"slo" json:"slo"` // "p99<50ms,errors<0.1%"
	StartRate float64      `msg:"sr,omitempty" json:"start_rate,omitempty"`
	MaxRate   float64      `msg:"mr,omitempty" json:"max_rate,omitempty"`
	Tolerance float64      `msg:"tol,omitempty" json:"tolerance,omitempty"` // 0.05 for 5 %
	TrialMS   int64        `msg:"tr,omitempty" json:"trial_ms,omitempty"`
	FinalMS   int64        `msg:"fi,omitempty" json:"final_ms,omitempty"`
	BudgetMS  int64        `msg:"bu,omitempty" json:"budget_ms,omitempty"`
}

// Label is one key=value pair. Commands carry labels and headers as lists,
// not maps, so that their encoding is canonical and can be signed.
type Label struct {
	K string `msg:"k" json:"k"`
	V string `msg:"v" json:"v"`
}

// Header is one HTTP request header.
type Header struct {
	Name  string `msg:"n" json:"name"`
	Value string `msg:"v" json:"value"`
}

// LoadTestSpec mirrors the flags of edgebench run.
type LoadTestSpec struct {
	URL         string   `msg:"u" json:"url"`
	Method      string   `msg:"m,omitempty" json:"method,omitempty"`
	Headers     []Header `msg:"h,omitempty,limit=64" json:"headers,omitempty"`
	Body        []byte   `msg:"b,omitempty,limit=196608" json:"body,omitempty"`
	Connections int      `msg:"c,omitempty" json:"connections,omitempty"`
	Threads     int      `msg:"t,omitempty" json:"threads,omitempty"`
	Requests    int64    `msg:"n,omitempty" json:"requests,omitempty"`
	DurationMS  int64    `msg:"d,omitempty" json:"duration_ms,omitempty"`
	Rate        float64  `msg:"r,omitempty" json:"rate,omitempty"`
	KeepAlive   bool     `msg:"k" json:"keepalive"`
	TimeoutMS   int64    `msg:"to,omitempty" json:"timeout_ms,omitempty"`
	WarmupMS    int64    `msg:"w,omitempty" json:"warmup_ms,omitempty"`
	LengthCheck bool     `msg:"lc,omitempty" json:"length_check,omitempty"` // count ab's Length failures
	Repeat      int      `msg:"rp,omitempty" json:"repeat,omitempty"`
	Labels      []Label  `msg:"l,omitempty,limit=64" json:"labels,omitempty"`
	Watch       []string `msg:"wa,omitempty,limit=32" json:"watch,omitempty"`
	Queue       bool     `msg:"q,omitempty" json:"queue,omitempty"` // queue behind a running test instead of rejecting
	TLS         *TLSSpec `msg:"tls,omitempty" json:"tls,omitempty"`
	// HTTP2 speaks HTTP/2 (over TLS for an https URL, h2c for http),
	// Streams requests at once per connection.
	HTTP2   bool `msg:"h2,omitempty" json:"http2,omitempty"`
	Streams int  `msg:"ms,omitempty" json:"streams,omitempty"`
	// RepeatAuto is --repeat auto: at least 3 runs, more while the
	// relative standard deviation of req/s is above RepeatRSDPct (0:
	// 3.5), at most Repeat runs (0: 10) and within RepeatBudgetMS (0: no
	// budget but the runs').
	RepeatAuto     bool    `msg:"rpa,omitempty" json:"repeat_auto,omitempty"`
	RepeatRSDPct   float64 `msg:"rpr,omitempty" json:"repeat_rsd_pct,omitempty"`
	RepeatBudgetMS int64   `msg:"rpb,omitempty" json:"repeat_budget_ms,omitempty"`
}

// TLSSpec is how a load test of an https URL speaks TLS. It carries the
// CAs that sign the server's certificate, never a key: DecodeCommand
// refuses a bundle that holds anything but certificates (CheckCACerts),
// or more than MaxCABundle bytes.
type TLSSpec struct {
	CACerts  []byte `msg:"ca,omitempty,limit=65536" json:"ca_certs,omitempty"` // PEM certificates; the limit is MaxCABundle
	Insecure bool   `msg:"ik,omitempty" json:"insecure,omitempty"`             // do not verify the certificate
	NoResume bool   `msg:"nr,omitempty" json:"no_resume,omitempty"`            // a full handshake for each connection
	Version  string `msg:"v,omitempty" json:"version,omitempty"`               // "1.2" or "1.3"; "" either
}

// ServeSpec asks the device to serve the built-in target for a while.
type ServeSpec struct {
	Addr       string `msg:"a,omitempty" json:"addr,omitempty"`
	Dir        string `msg:"d,omitempty" json:"dir,omitempty"`
	DurationMS int64  `msg:"du,omitempty" json:"duration_ms,omitempty"`
}

// ProbeSpec asks for a recording of the machine alone, without load: on
// the target of a two-machine run, the watch that covers another device's
// load. With URL set (the load's), the server watched is what listens on
// that URL's port on this device, unless Watch names it; the recording
// ends after DurationMS, or at a mark with edge done. Each window that
// marks open and close (MarkSpec) becomes one Run of the result.
type ProbeSpec struct {
	IntervalMS int64    `msg:"i,omitempty" json:"interval_ms,omitempty"`
	DurationMS int64    `msg:"d,omitempty" json:"duration_ms,omitempty"`
	Watch      []string `msg:"wa,omitempty,limit=32" json:"watch,omitempty"`
	URL        string   `msg:"u,omitempty" json:"url,omitempty"`
}

// The edges of MarkSpec.
const (
	MarkStart = "start" // the load's measured window starts
	MarkEnd   = "end"   // it ends
	MarkDone  = "done"  // the load is over: the watch ends now, succeeded
)

// MarkSpec marks an edge of the load's measured window Run (its
// repetition or capacity trial, from 0, as the loader's running events
// number them: Event.Window) in the running watch
// CommandID.
type MarkSpec struct {
	CommandID string `msg:"c" json:"cmd_id"`
	Run       int    `msg:"n,omitempty" json:"run"`
	Edge      string `msg:"e" json:"edge"` // start, end, done
}

// CancelSpec names the command to cancel.
type CancelSpec struct {
	CommandID string `msg:"c" json:"cmd_id"`
}

// EventState is a state of a command on the device; see ValidTransition.
type EventState string

// The states of Event.
const (
	StateAccepted  EventState = "accepted"
	StateRejected  EventState = "rejected"
	StateRunning   EventState = "running"
	StateSucceeded EventState = "succeeded"
	StateFailed    EventState = "failed"
	StateCancelled EventState = "cancelled"
	StateTimedOut  EventState = "timed_out"
)

// Event is a command's state change on <prefix>/<fleet>/<device>/event.
// Seq counts a command's events from 1, so a collector can order them and
// spot gaps; the report of a run that a crash cut short is SeqInterrupted.
type Event struct {
	V         int        `msg:"v" json:"v"`
	CommandID string     `msg:"c" json:"cmd_id"`
	Seq       uint32     `msg:"n" json:"seq"`
	State     EventState `msg:"s" json:"state"`
	Reason    string     `msg:"r,omitempty" json:"reason,omitempty"`
	Progress  *Progress  `msg:"p,omitempty" json:"progress,omitempty"`
	ResultID  string     `msg:"rid,omitempty" json:"result_id,omitempty"`
	At        time.Time  `msg:"t" json:"at"`
	// Window is an edge of a load's measured window (a running event).
	Window *WindowEdge `msg:"wn,omitempty" json:"window,omitempty"`
}

// SeqInterrupted is the Seq of the event a restarted device sends for the
// run its crash cut short: it cannot know how many events the run sent
// before, so it takes the last number, which no other event reaches and
// which sorts after them all.
const SeqInterrupted uint32 = 1<<32 - 1

// Progress is how far a running test has got.
type Progress struct {
	ElapsedMS int64   `msg:"e" json:"elapsed_ms"`
	Completed int64   `msg:"n" json:"completed"`
	RPS       float64 `msg:"r" json:"rps"`
	Errors    int64   `msg:"x,omitempty" json:"errors,omitempty"`
}

// WindowEdge, on a load's running event, says that the measured window
// of its run Run (from 0: the repetition, or the capacity trial N-1)
// started (Edge "start", MarkStart) or ended ("end", MarkEnd) at the
// event's time: the collector relays it to the target's watch as a mark.
type WindowEdge struct {
	Edge string `msg:"e" json:"edge"`
	Run  int    `msg:"n,omitempty" json:"run"`
}

// Ack is the collector's receipt for a result, on the device's ack topic,
// sent once its store has committed the result. Only then does the device
// delete the result from its spool. An ack with Rejected set says the
// collector refuses the result for good (it does not decode, or it is not
// the sender's): the device moves it out of the spool, to rejected/, and
// never sends it again. A device that predates Rejected deletes it.
type Ack struct {
	V        int    `msg:"v" json:"v"`
	ResultID string `msg:"id" json:"result_id"`
	Rejected string `msg:"rj,omitempty" json:"rejected,omitempty"` // why, when the result is refused for good
}

// Result is one finished command on <prefix>/<fleet>/<device>/result: the
// load test (or probe recording) with what the machine did meanwhile.
// With --repeat it holds one Run per repetition and their spread.
type Result struct {
	V           int               `msg:"v" json:"v"`
	ID          string            `msg:"id" json:"id"` // ULID; the collector's idempotency key
	CommandID   string            `msg:"cid,omitempty" json:"cmd_id,omitempty"`
	Fleet       string            `msg:"f" json:"fleet"`
	Device      string            `msg:"d" json:"device"`
	BootID      string            `msg:"b,omitempty" json:"boot_id,omitempty"`
	CreatedAt   time.Time         `msg:"ca" json:"created_at"`
	Kind        CommandKind       `msg:"k,omitempty" json:"kind,omitempty"`            // loadtest unless said
	Outcome     EventState        `msg:"o" json:"outcome"`                             // succeeded, failed, cancelled, timed_out
	Reason      string            `msg:"r,omitempty" json:"reason,omitempty"`          // why it failed
	Labels      map[string]string `msg:"l,omitempty,limit=64" json:"labels,omitempty"` // run labels (server=nginx ...)
	Spec        RunSpec           `msg:"sp" json:"spec"`
	Fingerprint Fingerprint       `msg:"fp" json:"fingerprint"`
	Runs        []Run             `msg:"rs,limit=1000" json:"runs"`
	Repeat      *Repeat           `msg:"rp,omitempty" json:"repeat,omitempty"`
	Warnings    []string          `msg:"w,omitempty,limit=64" json:"warnings,omitempty"`
	// Capacity is a capacity search's answer and trials (kind capacity);
	// its final trial is Runs[0].
	Capacity *Capacity `msg:"cap,omitempty" json:"capacity,omitempty"`
}

// Capacity is the answer of a capacity search: the highest rate found to
// meet the SLO, and every trial.
type Capacity struct {
	SLO           string          `msg:"slo" json:"slo"`
	CapacityRPS   float64         `msg:"c" json:"capacity_rps"`
	AtLeast       bool            `msg:"al,omitempty" json:"at_least,omitempty"` // a lower bound: the generator or the rate cap ran out first
	LimitedBy     string          `msg:"lb" json:"limited_by"`                   // slo, generator, rate_cap, budget, none
	Confirmed     bool            `msg:"cf,omitempty" json:"confirmed,omitempty"`
	NonMonotonic  bool            `msg:"nm,omitempty" json:"non_monotonic,omitempty"`
	UpperBoundRPS float64         `msg:"ub,omitempty" json:"upper_bound_rps,omitempty"`
	Tolerance     float64         `msg:"tol" json:"tolerance"`
	Answer        string          `msg:"an" json:"answer"`
	Trials        []CapacityTrial `msg:"ts,limit=200" json:"trials"`
}

// CapacityTrial is one trial of a capacity search.
type CapacityTrial struct {
	Kind        string   `msg:"k" json:"kind"` // ramp, bisect, recheck, final
	OfferedRPS  float64  `msg:"o" json:"offered_rps"`
	AchievedRPS float64  `msg:"a" json:"achieved_rps"`
	WarmupMS    int64    `msg:"w,omitempty" json:"warmup_ms,omitempty"`
	DurationMS  int64    `msg:"d" json:"duration_ms"`
	Requests    int64    `msg:"n" json:"requests"`
	Errors      int64    `msg:"e,omitempty" json:"errors,omitempty"`
	Timeouts    int64    `msg:"to,omitempty" json:"timeouts,omitempty"`
	P50US       int64    `msg:"p50" json:"p50_us"`
	P90US       int64    `msg:"p90" json:"p90_us"`
	P99US       int64    `msg:"p99" json:"p99_us"`
	P999US      int64    `msg:"p999" json:"p99_9_us"`
	MaxUS       int64    `msg:"mx" json:"max_us"`
	GoodputBP   int32    `msg:"gp" json:"goodput_bp"`                            // basis points
	ServerCPUBP *int32   `msg:"sc,omitempty" json:"server_cpu_bp,omitempty"`     // of one core
	GenCPUBP    *int32   `msg:"gc,omitempty" json:"generator_cpu_bp,omitempty"`  // of its event loops
	Pass        bool     `msg:"p" json:"pass"`                                   //
	GenLimited  bool     `msg:"gl,omitempty" json:"generator_limited,omitempty"` //
	Reasons     []string `msg:"r,omitempty,limit=16" json:"reasons,omitempty"`   //
}

// RunSpec is the configuration the test ran with.
type RunSpec struct {
	URL         string   `msg:"u" json:"url"`
	Method      string   `msg:"m" json:"method"`
	Headers     []Header `msg:"h,omitempty,limit=64" json:"headers,omitempty"`
	BodyBytes   int64    `msg:"bb,omitempty" json:"body_bytes,omitempty"` // the request body's size; the body is not sent back
	Connections int      `msg:"c" json:"connections"`
	Threads     int      `msg:"t,omitempty" json:"threads,omitempty"`
	Requests    int64    `msg:"n,omitempty" json:"requests,omitempty"`
	DurationMS  int64    `msg:"d,omitempty" json:"duration_ms,omitempty"`
	Rate        float64  `msg:"ra,omitempty" json:"rate,omitempty"`
	KeepAlive   bool     `msg:"k" json:"keepalive"`
	TimeoutMS   int64    `msg:"to,omitempty" json:"timeout_ms,omitempty"`
	WarmupMS    int64    `msg:"w,omitempty" json:"warmup_ms,omitempty"`
	// NoLengthCheck says ab's Length failures were not counted. It is
	// negative so that results recorded before the check became opt-in,
	// which all counted them, keep saying so.
	NoLengthCheck bool     `msg:"nl,omitempty" json:"no_length_check,omitempty"`
	Repeat        int      `msg:"rp,omitempty" json:"repeat,omitempty"`
	IntervalMS    int64    `msg:"i,omitempty" json:"interval_ms,omitempty"` // sampling interval
	Watch         []string `msg:"wa,omitempty,limit=32" json:"watch,omitempty"`
	// Mode is the tool whose request and semantics the run had: "ab"
	// (HTTP/1.0, ab's headers, the -s idle timeout) or "wrk" (wrk's
	// request and its whole-request timeout); empty for edgebench's own.
	Mode string `msg:"md,omitempty" json:"mode,omitempty"`
	// Protocol is "h2" or "h2c" for HTTP/2, Streams its requests at once
	// per connection; empty for HTTP/1.x. NoTLSResume and TLSVersion are
	// the TLS options of an https run.
	Protocol    string `msg:"pr,omitempty" json:"protocol,omitempty"`
	Streams     int    `msg:"ms,omitempty" json:"streams,omitempty"`
	NoTLSResume bool   `msg:"nr,omitempty" json:"no_tls_resume,omitempty"`
	TLSVersion  string `msg:"tv,omitempty" json:"tls_version,omitempty"`
	// RepeatAuto, RepeatRSDPct and RepeatBudgetMS are LoadTestSpec's
	// (--repeat auto); Repeat is then the most runs.
	RepeatAuto     bool    `msg:"rpa,omitempty" json:"repeat_auto,omitempty"`
	RepeatRSDPct   float64 `msg:"rpr,omitempty" json:"repeat_rsd_pct,omitempty"`
	RepeatBudgetMS int64   `msg:"rpb,omitempty" json:"repeat_budget_ms,omitempty"`
}

// Fingerprint is what makes two results comparable, or not.
type Fingerprint struct {
	AgentVersion string  `msg:"av,omitempty" json:"agent_version,omitempty"`
	Kernel       string  `msg:"k,omitempty" json:"kernel,omitempty"`
	OS           string  `msg:"os,omitempty" json:"os,omitempty"`
	Arch         string  `msg:"a,omitempty" json:"arch,omitempty"`
	Board        string  `msg:"bd,omitempty" json:"board,omitempty"`
	CPUModel     string  `msg:"cm,omitempty" json:"cpu_model,omitempty"`
	Cores        int     `msg:"nc,omitempty" json:"cores,omitempty"`
	MemKB        int64   `msg:"mk,omitempty" json:"mem_kb,omitempty"`
	Governor     string  `msg:"g,omitempty" json:"cpu_governor,omitempty"`
	MaxFreqMHz   int     `msg:"mf,omitempty" json:"cpu_max_mhz,omitempty"`
	Server       string  `msg:"s,omitempty" json:"server,omitempty"`         // the target's Server header
	ServerSHA256 string  `msg:"sh,omitempty" json:"server_sha256,omitempty"` // the target binary, where readable
	Throttled    bool    `msg:"th,omitempty" json:"throttled,omitempty"`     // the device throttled during a run
	FreqDropped  bool    `msg:"fd,omitempty" json:"freq_dropped,omitempty"`  // the CPU frequency fell during a run
	Extra        []Label `msg:"x,omitempty,limit=32" json:"extra,omitempty"` // anything else worth comparing on
}

// Run is one measured window: load figures, timeline and the system.
type Run struct {
	StartedAt   time.Time     `msg:"st" json:"started_at"` // start of the measured window
	DurationUS  int64         `msg:"du" json:"duration_us"`
	Interrupted bool          `msg:"in,omitempty" json:"interrupted,omitempty"`
	Completed   int64         `msg:"n" json:"completed"` // responses received in full
	OK          int64         `msg:"ok" json:"ok"`       // 2xx/3xx of the expected length
	Errors      ErrorCounts   `msg:"e" json:"errors"`
	StatusCodes []StatusCount `msg:"sc,omitempty,limit=600" json:"status_codes,omitempty"`
	Bytes       int64         `msg:"by" json:"bytes"` // read, headers included
	BodyBytes   int64         `msg:"bb" json:"body_bytes"`
	Connects    int64         `msg:"cn" json:"connects"`
	DocLength   int64         `msg:"dl" json:"doc_length"` // first 2xx body length, -1 if none
	Server      string        `msg:"sv,omitempty" json:"server,omitempty"`
	// Sent counts the request bytes written, headers included;
	// KeepAliveResponses the responses that left the connection open (ab's
	// "Keep-Alive requests"). Both are 0 in results recorded before they
	// were counted.
	Sent               int64 `msg:"se,omitempty" json:"sent,omitempty"`
	KeepAliveResponses int64 `msg:"ka,omitempty" json:"keepalive_responses,omitempty"`
	// Loops are the event loops that ran the spec's threads: at most one
	// per CPU, so -t10 on 2 cores ran 2. 0 in results recorded before it
	// was sent.
	Loops int `msg:"lp,omitempty" json:"loops,omitempty"`

	// Histograms in loadgen's compact encoding (microseconds, HDR; packed,
	// see FromRun for their digits): decode with report.DecodeHistogram.
	Latency    []byte `msg:"hl,omitempty,limit=65536" json:"latency_hist,omitempty"`
	Connect    []byte `msg:"hc,omitempty,limit=65536" json:"connect_hist,omitempty"`
	Waiting    []byte `msg:"hw,omitempty,limit=65536" json:"waiting_hist,omitempty"`
	Processing []byte `msg:"hp,omitempty,limit=65536" json:"processing_hist,omitempty"`

	Timeline []Second `msg:"tl,omitempty,limit=86400" json:"timeline,omitempty"`
	System   *System  `msg:"sy,omitempty" json:"system,omitempty"`

	// Drained is what became of the requests in flight when a timed
	// window closed; they are in no figure above but Bytes and BodyBytes,
	// which count what they read before it closed (since issue 28: a
	// download still flowing at the end read 0 bytes before). WarmupRequests counts
	// the requests of the warm-up, also in no figure. Both are absent from
	// results recorded before they were split off (when the drain was
	// counted in the window and the warm-up's bytes and connections too).
	Drained        *DrainedCounts `msg:"dr,omitempty" json:"drained,omitempty"`
	WarmupRequests int64          `msg:"wr,omitempty" json:"warmup_requests,omitempty"`

	// TLS is what an https run's handshakes negotiated, with the
	// handshake's time (packed histogram); H2 what its HTTP/2
	// connections saw.
	TLS       *TLSRun `msg:"tls,omitempty" json:"tls,omitempty"`
	Handshake []byte  `msg:"hh,omitempty,limit=65536" json:"handshake_hist,omitempty"`
	H2        *H2Run  `msg:"h2,omitempty" json:"h2,omitempty"`

	// Verdict is what limited the run and whether its figure stands
	// (package verdict); absent from results recorded before verdicts.
	Verdict *Verdict `msg:"vd,omitempty" json:"verdict,omitempty"`

	// Window, in a watch's result (kind probe), is the load's window
	// this run covers, marked by the collector; nil: the whole watch (no
	// window was marked), or a load's own run.
	Window *WatchWindow `msg:"wn,omitempty" json:"window,omitempty"`
}

// WatchWindow is the load's measured window a watch's run covers: the
// loader's run Run (from 0), opened and closed by marks.
type WatchWindow struct {
	Run int `msg:"n" json:"run"`
	// Open says the window's end was never marked: it closed when the
	// watch ended.
	Open bool `msg:"o,omitempty" json:"open,omitempty"`
}

// Verdict is verdict.Verdict: what limited a run (server, generator,
// rate, disk, memory, network, errors, cpu), whether its figure stands,
// and why, with the figures.
type Verdict struct {
	LimitedBy string   `msg:"l" json:"limited_by"`
	Valid     bool     `msg:"v" json:"valid"`
	Reasons   []string `msg:"r,omitempty,limit=32" json:"reasons,omitempty"`
}

// TLSRun is loadgen's report.TLSInfo.
type TLSRun struct {
	Version    string `msg:"v" json:"version"`
	Cipher     string `msg:"c" json:"cipher"`
	Group      string `msg:"g,omitempty" json:"group,omitempty"`
	ServerName string `msg:"sn,omitempty" json:"server_name,omitempty"`
	ALPN       string `msg:"al,omitempty" json:"alpn,omitempty"`
	KeyBits    int    `msg:"kb,omitempty" json:"key_bits,omitempty"`
	Resume     bool   `msg:"rs,omitempty" json:"resume"`
	Handshakes int64  `msg:"n,omitempty" json:"handshakes"`
	Resumed    int64  `msg:"r,omitempty" json:"resumed"`
}

// H2Run is loadgen's report.H2Info.
type H2Run struct {
	MaxStreams  int64       `msg:"mx,omitempty" json:"max_streams,omitempty"`
	GoAways     int64       `msg:"ga,omitempty" json:"goaways"`
	Retried     int64       `msg:"rt,omitempty" json:"retried"`
	HeaderBytes int64       `msg:"hb,omitempty" json:"header_bytes"`
	Resets      []CodeCount `msg:"rs,omitempty,limit=32" json:"resets,omitempty"` // streams reset, by error code
}

// CodeCount is a count by name, such as an HTTP/2 error code's.
type CodeCount struct {
	Name string `msg:"c" json:"code"`
	N    int64  `msg:"n" json:"n"`
}

// DrainedCounts are loadgen's Drained figures.
type DrainedCounts struct {
	Requests    int64         `msg:"n" json:"requests"`
	Completed   int64         `msg:"c" json:"completed"`
	OK          int64         `msg:"ok,omitempty" json:"ok"`
	Errors      ErrorCounts   `msg:"e" json:"errors"`
	Cut         int64         `msg:"x,omitempty" json:"cut"`
	StatusCodes []StatusCount `msg:"sc,omitempty,limit=600" json:"status_codes,omitempty"`
	Bytes       int64         `msg:"by,omitempty" json:"bytes"`
	BodyBytes   int64         `msg:"bb,omitempty" json:"body_bytes"`
	Connects    int64         `msg:"cn,omitempty" json:"connects"`
}

// ErrorCounts are the failed requests by class, as loadgen counts them.
type ErrorCounts struct {
	Connect int64 `msg:"c,omitempty" json:"connect"`
	Read    int64 `msg:"r,omitempty" json:"read"`
	Write   int64 `msg:"w,omitempty" json:"write"`
	Timeout int64 `msg:"t,omitempty" json:"timeout"`
	Status  int64 `msg:"s,omitempty" json:"status"`
	Length  int64 `msg:"l,omitempty" json:"length"`
	TLS     int64 `msg:"tl,omitempty" json:"tls,omitempty"`   // failed TLS set-ups (handshake, certificate)
	Reset   int64 `msg:"rs,omitempty" json:"reset,omitempty"` // HTTP/2 streams the server reset
	Limit   int64 `msg:"lm,omitempty" json:"limit,omitempty"` // connections closed for pushing the client past a bound (floods, unread output, header block)
}

// StatusCount is the number of responses with one HTTP status code.
type StatusCount struct {
	Code int   `msg:"c" json:"code"`
	N    int64 `msg:"n" json:"n"`
}

// Second is one second of a run's timeline.
type Second struct {
	T         int32 `msg:"t" json:"t"`
	Completed int64 `msg:"n" json:"completed"`
	Errors    int64 `msg:"e,omitempty" json:"errors"`
	P50US     int64 `msg:"a" json:"p50_us"`
	P99US     int64 `msg:"b" json:"p99_us"`
}

// Repeat is the spread of figures across the runs of --repeat.
type Repeat struct {
	Runs   int     `msg:"n" json:"runs"`
	RPS    Spread  `msg:"r" json:"rps"`
	P50US  Spread  `msg:"a" json:"p50_us"`
	P99US  Spread  `msg:"b" json:"p99_us"`
	RSDPct float64 `msg:"d" json:"rps_rsd_pct"`
	// Auto says the runs were --repeat auto's; Stable whether their
	// req/s became as steady as MaxRSDPct asks (nil without auto).
	Auto      bool    `msg:"au,omitempty" json:"auto,omitempty"`
	Stable    *bool   `msg:"sb,omitempty" json:"stable,omitempty"`
	MaxRSDPct float64 `msg:"mr,omitempty" json:"max_rsd_pct,omitempty"`
	// Judged is the figure Stable was judged on when it is not req/s:
	// "p99" in open loop, where the rate fixes req/s; JudgedRSDPct is its
	// relative standard deviation across the runs, in %.
	Judged       string  `msg:"jf,omitempty" json:"judged,omitempty"`
	JudgedRSDPct float64 `msg:"jd,omitempty" json:"judged_rsd_pct,omitempty"`
}

// Spread is a figure's mean, sample standard deviation, 95 % confidence
// interval and range across runs.
type Spread struct {
	Mean   float64 `msg:"m" json:"mean"`
	StdDev float64 `msg:"s" json:"stdev"`
	CILow  float64 `msg:"l" json:"ci95_low"`
	CIHigh float64 `msg:"h" json:"ci95_high"`
	Min    float64 `msg:"n" json:"min"`
	Max    float64 `msg:"x" json:"max"`
}

// System is what the probe saw during a run. Per-sample disks, interfaces,
// zones and processes refer by index to the name tables here, so names
// are sent once.
type System struct {
	IntervalMS int64       `msg:"i" json:"interval_ms"`
	Stride     int         `msg:"st,omitempty" json:"stride,omitempty"` // > 1: every stride-th sample was kept
	Disks      []string    `msg:"dn,omitempty,limit=64" json:"disks,omitempty"`
	Partitions []bool      `msg:"dp,omitempty,limit=64" json:"partitions,omitempty"` // Disks[i] is a partition
	Nets       []string    `msg:"nn,omitempty,limit=64" json:"nets,omitempty"`
	Zones      []string    `msg:"zn,omitempty,limit=64" json:"zones,omitempty"` // thermal zones (type or name)
	Procs      []string    `msg:"pn,omitempty,limit=64" json:"procs,omitempty"` // watched process names
	Samples    []SysSample `msg:"s,omitempty,limit=86400" json:"samples,omitempty"`
	Summary    SysSummary  `msg:"su" json:"summary"`
	Warnings   []string    `msg:"w,omitempty,limit=64" json:"warnings,omitempty"`
}

// SysSample is the machine over one interval.
type SysSample struct {
	T        int32      `msg:"t" json:"t_ms"` // end of the interval, ms after the run's start
	CPU      *CPUShares `msg:"c,omitempty" json:"cpu,omitempty"`
	CoreBP   []int32    `msg:"cb,omitempty,limit=256" json:"core_busy_bp,omitempty"` // per core: 100 % - idle - iowait
	Load1    *int32     `msg:"l,omitempty" json:"load1_x100,omitempty"`
	Ctxt     *int64     `msg:"cs,omitempty" json:"ctxt_per_s,omitempty"`
	Intr     *int64     `msg:"ir,omitempty" json:"intr_per_s,omitempty"`
	Running  *int32     `msg:"pr,omitempty" json:"procs_running,omitempty"`
	Blocked  *int32     `msg:"pb,omitempty" json:"procs_blocked,omitempty"`
	Mem      *MemSample `msg:"m,omitempty" json:"mem,omitempty"`
	Disks    []DiskRate `msg:"d,omitempty,limit=64" json:"disks,omitempty"`
	Nets     []NetRate  `msg:"n,omitempty,limit=64" json:"nets,omitempty"`
	TCP      *TCPRate   `msg:"tp,omitempty" json:"tcp,omitempty"`
	PSI      *PSIShares `msg:"p,omitempty" json:"psi,omitempty"`
	TempDC   []int32    `msg:"tc,omitempty,limit=64" json:"temp_dc,omitempty"`  // per zone, as System.Zones
	FreqMHz  []int32    `msg:"f,omitempty,limit=256" json:"freq_mhz,omitempty"` // per core with cpufreq
	Throttle *uint32    `msg:"th,omitempty" json:"throttled,omitempty"`         // Pi get_throttled word
	Procs    []ProcRate `msg:"pc,omitempty,limit=64" json:"procs,omitempty"`
}

// CPUShares are the shares of CPU time over an interval in basis points.
type CPUShares struct {
	User    int32 `msg:"u,omitempty" json:"user"`
	Nice    int32 `msg:"n,omitempty" json:"nice"`
	System  int32 `msg:"s,omitempty" json:"system"`
	Idle    int32 `msg:"i,omitempty" json:"idle"`
	IOWait  int32 `msg:"w,omitempty" json:"iowait"`
	IRQ     int32 `msg:"q,omitempty" json:"irq"`
	SoftIRQ int32 `msg:"sq,omitempty" json:"softirq"`
	Steal   int32 `msg:"st,omitempty" json:"steal"`
}

// MemSample is memory at the end of an interval, in KiB.
type MemSample struct {
	Used      int64  `msg:"u" json:"used_kb"`
	Free      int64  `msg:"f" json:"free_kb"`
	Available *int64 `msg:"a,omitempty" json:"available_kb,omitempty"`
	Buffers   *int64 `msg:"b,omitempty" json:"buffers_kb,omitempty"`
	Cached    *int64 `msg:"c,omitempty" json:"cached_kb,omitempty"`
	Dirty     *int64 `msg:"d,omitempty" json:"dirty_kb,omitempty"`
	SwapUsed  *int64 `msg:"s,omitempty" json:"swap_used_kb,omitempty"`
}

// DiskRate is one block device (System.Disks[I]) over an interval.
type DiskRate struct {
	I         int32 `msg:"i" json:"i"`
	ReadKBs   int64 `msg:"r,omitempty" json:"read_kbs"`
	WriteKBs  int64 `msg:"w,omitempty" json:"write_kbs"`
	ReadIOPS  int32 `msg:"ri,omitempty" json:"read_iops"`
	WriteIOPS int32 `msg:"wi,omitempty" json:"write_iops"`
	BusyBP    int32 `msg:"b,omitempty" json:"busy_bp"`
}

// NetRate is one interface (System.Nets[I]) over an interval; drops and
// errors in packets per second.
type NetRate struct {
	I       int32 `msg:"i" json:"i"`
	RxKBs   int64 `msg:"r,omitempty" json:"rx_kbs"`
	TxKBs   int64 `msg:"t,omitempty" json:"tx_kbs"`
	RxPps   int64 `msg:"rp,omitempty" json:"rx_pps"`
	TxPps   int64 `msg:"tp,omitempty" json:"tx_pps"`
	RxDrops int64 `msg:"rd,omitempty" json:"rx_drops,omitempty"`
	TxDrops int64 `msg:"td,omitempty" json:"tx_drops,omitempty"`
	RxErrs  int64 `msg:"re,omitempty" json:"rx_errs,omitempty"`
	TxErrs  int64 `msg:"te,omitempty" json:"tx_errs,omitempty"`
}

// TCPRate is the machine's TCP segments per second over an interval
// (/proc/net/snmp): received, sent, retransmitted.
type TCPRate struct {
	InSegs      int64 `msg:"i,omitempty" json:"in_segs"`
	OutSegs     int64 `msg:"o,omitempty" json:"out_segs"`
	RetransSegs int64 `msg:"r,omitempty" json:"retrans_segs"`
}

// PSIShares are pressure stall shares over an interval, in basis points.
type PSIShares struct {
	CPUSome *int32 `msg:"cs,omitempty" json:"cpu_some_bp,omitempty"`
	IOSome  *int32 `msg:"is,omitempty" json:"io_some_bp,omitempty"`
	IOFull  *int32 `msg:"if,omitempty" json:"io_full_bp,omitempty"`
	MemSome *int32 `msg:"ms,omitempty" json:"mem_some_bp,omitempty"`
	MemFull *int32 `msg:"mf,omitempty" json:"mem_full_bp,omitempty"`
}

// ProcRate is a watched process (System.Procs[I]) over an interval.
type ProcRate struct {
	I        int32  `msg:"i" json:"i"`
	PID      int32  `msg:"p,omitempty" json:"pid,omitempty"` // set when watched by PID
	Count    int32  `msg:"n" json:"count"`
	CPUBP    *int32 `msg:"c,omitempty" json:"cpu_bp,omitempty"` // of one core: 20000 = two cores busy
	RSSKB    *int64 `msg:"m,omitempty" json:"rss_kb,omitempty"`
	ReadKBs  *int64 `msg:"r,omitempty" json:"read_kbs,omitempty"`
	WriteKBs *int64 `msg:"w,omitempty" json:"write_kbs,omitempty"`
}

// WindowStat is a figure's time-weighted mean and maximum over the
// measured window, in the figure's unit. The *Window types are the wire's
// form of probe/machine's summary (integers in the wire's units), as
// SysSample's parts are of its samples.
type WindowStat struct {
	Mean int64 `msg:"m" json:"mean"`
	Max  int64 `msg:"x" json:"max"`
}

// SysSummary is the measured window in figures: what the seeds' tables
// show (CPU %, IO KB/s, page cache, ...).
type SysSummary struct {
	Seconds    float64      `msg:"s" json:"seconds"`
	Samples    int          `msg:"n" json:"samples"`
	CPU        *CPUWindow   `msg:"c,omitempty" json:"cpu,omitempty"`
	CoreBusyBP []WindowStat `msg:"cb,omitempty,limit=256" json:"core_busy_bp,omitempty"`
	Load1      *WindowStat  `msg:"l,omitempty" json:"load1_x100,omitempty"`
	Ctxt       *WindowStat  `msg:"cs,omitempty" json:"ctxt_per_s,omitempty"`
	Intr       *WindowStat  `msg:"ir,omitempty" json:"intr_per_s,omitempty"`
	Mem        *MemWindow   `msg:"m,omitempty" json:"mem,omitempty"`
	Disks      []DiskWindow `msg:"d,omitempty,limit=64" json:"disks,omitempty"`
	Nets       []NetWindow  `msg:"nt,omitempty,limit=64" json:"nets,omitempty"`
	TCP        *TCPWindow   `msg:"tp,omitempty" json:"tcp,omitempty"`
	Path       *PathWindow  `msg:"pa,omitempty" json:"path,omitempty"`
	PSI        *PSIWindow   `msg:"p,omitempty" json:"psi,omitempty"`
	TempMaxDC  *int32       `msg:"tm,omitempty" json:"temp_max_dc,omitempty"`
	FreqMinMHz *int32       `msg:"fn,omitempty" json:"freq_min_mhz,omitempty"`
	FreqMaxMHz *int32       `msg:"fx,omitempty" json:"freq_max_mhz,omitempty"`
	Throttled  *uint32      `msg:"th,omitempty" json:"throttled,omitempty"` // flags seen in the window; nil without get_throttled
	Procs      []ProcWindow `msg:"pc,omitempty,limit=64" json:"procs,omitempty"`
}

// CPUWindow is the CPU shares over the window, in basis points.
type CPUWindow struct {
	User    WindowStat `msg:"u" json:"user"`
	Nice    WindowStat `msg:"n" json:"nice"`
	System  WindowStat `msg:"s" json:"system"`
	Idle    WindowStat `msg:"i" json:"idle"`
	IOWait  WindowStat `msg:"w" json:"iowait"`
	IRQ     WindowStat `msg:"q" json:"irq"`
	SoftIRQ WindowStat `msg:"sq" json:"softirq"`
	Steal   WindowStat `msg:"st" json:"steal"`
}

// MemWindow is memory over the window, in KiB.
type MemWindow struct {
	TotalKB   int64       `msg:"t" json:"total_kb"`
	Used      WindowStat  `msg:"u" json:"used_kb"`
	Free      WindowStat  `msg:"f" json:"free_kb"`
	Available *WindowStat `msg:"a,omitempty" json:"available_kb,omitempty"`
	Buffers   *WindowStat `msg:"b,omitempty" json:"buffers_kb,omitempty"`
	Cached    *WindowStat `msg:"c,omitempty" json:"cached_kb,omitempty"`
	Dirty     *WindowStat `msg:"d,omitempty" json:"dirty_kb,omitempty"`
	SwapUsed  *WindowStat `msg:"s,omitempty" json:"swap_used_kb,omitempty"`
}

// DiskWindow is one block device (System.Disks[I]) over the window.
type DiskWindow struct {
	I         int32      `msg:"i" json:"i"`
	ReadKBs   WindowStat `msg:"r" json:"read_kbs"`
	WriteKBs  WindowStat `msg:"w" json:"write_kbs"`
	ReadIOPS  WindowStat `msg:"ri" json:"read_iops"`
	WriteIOPS WindowStat `msg:"wi" json:"write_iops"`
	BusyBP    WindowStat `msg:"b" json:"busy_bp"`
}

// NetWindow is one interface (System.Nets[I]) over the window.
type NetWindow struct {
	I     int32      `msg:"i" json:"i"`
	RxKBs WindowStat `msg:"r" json:"rx_kbs"`
	TxKBs WindowStat `msg:"t" json:"tx_kbs"`
	RxPps WindowStat `msg:"rp" json:"rx_pps"`
	TxPps WindowStat `msg:"tp" json:"tx_pps"`
	// SpeedMbps is the link's speed in Mb/s; 0: unknown (loopback,
	// virtual, or sent before the probe read it).
	SpeedMbps int32 `msg:"sp,omitempty" json:"speed_mbps,omitempty"`
	// Duplex is "full" or "half"; "": unknown.
	Duplex string `msg:"dx,omitempty" json:"duplex,omitempty"`
	// RxDrops, TxDrops, RxErrs and TxErrs are the packets dropped and in
	// error over the window; nil: sent before the probe counted them.
	RxDrops *int64 `msg:"rd,omitempty" json:"rx_drops,omitempty"`
	TxDrops *int64 `msg:"td,omitempty" json:"tx_drops,omitempty"`
	RxErrs  *int64 `msg:"re,omitempty" json:"rx_errs,omitempty"`
	TxErrs  *int64 `msg:"te,omitempty" json:"tx_errs,omitempty"`
}

// TCPWindow is the machine's TCP segments over the window: per second,
// and the totals sent and retransmitted (their ratio is the share
// retransmitted).
type TCPWindow struct {
	InSegs      WindowStat `msg:"i" json:"in_segs_per_s"`
	OutSegs     WindowStat `msg:"o" json:"out_segs_per_s"`
	RetransSegs WindowStat `msg:"r" json:"retrans_segs_per_s"`
	Out         int64      `msg:"on" json:"out_segs"`
	Retrans     int64      `msg:"rn" json:"retrans_segs"`
}

// PathWindow is the round-trip time from the loader to a target on
// another machine, by TCP handshakes (probe/machine's PathSummary): before
// the load (Idle) and over the window (Loaded).
type PathWindow struct {
	Target string     `msg:"t" json:"target"` // address:port
	Idle   *RTTWindow `msg:"i,omitempty" json:"idle,omitempty"`
	Loaded *RTTWindow `msg:"l,omitempty" json:"loaded,omitempty"`
	Lost   int32      `msg:"x,omitempty" json:"lost,omitempty"`
}

// RTTWindow is N handshakes' round-trip times in microseconds.
type RTTWindow struct {
	N        int32 `msg:"n" json:"n"`
	MinUS    int64 `msg:"a" json:"min_us"`
	MedianUS int64 `msg:"m" json:"median_us"`
	MaxUS    int64 `msg:"x" json:"max_us"`
}

// PSIWindow is the stall shares over the window, in basis points.
type PSIWindow struct {
	CPUSome *WindowStat `msg:"cs,omitempty" json:"cpu_some_bp,omitempty"`
	IOSome  *WindowStat `msg:"is,omitempty" json:"io_some_bp,omitempty"`
	IOFull  *WindowStat `msg:"if,omitempty" json:"io_full_bp,omitempty"`
	MemSome *WindowStat `msg:"ms,omitempty" json:"mem_some_bp,omitempty"`
	MemFull *WindowStat `msg:"mf,omitempty" json:"mem_full_bp,omitempty"`
}

// ProcWindow is one watched process (System.Procs[I]) over the window.
type ProcWindow struct {
	I       int32       `msg:"i" json:"i"`
	PID     int32       `msg:"p,omitempty" json:"pid,omitempty"`
	Count   int32       `msg:"n" json:"count"` // most processes seen at once
	CPUBP   *WindowStat `msg:"c,omitempty" json:"cpu_bp,omitempty"`
	RSSKB   *WindowStat `msg:"m,omitempty" json:"rss_kb,omitempty"`
	ReadKB  *int64      `msg:"r,omitempty" json:"read_kb,omitempty"` // total over the window
	WriteKB *int64      `msg:"w,omitempty" json:"write_kb,omitempty"`
	// CPUs are the cores the processes may run on (their affinity); nil:
	// unknown, or sent before the probe read it.
	CPUs []int32 `msg:"cp,omitempty,limit=1024" json:"cpus,omitempty"`
	// Role is what the processes were to the load test: ProcServer,
	// ProcUpstream, ProcGenerator; "": watched for themselves, or sent
	// before roles (then the first row not the generator's was taken as
	// the server). The server's CPU is its rows' of role server and
	// upstream, summed.
	Role string `msg:"ro,omitempty" json:"role,omitempty"`
	// Of is an upstream's server: the index in System.Procs of the name
	// of the process that hands it its work; nil: none.
	Of *int32 `msg:"of,omitempty" json:"of,omitempty"`
}

// The roles of a watched process (ProcWindow.Role).
const (
	// ProcServer: what listens on the target's port, with its workers,
	// and what --watch named.
	ProcServer = "server"
	// ProcUpstream: a process the server handed its work to, found from
	// its connected sockets (php-fpm behind nginx, a proxied backend).
	ProcUpstream = "upstream"
	// ProcGenerator: the load test's own process.
	ProcGenerator = "generator"
)
