package cron

import (
	"testing"
	"time"
)

func TestCronNext(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct{ expr, from, want string }{
		{"30 2 * * *", "2026-12-04 09:00", "2026-12-05 02:30"},
		{"30 2 * * *", "2026-12-04 02:29", "2026-12-04 02:30"},
		{"30 2 * * *", "2026-12-04 02:30", "2026-12-05 02:30"}, // strictly after
		{"*/15 * * * *", "2026-12-04 09:07", "2026-12-04 09:15"},
		{"0 */6 * * *", "2026-12-04 19:00", "2026-12-05 00:00"},
		{"0 0 1 * *", "2026-12-04 09:00", "2027-01-01 00:00"},
		{"0 8 * * 1-5", "2026-12-04 09:00", "2026-12-07 08:00"}, // Friday -> Monday
		{"0 8 * * 7", "2026-12-04 09:00", "2026-12-06 08:00"},   // 7 is Sunday
		{"0 0 13 * 5", "2026-12-04 09:00", "2026-12-11 00:00"},  // either the 13th or a Friday
		{"5,10 1 * * *", "2026-12-04 01:05", "2026-12-04 01:10"},
		{"5/15 * * * *", "2026-12-04 09:06", "2026-12-04 09:20"}, // from 5 to 59 by 15: 5, 20, 35, 50
		{"5/15 * * * *", "2026-12-04 09:50", "2026-12-04 10:05"},
		{"0 1-9/4 * * *", "2026-12-04 05:00", "2026-12-04 09:00"}, // 1, 5, 9
		{"0 0 29 2 *", "2026-12-04 09:00", "2028-02-29 00:00"},
	} {
		c, err := Parse(tc.expr)
		if err != nil {
			t.Fatalf("%s: %v", tc.expr, err)
		}
		if got := c.Next(at(tc.from)); !got.Equal(at(tc.want)) {
			t.Errorf("%q after %s: %s, want %s", tc.expr, tc.from, got.Format("2006-01-02 15:04 Mon"), tc.want)
		}
	}
	if c, _ := Parse("0 0 31 2 *"); !c.Next(at("2026-01-01 00:00")).IsZero() {
		t.Error("31 February is never due")
	}
	for _, bad := range []string{"", "* * * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 8", "*/0 * * * *", "5-1 * * * *", "a * * * *"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
