package probe

import (
	"bytes"
	"fmt"
)

// pidStat is what the probe uses of /proc/PID/stat.
type pidStat struct {
	comm     []byte // aliases the parsed bytes
	ppid     int
	ticks    uint64 // utime + stime in USER_HZ ticks
	rssPages uint64
}

// parsePidStat parses /proc/PID/stat. The command name sits in parentheses
// and may itself hold spaces and parentheses, so the fields are counted from
// the last ')'.
func parsePidStat(b []byte) (pidStat, error) {
	open := bytes.IndexByte(b, '(')
	closing := bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return pidStat{}, fmt.Errorf("pid stat: no command name")
	}
	var f [24][]byte
	// After ')': state(3) ppid(4) ... utime(14) stime(15) ... rss(24).
	fs := splitFields(b[closing+1:], f[:0])
	if len(fs) < 22 {
		return pidStat{}, fmt.Errorf("pid stat: %d fields", len(fs)+2)
	}
	ppid, ok0 := parseUint(fs[1])
	ut, ok1 := parseUint(fs[11])
	st, ok2 := parseUint(fs[12])
	rss, ok3 := parseInt(fs[21])
	if !ok0 || ppid > 1<<31 || !ok1 || !ok2 || !ok3 {
		return pidStat{}, fmt.Errorf("pid stat: bad ppid, utime, stime or rss")
	}
	if rss < 0 {
		rss = 0
	}
	return pidStat{comm: b[open+1 : closing], ppid: int(ppid), ticks: ut + st, rssPages: uint64(rss)}, nil
}
