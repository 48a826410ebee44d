package probe

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/edgebench/edgebench/probe/machine"
)

// headerEvery is how often the table repeats its header, as dstat does.
const headerEvery = 20

// LineWriter prints one sample per line, as `edgebench probe` does: a
// table in dstat's layout (its header repeated every headerEvery lines),
// CSV with a header line, or JSON lines.
type LineWriter struct {
	w       *bufio.Writer
	format  string
	watches []Watch
	lines   int
	buf     []byte
}

// NewLineWriter writes to w in format ("table", "csv" or "json"), with
// a cpu% and rss column pair for each of watches. The caller flushes w.
func NewLineWriter(w *bufio.Writer, format string, watches []Watch) *LineWriter {
	return &LineWriter{w: w, format: format, watches: watches}
}

// Write prints sample s.
func (lw *LineWriter) Write(s *machine.Sample) error {
	defer func() { lw.lines++ }()
	switch lw.format {
	case "json":
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		lw.w.Write(b)
		return lw.w.WriteByte('\n')
	case "csv":
		if lw.lines == 0 {
			lw.w.WriteString(lw.csvHeader())
		}
		lw.buf = appendCSV(lw.buf[:0], s)
		lw.w.Write(lw.buf)
		return nil
	}
	if lw.lines%headerEvery == 0 {
		lw.w.WriteString(lw.tableHeader())
	}
	lw.buf = appendTable(lw.buf[:0], s)
	_, err := lw.w.Write(lw.buf)
	return err
}

// sums adds up what the table shows as totals: whole disks only (not their
// partitions) and every interface but lo, as dstat does.
type sums struct {
	read, write, rx, tx float64
	disks, nets         bool
}

func totals(s *machine.Sample) sums {
	var t sums
	for _, d := range s.Disks {
		if !d.Partition {
			t.read += d.ReadBps
			t.write += d.WriteBps
			t.disks = true
		}
	}
	for _, n := range s.Nets {
		if n.Name != "lo" {
			t.rx += n.RxBps
			t.tx += n.TxBps
		}
	}
	t.nets = s.Nets != nil
	return t
}

func (lw *LineWriter) tableHeader() string {
	var a, b strings.Builder
	a.WriteString(center("total-cpu-usage", 24) + " " + center("dsk/total", 11) + " " + center("net/total", 11) + " " +
		center("memory-usage", 17) + " " + center("system", 12) + " " + center("load-temp-freq-thr", 20))
	b.WriteString("usr sys siq idl wai stl | read  writ| recv  send| used  cach  avai|  int   csw |   1m    C   MHz thr")
	for _, w := range lw.watches {
		a.WriteString(" " + center(w.String(), 11))
		b.WriteString("| cpu%   rss")
	}
	return a.String() + "\n" + b.String() + "\n"
}

// center puts title in the middle of a width-wide run of dashes, cutting it
// if it does not fit.
func center(title string, width int) string {
	if len(title) > width {
		title = title[:width]
	}
	left := (width - len(title)) / 2
	return strings.Repeat("-", left) + title + strings.Repeat("-", width-len(title)-left)
}

func appendTable(b []byte, s *machine.Sample) []byte {
	if c := s.CPU; c != nil {
		for _, v := range []float64{c.User, c.System, c.SoftIRQ, c.Idle, c.IOWait, c.Steal} {
			b = appendPct(b, v)
			b = append(b, ' ')
		}
	} else {
		b = append(b, "  -   -   -   -   -   - "...)
	}
	t := totals(s)
	b = append(b, '|')
	b = appendOptHuman(b, t.read, t.disks)
	b = append(b, ' ')
	b = appendOptHuman(b, t.write, t.disks)
	b = append(b, '|')
	b = appendOptHuman(b, t.rx, t.nets)
	b = append(b, ' ')
	b = appendOptHuman(b, t.tx, t.nets)
	b = append(b, '|')
	if m := s.Mem; m != nil {
		b = appendHuman(b, float64(m.Used))
		b = append(b, ' ')
		b = appendOptU(b, m.Cached)
		b = append(b, ' ')
		b = appendOptU(b, m.Available)
	} else {
		b = append(b, "    -     -     -"...)
	}
	b = append(b, '|')
	b = appendOptF(b, s.Interrupts)
	b = append(b, ' ')
	b = appendOptF(b, s.ContextSwitches)
	b = append(b, " |"...)
	if s.Load != nil {
		b = appendPad(b, strconv.AppendFloat(nil, s.Load.Load1, 'f', 2, 64), 5)
	} else {
		b = append(b, "    -"...)
	}
	b = append(b, ' ')
	if len(s.Temps) > 0 {
		hot := s.Temps[0].Celsius
		for _, z := range s.Temps[1:] {
			hot = max(hot, z.Celsius)
		}
		b = appendPad(b, strconv.AppendFloat(nil, hot, 'f', 0, 64), 4)
	} else {
		b = append(b, "   -"...)
	}
	b = append(b, ' ')
	if len(s.FreqMHz) > 0 {
		f := s.FreqMHz[0]
		for _, x := range s.FreqMHz[1:] {
			f = max(f, x)
		}
		b = appendPad(b, strconv.AppendFloat(nil, f, 'f', 0, 64), 5)
	} else {
		b = append(b, "    -"...)
	}
	b = append(b, ' ')
	b = append(b, throttleCode(s.Throttle)...)
	for _, p := range s.Procs {
		b = append(b, '|')
		if p.CPU != nil {
			b = appendPad(b, strconv.AppendFloat(nil, *p.CPU, 'f', 1, 64), 5)
		} else {
			b = append(b, "    -"...)
		}
		b = append(b, ' ')
		b = appendOptU(b, p.RSS)
	}
	return append(b, '\n')
}

// throttleCode is the Pi's throttling now, in three letters: U under-voltage,
// C frequency capped, T throttled, S soft temperature limit; "-" without
// get_throttled, "ok" when clear.
func throttleCode(t *machine.Throttle) string {
	if t == nil {
		return "  -"
	}
	if !t.Now.Any() {
		return " ok"
	}
	c := ""
	for _, f := range []struct {
		on bool
		c  string
	}{{t.Now.UnderVoltage, "U"}, {t.Now.FreqCapped, "C"}, {t.Now.Throttled, "T"}, {t.Now.SoftTempLimit, "S"}} {
		if f.on {
			c += f.c
		}
	}
	return fmt.Sprintf("%3s", c)
}

func appendPct(b []byte, v float64) []byte {
	return appendPad(b, strconv.AppendInt(nil, int64(v+0.5), 10), 3)
}

// appendPad right-aligns v in width columns.
func appendPad(b, v []byte, width int) []byte {
	for i := len(v); i < width; i++ {
		b = append(b, ' ')
	}
	return append(b, v...)
}

// appendHuman writes v in 5 columns with a binary unit, as dstat does:
// "  812", " 4.0k", "  12M", " 3.6G".
func appendHuman(b []byte, v float64) []byte {
	const units = " kMGTP"
	u := 0
	for v >= 999.5 && u < len(units)-1 {
		v /= 1024
		u++
	}
	var num []byte
	switch {
	case u == 0:
		num = strconv.AppendFloat(nil, v, 'f', 0, 64)
	case v < 9.95:
		num = strconv.AppendFloat(nil, v, 'f', 1, 64)
	default:
		num = strconv.AppendFloat(nil, v, 'f', 0, 64)
	}
	if u > 0 {
		num = append(num, units[u])
	}
	return appendPad(b, num, 5)
}

func appendOptHuman(b []byte, v float64, ok bool) []byte {
	if !ok {
		return append(b, "    -"...)
	}
	return appendHuman(b, v)
}

func appendOptU(b []byte, v *uint64) []byte {
	if v == nil {
		return append(b, "    -"...)
	}
	return appendHuman(b, float64(*v))
}

func appendOptF(b []byte, v *float64) []byte {
	if v == nil {
		return append(b, "    -"...)
	}
	return appendHuman(b, *v)
}

func (lw *LineWriter) csvHeader() string {
	h := "time,usr,sys,siq,hiq,idl,wai,stl,disk_read_bps,disk_write_bps,net_rx_bps,net_tx_bps," +
		"mem_used,mem_cached,mem_available,intr_per_s,ctxt_per_s,load1,temp_c,freq_mhz,throttled"
	for _, w := range lw.watches {
		n := csvName(w.String())
		h += "," + n + "_cpu," + n + "_rss"
	}
	return h + "\n"
}

// csvName keeps a process name safe as part of a CSV header.
func csvName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ',' || r == '"' || r == '\n' || r == ' ' {
			return '_'
		}
		return r
	}, s)
}

// appendCSV writes one CSV record; absent figures are empty fields.
func appendCSV(b []byte, s *machine.Sample) []byte {
	b = s.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	f := func(v float64, ok bool, prec int) {
		b = append(b, ',')
		if ok {
			b = strconv.AppendFloat(b, v, 'f', prec, 64)
		}
	}
	c := s.CPU
	for _, v := range []func(machine.CPU) float64{
		func(c machine.CPU) float64 { return c.User }, func(c machine.CPU) float64 { return c.System },
		func(c machine.CPU) float64 { return c.SoftIRQ }, func(c machine.CPU) float64 { return c.IRQ },
		func(c machine.CPU) float64 { return c.Idle }, func(c machine.CPU) float64 { return c.IOWait },
		func(c machine.CPU) float64 { return c.Steal },
	} {
		if c != nil {
			f(v(*c), true, 2)
		} else {
			f(0, false, 0)
		}
	}
	t := totals(s)
	f(t.read, t.disks, 0)
	f(t.write, t.disks, 0)
	f(t.rx, t.nets, 0)
	f(t.tx, t.nets, 0)
	u := func(v *uint64) {
		if v != nil {
			f(float64(*v), true, 0)
		} else {
			f(0, false, 0)
		}
	}
	o := func(v *float64, prec int) {
		if v != nil {
			f(*v, true, prec)
		} else {
			f(0, false, 0)
		}
	}
	if m := s.Mem; m != nil {
		used := m.Used
		u(&used)
		u(m.Cached)
		u(m.Available)
	} else {
		u(nil)
		u(nil)
		u(nil)
	}
	o(s.Interrupts, 0)
	o(s.ContextSwitches, 0)
	if s.Load != nil {
		f(s.Load.Load1, true, 2)
	} else {
		f(0, false, 0)
	}
	hot, hasT := 0.0, len(s.Temps) > 0
	for i, z := range s.Temps {
		if i == 0 || z.Celsius > hot {
			hot = z.Celsius
		}
	}
	f(hot, hasT, 1)
	fq := 0.0
	for _, x := range s.FreqMHz {
		fq = max(fq, x)
	}
	f(fq, len(s.FreqMHz) > 0, 0)
	b = append(b, ',')
	if s.Throttle != nil {
		b = append(b, "0x"...)
		b = strconv.AppendUint(b, uint64(s.Throttle.Raw), 16)
	}
	for _, p := range s.Procs {
		o(p.CPU, 1)
		u(p.RSS)
	}
	return append(b, '\n')
}
