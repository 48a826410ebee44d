package collector

import (
	"net/http"

	"github.com/edgebench/edgebench/collector/web"
)

// What a request to the web port may cost. The pages and API routes
// whose work grows with the stored history (a comparison, the changes of
// every series, a schedule's firings, /metrics) want the API's token when
// it has one (the pages take it as a browser's password too), and run at
// most Config.WebMaxExpensive at once: four parallel /changes?days=365
// over 60 k results held 828 MB and 30 s on main at 588e3ea. /metrics has
// places of its own, so that a crowd at the pages does not fail a scrape.

// defaultWebMaxExpensive is Config.WebMaxExpensive's default.
const defaultWebMaxExpensive = 2

// expensive guards an API route of the expensive kind (the API's token
// is checked before, for all of /api/).
func (c *Collector) expensive(h http.Handler) http.Handler { return c.pages.Wrap(h) }

// expensivePage guards a page of the expensive kind: the API's token,
// then a place.
func (c *Collector) expensivePage(h http.Handler) http.Handler {
	return web.RequirePageToken(c.cfg.APIToken, c.pages.Wrap(h))
}

// scrapes guards /metrics: its own token (or the API's), then a place.
func (c *Collector) scrapes(h http.Handler) http.Handler {
	return web.RequireMetricsToken(c.cfg.MetricsToken, c.cfg.APIToken, c.scrapeSlots.Wrap(h))
}
