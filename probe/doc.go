// Package probe samples the machine the way dstat and dool do: CPU time
// shares, load, memory, block devices, network interfaces, pressure stall
// information, temperatures, CPU frequency, Raspberry Pi throttling flags and
// a few watched processes.
//
// Everything is read from proc/... and sys/... below a root directory ("/" on
// the live machine), so the same code runs on committed fixture trees. Each
// kernel file has its own file here with a pure parser (parseStat,
// parseMeminfo, ...) beside a thin, bounded reader. Figures the machine does
// not provide are absent (nil pointers, empty slices) and reports show them
// as "-", never as 0.
//
// The 1-second hot loop keeps the kernel files open and re-reads them with
// pread at offset 0 into one reused buffer, so a sample costs a handful of
// syscalls and few allocations. System information that is read once
// (SystemInfo) uses gopsutil.
//
// Use it alone:
//
//	p := probe.New("/")
//	defer p.Close()
//	p.Sample()                    // first snapshot: no rates yet
//	time.Sleep(time.Second)
//	s, err := p.Sample()          // rates over the last second
//
// or record a run with Record, MarkStart, MarkEnd and Stop, which returns
// a bounded machine.Report with per-second samples, a summary of the
// measured window and warnings (throttling, frequency drops). No rate in a
// Report is measured over less than a tenth of the interval: an edge of
// the window that falls just after a periodic sample is merged into that
// sample's slice, since counters that move in 10 ms ticks say nothing over
// a few milliseconds.
//
// The types of samples, summaries and reports, and the text of the
// System section, live in probe/machine, which reads nothing: the
// collector prints a device's System section without linking the sampler.
package probe
