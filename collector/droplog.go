package collector

import (
	"sync"
	"time"

	"go.uber.org/zap"
)

// dropLog is the warnings of the ingest about what it drops or refuses,
// rate-limited and summed: the first of each kind (its message) is logged
// with its details, the others of the next period (every) are counted and
// logged as one line with their number when the period ends. A device
// sending thousands of bad messages writes a line a minute, not one each.
type dropLog struct {
	log   *zap.Logger
	every time.Duration

	mu    sync.Mutex
	kinds map[string]*dropPeriod // by message; the messages are the ingest's own, a few
}

type dropPeriod struct {
	start time.Time
	n     int64 // after the first, this period
	last  []zap.Field
}

func newDropLog(log *zap.Logger, every time.Duration) *dropLog {
	if every <= 0 {
		every = time.Minute
	}
	return &dropLog{log: log, every: every, kinds: map[string]*dropPeriod{}}
}

// note records one message dropped or refused: msg is its kind (a
// constant), fields its details.
func (d *dropLog) note(msg string, fields ...zap.Field) {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.kinds[msg]
	if p != nil && now.Sub(p.start) < d.every {
		p.n++
		p.last = fields
		return
	}
	if p != nil {
		d.summary(msg, p)
	}
	d.kinds[msg] = &dropPeriod{start: now}
	d.log.Warn(msg, fields...)
}

// flush logs the sums of the periods that have ended (all of them when
// final), so that the count of a burst is logged when it stops.
func (d *dropLog) flush(final bool) {
	now := time.Now()
	d.mu.Lock()
	defer d.mu.Unlock()
	for msg, p := range d.kinds {
		if final || now.Sub(p.start) >= d.every {
			d.summary(msg, p)
			delete(d.kinds, msg)
		}
	}
}

func (d *dropLog) summary(msg string, p *dropPeriod) {
	if p.n > 0 {
		d.log.Warn(msg+" again", append([]zap.Field{zap.Int64("times", p.n), zap.Duration("within", d.every)}, p.last...)...)
	}
}
