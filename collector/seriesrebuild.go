package collector

import (
	"time"

	"github.com/edgebench/edgebench/collector/store/seriesdb"
	"go.uber.org/zap"
)

// rebuildSeries finishes a rebuild of the series' state under way (the
// one a migration starts on a store with results, or one interrupted),
// beside the ingest, which leaves the devices not done yet to it. It
// logs its progress every 10 s and, while the store is unavailable,
// tries again; it stops with the collector.
func (c *Collector) rebuildSeries() {
	defer c.wg.Done()
	start, last := time.Now(), time.Now()
	err := c.whileUnavailable(c.ctx, func() error {
		p, err := c.store.RebuildSeries(c.ctx, seriesdb.RebuildOptions{OnlyPending: true}, func(p seriesdb.RebuildProgress) {
			if time.Since(last) >= 10*time.Second {
				last = time.Now()
				c.log.Info("rebuilding the series from the stored results", zap.Int("devices", p.Devices), zap.Int("results", p.Results))
			}
		})
		if err == nil && p.Devices > 0 {
			c.log.Info("series rebuilt from the stored results", zap.Int("devices", p.Devices), zap.Int("results", p.Results),
				zap.Int("series", p.Series), zap.Int("changes", p.Changes), zap.Duration("took", time.Since(start)))
		}
		return err
	})
	if err != nil && c.ctx.Err() == nil {
		c.log.Error("series rebuild (edgebench-collector rebuild-series finishes it)", zap.Error(err))
	}
}
