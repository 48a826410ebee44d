package machine

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
)

// WriteText writes the "System" section of a text report: the measured
// window's CPU %, load, memory, disk and network rates, temperature,
// frequency, throttling and watched processes, each as mean and max, with
// "-" for what the machine does not have, then the warnings.
func (r *Report) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	s := &r.Summary
	if s.Samples == 0 && s.Seconds > 0 {
		// See Recorder: no rate over less than a tenth of the interval.
		fmt.Fprintf(bw, "System (%.3f s measured, too short for rates at a %s interval):\n", s.Seconds, secs(r.Interval))
	} else {
		fmt.Fprintf(bw, "System (%.1f s measured, %s):\n", s.Seconds, sampling(s.Samples, s.Seconds, r.Interval))
	}
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(cells ...string) {
		for _, c := range cells {
			io.WriteString(tw, c+"\t")
		}
		io.WriteString(tw, "\n")
	}

	row("", "CPU %", "usr", "sys", "siq", "hiq", "wai", "stl", "idl")
	if c := s.CPU; c != nil {
		row("", "mean", f1(c.User.Mean), f1(c.System.Mean), f1(c.SoftIRQ.Mean), f1(c.IRQ.Mean), f1(c.IOWait.Mean), f1(c.Steal.Mean), f1(c.Idle.Mean))
		row("", "max", f1(c.User.Max), f1(c.System.Max), f1(c.SoftIRQ.Max), f1(c.IRQ.Max), f1(c.IOWait.Max), f1(c.Steal.Max), f1(c.Idle.Max))
	} else {
		row("", "mean", "-", "-", "-", "-", "-", "-", "-")
	}
	tw.Flush()
	if len(s.PerCPUBusy) > 0 {
		io.WriteString(bw, "  core busy % (mean/max):")
		for _, c := range s.PerCPUBusy {
			io.WriteString(bw, " cpu"+strconv.Itoa(c.ID)+" "+f1(c.Mean)+"/"+f1(c.Max))
		}
		io.WriteString(bw, "\n")
	}
	fmt.Fprintf(bw, "  load 1m %s, context switches/s %s, interrupts/s %s\n",
		optStat(s.Load1, 2, 1, "/"), optStat(s.ContextSwitches, 0, 1, "/"), optStat(s.Interrupts, 0, 1, "/"))

	tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	row("", "Memory MB", "used", "free", "cached", "buffers", "avail", "dirty", "swap")
	if m := s.Mem; m != nil {
		const mb = 1 << 20
		row("", "mean", f1(m.Used.Mean/mb), f1(m.Free.Mean/mb), optMean(m.Cached, mb), optMean(m.Buffers, mb), optMean(m.Available, mb), optMean(m.Dirty, mb), optMean(m.SwapUsed, mb))
		row("", "max", f1(m.Used.Max/mb), f1(m.Free.Max/mb), optMax(m.Cached, mb), optMax(m.Buffers, mb), optMax(m.Available, mb), optMax(m.Dirty, mb), optMax(m.SwapUsed, mb))
	} else {
		row("", "mean", "-", "-", "-", "-", "-", "-", "-")
	}
	tw.Flush()

	tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	row("", "Disk (mean/max)", "read KB/s", "write KB/s", "read IOPS", "write IOPS", "busy %")
	disks := 0
	for _, d := range s.Disks {
		if d.Partition {
			continue
		}
		disks++
		row("", d.Name, st(d.ReadKBs, 1), st(d.WriteKBs, 1), st(d.ReadIOPS, 0), st(d.WriteIOPS, 0), st(d.Busy, 1))
	}
	if disks == 0 {
		row("", "-", "-", "-", "-", "-", "-")
	}
	row("", "Net (mean/max)", "rx KB/s", "tx KB/s", "rx pkt/s", "tx pkt/s", "drops rx/tx", "errors rx/tx")
	if len(s.Nets) == 0 {
		row("", "-", "-", "-", "-", "-", "-", "-")
	}
	for _, n := range s.Nets {
		name := n.Name
		switch {
		case n.SpeedMbps > 0 && n.Duplex == "half":
			name += " (" + strconv.Itoa(n.SpeedMbps) + " Mb/s, half duplex)"
		case n.SpeedMbps > 0:
			name += " (" + strconv.Itoa(n.SpeedMbps) + " Mb/s)"
		}
		row("", name, st(n.RxKBs, 1), st(n.TxKBs, 1), st(n.RxPps, 0), st(n.TxPps, 0), counts(n.RxDrops, n.TxDrops), counts(n.RxErrs, n.TxErrs))
	}
	tw.Flush()
	if t := s.TCP; t != nil {
		retrans := "none sent"
		if pct, ok := t.RetransPct(); ok {
			retrans = fmt.Sprintf("%.0f of %.0f segments sent (%.2f %%)", t.Retrans, t.Out, pct)
		}
		fmt.Fprintf(bw, "  TCP segments/s in %s, out %s; retransmitted %s\n", st(t.InSegs, 0), st(t.OutSegs, 0), retrans)
	}
	if p := s.Path; p != nil {
		fmt.Fprintf(bw, "  round trip to %s (TCP handshakes): idle %s; under load %s", p.Target, rtt(p.Idle), rtt(p.Loaded))
		if p.Lost > 0 {
			fmt.Fprintf(bw, ", %d lost", p.Lost)
		}
		io.WriteString(bw, "\n")
	}

	temp, freq, thr, psi := "-", "-", "-", "-"
	if s.TempMaxC != nil {
		temp = f1(*s.TempMaxC) + " C max"
	}
	if s.FreqMinMHz != nil {
		freq = fmt.Sprintf("%.0f-%.0f MHz", *s.FreqMinMHz, *s.FreqMaxMHz)
	}
	if s.Throttled != nil {
		thr = s.Throttled.String()
	}
	if p := s.PSI; p != nil {
		psi = "cpu " + optStat(p.CPUSome, 1, 1, "/") + "  io " + optStat(p.IOSome, 1, 1, "/") + "  mem " + optStat(p.MemSome, 1, 1, "/") + " % some"
	}
	fmt.Fprintf(bw, "  temperature %s, CPU frequency %s, throttling %s\n  pressure %s\n", temp, freq, thr, psi)

	if len(s.Procs) > 0 {
		tw = tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		row("", "Watched", "n", "CPU % mean/max", "RSS MB mean/max", "read KB", "write KB")
		for _, p := range s.Procs {
			name := p.Label()
			rss := "-"
			if p.RSS != nil {
				rss = f1(p.RSS.Mean/(1<<20)) + "/" + f1(p.RSS.Max/(1<<20))
			}
			rd, wr := "-", "-"
			if p.ReadKB != nil {
				rd, wr = f1(*p.ReadKB), f1(*p.WriteKB)
			}
			row("", name, strconv.Itoa(p.Count), optStat(p.CPU, 1, 1, "/"), rss, rd, wr)
		}
		tw.Flush()
	}
	for _, w := range r.Warnings {
		fmt.Fprintf(bw, "warning: %s\n", w)
	}
	return bw.Flush()
}

// sampling says how the window was sampled: "10 samples of 1 s", "1
// sample of 0.3 s" (a window shorter than the interval), "3 samples at a
// 1 s interval" (the last one shorter).
func sampling(n int, seconds, interval float64) string {
	switch {
	case n == 1:
		return "1 sample of " + secs(math.Round(seconds*10)/10)
	case interval > 0 && math.Abs(seconds-float64(n)*interval) > 0.05*interval:
		return fmt.Sprintf("%d samples at a %s interval", n, secs(interval))
	}
	return fmt.Sprintf("%d samples of %s", n, secs(interval))
}

func secs(s float64) string { return strconv.FormatFloat(s, 'f', -1, 64) + " s" }

func f1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func fp(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

func st(s Stat, prec int) string { return fp(s.Mean, prec) + "/" + fp(s.Max, prec) }

func optStat(s *Stat, prec int, div float64, sep string) string {
	if s == nil {
		return "-"
	}
	return fp(s.Mean/div, prec) + sep + fp(s.Max/div, prec)
}

// rtt is handshake times as the System section prints them: "median
// 0.31 ms (0.28-0.90 ms, 5 handshakes)"; "-" when none were measured.
func rtt(r *RTT) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("median %s ms (%s-%s ms, %d handshake%s)", ms(r.MedianMS), ms(r.MinMS), ms(r.MaxMS), r.N, plural(r.N))
}

// ms prints a time in milliseconds with 3 significant digits, at least
// two decimals: 0.052, 1.20, 48.3, 312.
func ms(v float64) string {
	switch {
	case v < 1:
		return fp(v, 3)
	case v < 10:
		return fp(v, 2)
	case v < 100:
		return fp(v, 1)
	}
	return fp(v, 0)
}

// counts is a pair of totals, "2/0"; "-" when absent.
func counts(a, b *float64) string {
	if a == nil || b == nil {
		return "-"
	}
	return fp(*a, 0) + "/" + fp(*b, 0)
}

func optMean(s *Stat, div float64) string {
	if s == nil {
		return "-"
	}
	return f1(s.Mean / div)
}

func optMax(s *Stat, div float64) string {
	if s == nil {
		return "-"
	}
	return f1(s.Max / div)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
