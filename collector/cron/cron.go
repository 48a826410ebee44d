package cron

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Expr is a parsed five-field cron expression, "M H DOM MON DOW", read in
// UTC: each field is *, a number, a range a-b, a list a,b,c, or any of
// them with a step /n. As in cron, when both the day of the month and the
// day of the week are restricted, a day matching either one is due.
type Expr struct {
	expr                       string
	min, hour, dom, month, dow uint64 // bit i set: value i is due
	domStar, dowStar           bool
}

// Parse parses a five-field cron expression.
func Parse(expr string) (*Expr, error) {
	f := strings.Fields(expr)
	if len(f) != 5 {
		return nil, fmt.Errorf("cron %q: want five fields 'M H DOM MON DOW', e.g. '30 2 * * *'", expr)
	}
	c := &Expr{expr: strings.Join(f, " ")}
	var err error
	for i, p := range []struct {
		dst    *uint64
		lo, hi int
		name   string
	}{{&c.min, 0, 59, "minute"}, {&c.hour, 0, 23, "hour"}, {&c.dom, 1, 31, "day of month"}, {&c.month, 1, 12, "month"}, {&c.dow, 0, 7, "day of week"}} {
		if *p.dst, err = field(f[i], p.lo, p.hi); err != nil {
			return nil, fmt.Errorf("cron %q: %s: %w", expr, p.name, err)
		}
	}
	if c.dow&(1<<7) != 0 { // 7 is Sunday too
		c.dow |= 1
	}
	c.domStar, c.dowStar = f[2] == "*", f[4] == "*"
	return c, nil
}

func field(s string, lo, hi int) (uint64, error) {
	var bits uint64
	for _, part := range strings.Split(s, ",") {
		rng, stepS, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			n, err := strconv.Atoi(stepS)
			if err != nil || n < 1 {
				return 0, fmt.Errorf("step %q: want a positive number", stepS)
			}
			step = n
		}
		a, b := lo, hi
		switch {
		case rng == "*":
		case strings.Contains(rng, "-"):
			as, bs, _ := strings.Cut(rng, "-")
			var err1, err2 error
			a, err1 = strconv.Atoi(as)
			b, err2 = strconv.Atoi(bs)
			if err1 != nil || err2 != nil || a > b {
				return 0, fmt.Errorf("range %q: want a-b with a <= b", rng)
			}
		default:
			n, err := strconv.Atoi(rng)
			if err != nil {
				return 0, fmt.Errorf("%q: want *, a number, a-b or a list", rng)
			}
			a, b = n, n
			if hasStep {
				b = hi
			}
		}
		if a < lo || b > hi {
			return 0, fmt.Errorf("%q: want values in %d..%d", rng, lo, hi)
		}
		for v := a; v <= b; v += step {
			bits |= 1 << v
		}
	}
	return bits, nil
}

// String is the expression, its fields one space apart.
func (c *Expr) String() string { return c.expr }

func (c *Expr) dayDue(t time.Time) bool {
	dom := c.dom&(1<<t.Day()) != 0
	dow := c.dow&(1<<int(t.Weekday())) != 0
	switch {
	case c.domStar && c.dowStar:
		return true
	case c.domStar:
		return dow
	case c.dowStar:
		return dom
	}
	return dom || dow
}

// Next is the first due minute strictly after t (UTC), or the zero time
// if none falls within five years (e.g. '0 0 31 2 *').
func (c *Expr) Next(t time.Time) time.Time {
	t = t.UTC().Truncate(time.Minute).Add(time.Minute)
	end := t.AddDate(5, 0, 0)
	for t.Before(end) {
		if c.month&(1<<int(t.Month())) == 0 {
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, time.UTC)
			continue
		}
		if !c.dayDue(t) {
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, time.UTC)
			continue
		}
		if c.hour&(1<<t.Hour()) == 0 {
			t = t.Truncate(time.Hour).Add(time.Hour)
			continue
		}
		if c.min&(1<<t.Minute()) == 0 {
			t = t.Add(time.Minute)
			continue
		}
		return t
	}
	return time.Time{}
}
