package agent

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/edgebench/edgebench/probe"
	"github.com/edgebench/edgebench/wire"
)

// heartbeat publishes the device's vital signs: what it runs and the
// probe's latest sample of the machine.
func (a *Agent) heartbeat(ctx context.Context, p *probe.Probe, start time.Time) {
	hb := &wire.Heartbeat{V: wire.SchemaVersion, At: a.opt.Now().UTC(), UptimeS: int64(a.opt.Now().Sub(start).Seconds())}
	a.mu.Lock()
	if a.cur != nil {
		hb.Busy, hb.CommandID = true, a.cur.cmd.ID
	}
	a.mu.Unlock()
	if s, err := p.Sample(); err == nil {
		if s.CPU != nil {
			v := int32(s.CPU.Busy() * 100)
			hb.CPUBusy = &v
		}
		if s.Load != nil {
			v := int32(s.Load.Load1 * 100)
			hb.Load1 = &v
		}
		if s.Mem != nil {
			u := int64(s.Mem.Used / 1024)
			hb.MemUsedKB = &u
			if s.Mem.Available != nil {
				v := int64(*s.Mem.Available / 1024)
				hb.MemAvail = &v
			}
		}
		for _, t := range s.Temps {
			v := int32(t.Celsius * 10)
			if hb.TempDC == nil || v > *hb.TempDC {
				hb.TempDC = &v
			}
		}
		for _, f := range s.FreqMHz {
			v := int32(f)
			if hb.FreqMHz == nil || v > *hb.FreqMHz {
				hb.FreqMHz = &v
			}
		}
		if s.Throttle != nil {
			v := s.Throttle.Raw
			hb.Throttled = &v
		}
	}
	if err := a.link.PublishHeartbeat(ctx, hb); err != nil {
		a.log.Debug("heartbeat", zap.Error(err))
	}
}
