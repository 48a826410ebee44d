package collector

import (
	"context"
	"time"

	"github.com/edgebench/edgebench/collector/store/retention"
	"go.uber.org/zap"
)

// pruneEvery is how often a collector prunes.
const pruneEvery = time.Hour

// DefaultKeepSamples is how long results' per-second samples and
// histograms are kept unless Config.KeepSamples says otherwise.
const DefaultKeepSamples = 30 * 24 * time.Hour

// retention prunes what is older than Config.Keep and the samples older
// than Config.KeepSamples at start and then every pruneEvery, and makes
// the store's tables of the days ahead (PostgreSQL's samples), until the
// collector stops.
func (c *Collector) retention() {
	defer c.wg.Done()
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		start := time.Now()
		if err := storeCall(c.ctx, c.cfg.storeTimeout, func(ctx context.Context) error { return c.store.PrepareDays(ctx, start) }); err != nil &&
			c.ctx.Err() == nil {
			c.log.Error("samples' tables ahead", zap.Error(err))
		}
		r := retentionAt(start, c.cfg.Keep, c.cfg.KeepSamples)
		var p retention.Pruned
		err := storeCall(c.ctx, pruneTimeout, func(ctx context.Context) (err error) {
			p, err = c.store.Retain(ctx, r)
			return err
		})
		switch {
		case err != nil && c.ctx.Err() == nil:
			c.log.Error("prune", zap.Duration("keep", c.cfg.Keep), zap.Duration("keep_samples", c.cfg.KeepSamples), zap.Error(err))
		case p != retention.Pruned{}:
			c.log.Info("pruned", zap.Duration("keep", c.cfg.Keep), zap.Duration("keep_samples", c.cfg.KeepSamples),
				zap.Int64("results", p.Results), zap.Int64("samples", p.Samples), zap.Int64("sample_days", p.SampleDays),
				zap.Int64("legacy_summarized", p.Legacy), zap.Int64("commands", p.Commands), zap.Int64("events", p.Events),
				zap.Int64("schedule_runs", p.ScheduleRuns), zap.Int64("changes", p.Changes), zap.Duration("took", time.Since(start)))
		}
		select {
		case <-t.C:
		case <-c.ctx.Done():
			return
		}
	}
}

// retentionAt is what to prune at now: what is older than keep (nothing
// when it is 0) and the samples older than keepSamples (none when it is
// below 0).
func retentionAt(now time.Time, keep, keepSamples time.Duration) retention.Retention {
	var r retention.Retention
	if keep > 0 {
		r.Results = now.Add(-keep)
	}
	if keepSamples > 0 {
		r.Samples = now.Add(-keepSamples)
	}
	return r
}
