package collector

import (
	"context"
	"time"

	"github.com/edgebench/edgebench/collector/store"
	"go.uber.org/zap"
)

// pruneEvery is how often a collector with Config.Keep prunes.
const pruneEvery = time.Hour

// retention prunes what is older than Config.Keep at start and then every
// pruneEvery, until the collector stops.
func (c *Collector) retention() {
	defer c.wg.Done()
	t := time.NewTicker(pruneEvery)
	defer t.Stop()
	for {
		start := time.Now()
		var p store.Pruned
		err := storeCall(c.ctx, pruneTimeout, func(ctx context.Context) (err error) {
			p, err = c.store.Prune(ctx, start.Add(-c.cfg.Keep))
			return err
		})
		switch {
		case err != nil && c.ctx.Err() == nil:
			c.log.Error("prune", zap.Duration("keep", c.cfg.Keep), zap.Error(err))
		case p != store.Pruned{}:
			c.log.Info("pruned", zap.Duration("keep", c.cfg.Keep), zap.Int64("results", p.Results), zap.Int64("commands", p.Commands),
				zap.Int64("events", p.Events), zap.Duration("took", time.Since(start)))
		}
		select {
		case <-t.C:
		case <-c.ctx.Done():
			return
		}
	}
}
